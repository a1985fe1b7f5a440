#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "server/connection_limits.h"

namespace clusterd::server {

class GrpcListener;

// Transport settings of the original server (recovery-protocol.md §1.2–1.3).
struct GrpcServerOptions {
  int max_receive_message_bytes = 4 * 1024 * 1024;
  int max_send_message_bytes = 8 * 1024 * 1024;
  int max_concurrent_streams = 64;
  int keepalive_time_ms = 60000;
  int keepalive_timeout_ms = 5000;
  // Real Python clients ping every 3 s, with or without calls in flight. gRPC core's default
  // (5 min, no pings without calls) would answer them with GOAWAY "too_many_pings".
  int min_recv_ping_interval_without_data_ms = 1000;
  // Concurrent TCP connections in total (over every port) and per client IP (§1.2: 1024 /
  // 512); a connection over either is closed at once with linger 0 (grpc_listener.h).
  size_t max_connections = 1024;
  size_t max_connections_per_client = 512;
  // Serve plaintext on the address given to Start (the original clients speak only
  // plaintext). False serves TLS only (then `tls` must be set).
  bool plaintext = true;
  // A TLS port beside (or instead of) the plaintext one.
  struct Tls {
    std::string listen;          // "host:port"; port 0 picks a free port
    std::string cert_file;       // PEM certificate chain
    std::string key_file;        // PEM private key
    std::string client_ca_file;  // non-empty: clients must present a certificate it signed
    // How often the files are checked for changes (certificate rotation without a restart).
    unsigned refresh_interval_s = 10;
  };
  std::optional<Tls> tls;
};

// One gRPC server hosting every service on a plaintext port, a TLS port, or both. clusterd
// accepts the connections itself (grpc_listener.h) to enforce the connection limits.
class GrpcServer {
 public:
  // `listen` is "host:port" or "[v6]:port" (the plaintext port; ignored when
  // options.plaintext is false); port 0 picks a free port.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      absl::string_view listen, const std::vector<grpc::Service*>& services,
      const GrpcServerOptions& options = {});
  ~GrpcServer();

  // "host:port" actually bound (with the real port when 0 was asked for): the plaintext port,
  // or the TLS port when plaintext is off.
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // The TLS port ("" / 0 without TLS).
  const std::string& tls_address() const { return tls_address_; }
  int tls_port() const { return tls_port_; }

  // Stops accepting calls and waits up to `grace` for calls in flight, then cancels them.
  void Shutdown(absl::Duration grace);

 private:
  GrpcServer() = default;

  // Declared first, destroyed last: the listeners give connections back to it.
  std::unique_ptr<ConnectionLimits> limits_;
  std::vector<std::unique_ptr<GrpcListener>> listeners_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_ = 0;
  std::string tls_address_;
  int tls_port_ = 0;
  bool shut_down_ = false;
};

// Splits "host:port" / "[v6]:port" into host and port, validating both.
struct HostPort {
  std::string host;  // without brackets
  int port = 0;
  std::string ToString() const;  // re-brackets IPv6 hosts
};
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);

}  // namespace clusterd::server
