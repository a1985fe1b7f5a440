#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_builder.h"
#include "server/connection_limits.h"

namespace clusterd::server {

struct HostPort;

// A listening socket that clusterd accepts on itself, so that it can enforce the connection
// limits of the original (connection_limits.h), which gRPC C++ 1.51 has no option for. Each
// connection within the limits is handed to the gRPC server through an
// ExternalConnectionAcceptor (plaintext or TLS, whatever credentials the acceptor was made
// with; gRPC still reads the peer address from the socket, so ServerContext::peer() is the
// client's). A connection over a limit is closed at once with linger 0 (an RST, as the
// original does), counted in clusterd_grpc_connections_refused_total{reason} and logged
// (rate-limited).
//
// To learn when gRPC closes a connection, the listener keeps a duplicate of each socket in an
// epoll set without read interest: gRPC shuts a socket down (both directions) before closing
// it, which the duplicate sees as EPOLLHUP; the listener then closes the duplicate and gives
// the connection back to the limits. One thread per listener; no thread per connection.
class GrpcListener {
 public:
  // Binds and listens on `at` (port 0 picks a free port); `name` ("plaintext", "tls") labels
  // metrics and logs.
  static absl::StatusOr<std::unique_ptr<GrpcListener>> Bind(const HostPort& at,
                                                            ConnectionLimits& limits,
                                                            std::string name);
  ~GrpcListener();

  int port() const { return port_; }
  const std::string& name() const { return name_; }

  // Starts accepting; connections that arrived before wait in the backlog. Call once, after
  // the gRPC server that made `acceptor` has started.
  void Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor);

  // Stops accepting new connections (closes the listening socket); connections already handed
  // to gRPC are watched until the destructor.
  void StopAccepting();

  // Connections of this listener open now.
  size_t open_connections();

 private:
  GrpcListener(int listen_fd, int epoll_fd, int wake_fd, int port, ConnectionLimits& limits,
               std::string name);
  void Run();
  void AcceptAll();
  void Closed(int watch_fd);

  int listen_fd_;
  const int epoll_fd_;
  const int wake_fd_;
  const int port_;
  ConnectionLimits& limits_;
  const std::string name_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::thread thread_;

  absl::Mutex mu_;
  // Duplicate fd -> client address of each connection handed to gRPC.
  absl::flat_hash_map<int, std::string> watched_ ABSL_GUARDED_BY(mu_);
  bool stop_accepting_ ABSL_GUARDED_BY(mu_) = false;
  bool listen_paused_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace clusterd::server
