#include "auth/peer_address.h"

#include <arpa/inet.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace clusterd::auth {

namespace {

bool IsLoopbackIp(const std::string& ip) {
  in_addr v4;
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, ip.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace

std::string NormaliseIp(absl::string_view ip) {
  std::string s = absl::AsciiStrToLower(ip);
  if (absl::StartsWith(s, "::ffff:") && s.find('.') != std::string::npos) s = s.substr(7);
  return s;
}

absl::StatusOr<PeerAddress> ParsePeerAddress(absl::string_view peer) {
  if (absl::StartsWith(peer, "unix:") || absl::StartsWith(peer, "unix-abstract:")) {
    return PeerAddress{"", true};
  }
  std::string host;
  if (absl::StartsWith(peer, "ipv4:")) {
    absl::string_view rest = peer.substr(5);
    size_t colon = rest.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("peer \"", peer, "\" has no port"));
    }
    host = std::string(rest.substr(0, colon));
    in_addr v4;
    if (inet_pton(AF_INET, host.c_str(), &v4) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("peer \"", peer, "\" is not an IPv4 address"));
    }
  } else if (absl::StartsWith(peer, "ipv6:")) {
    std::string rest = absl::StrReplaceAll(
        peer.substr(5), {{"%5B", "["}, {"%5D", "]"}, {"%5b", "["}, {"%5d", "]"}});
    size_t close = rest.find(']');
    if (rest.empty() || rest[0] != '[' || close == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("peer \"", peer, "\" is not [ipv6]:port"));
    }
    host = rest.substr(1, close - 1);
    if (size_t zone = host.find('%'); zone != std::string::npos) host.resize(zone);
    in6_addr v6;
    if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("peer \"", peer, "\" is not an IPv6 address"));
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("peer \"", peer, "\" is not ipv4:, ipv6: or unix:"));
  }
  PeerAddress out;
  out.ip = NormaliseIp(host);
  out.loopback = IsLoopbackIp(out.ip);
  return out;
}

}  // namespace clusterd::auth
