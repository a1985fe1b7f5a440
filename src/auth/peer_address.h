#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clusterd::auth {

// The caller's address as gRPC reports it (ServerContext::peer()): "ipv4:10.1.2.3:5000",
// "ipv6:[fe80::1]:5000" (newer gRPC percent-encodes the brackets: "ipv6:%5B::1%5D:5000"),
// or "unix:/path". `ip` is the bare address (IPv4-mapped IPv6 addresses as IPv4), the key of
// the pod-IP index.
struct PeerAddress {
  std::string ip;         // "" for unix sockets
  bool loopback = false;  // 127.0.0.0/8, ::1, or a unix socket (same host)
};

absl::StatusOr<PeerAddress> ParsePeerAddress(absl::string_view peer);

// Normalises an IP as written in a pod's status.podIP (IPv4-mapped IPv6 to IPv4, lower case).
std::string NormaliseIp(absl::string_view ip);

}  // namespace clusterd::auth
