#pragma once

#include "absl/strings/string_view.h"
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace clusterd::server {

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
};

// One gRPC server hosting every service on one port.
class GrpcServer {
 public:
  // `listen` is "host:port" or "[v6]:port"; port 0 picks a free port.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(absl::string_view listen,
                                                           const std::vector<grpc::Service*>& services,
                                                           const GrpcServerOptions& options = {});
  ~GrpcServer();

  // "host:port" actually bound (with the real port when 0 was asked for).
  const std::string& address() const { return address_; }
  int port() const { return port_; }

  // Stops accepting calls and waits up to `grace` for calls in flight, then cancels them.
  void Shutdown(absl::Duration grace);

 private:
  GrpcServer(std::unique_ptr<grpc::Server> server, std::string address, int port)
      : server_(std::move(server)), address_(std::move(address)), port_(port) {}

  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_;
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
