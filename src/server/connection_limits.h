#pragma once

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace clusterd::server {

// The TCP connection limits of the original server (recovery-protocol.md §1.2): at most 1024
// concurrent connections in total and 512 per client IP; a connection over either limit is
// closed at once. Pure counting, used by the gRPC listener (grpc_listener.h). Thread-safe.
class ConnectionLimits {
 public:
  struct Limits {
    size_t max_total = 1024;
    size_t max_per_client = 512;
  };
  explicit ConnectionLimits(Limits limits) : limits_(limits) {}

  // Why a connection was refused; also the `reason` label of
  // clusterd_grpc_connections_refused_total.
  enum class Verdict { kAdmitted, kTotal, kPerClient };
  static absl::string_view ReasonOf(Verdict v);

  // Counts a new connection from `client` (an IP address) if both limits allow it.
  Verdict TryAdmit(absl::string_view client);
  // The connection of an admitted `client` closed.
  void Release(absl::string_view client);

  size_t total();
  size_t of(absl::string_view client);
  size_t clients();

 private:
  const Limits limits_;
  absl::Mutex mu_;
  size_t total_ ABSL_GUARDED_BY(mu_) = 0;
  // Only clients with at least one open connection: the table is bounded by max_total.
  absl::flat_hash_map<std::string, size_t> per_client_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::server
