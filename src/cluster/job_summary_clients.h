#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/rate_limiter.h"

namespace clusterd::cluster {

// The client table of the Job service (jobs-ranktable-diagnosis.md §3.1): registration with a
// role whitelist and a client limit, subscription checks (registered client, matching role, at
// most N subscribed clients per role, a subscribe rate limit), and deregistration when a client's
// last stream ends. The streams themselves live in the server (StreamHub); this class only
// decides. Thread-safe.
class JobSummaryClients {
 public:
  struct Limits {
    size_t max_clients = 100000;
    size_t max_subscribed_per_role = 20;
    double subscribe_rate = 20;
    int64_t subscribe_burst = 20;
  };

  // Codes and texts of the original.
  static constexpr int32_t kCodeOk = 200;
  static constexpr int32_t kCodeBadRole = 400;
  static constexpr int32_t kCodeTooManyClients = 429;

  struct Registration {
    int32_t code = kCodeOk;
    std::string info;
    std::string client_id;   // set on success
    bool rpc_error = false;  // the original also fails the call (the body is then discarded)
  };

  JobSummaryClients(Clock& clock, Limits limits);
  explicit JobSummaryClients(Clock& clock) : JobSummaryClients(clock, Limits{}) {}

  static bool RoleAllowed(std::string_view role);

  Registration Register(std::string_view role);
  // Admits a subscription of `client_id` and makes the new stream its current one; returns the
  // stream id. Errors (all FailedPrecondition / ResourceExhausted with the original's texts):
  // rate limited, unknown client id, role mismatch, too many subscribed clients for the role.
  absl::StatusOr<uint64_t> BeginStream(std::string_view client_id, std::string_view role);
  // A stream ended. True if it was the client's current stream: the client is then deregistered
  // (it must Register again).
  bool EndStream(std::string_view client_id, uint64_t stream_id);

  size_t size() const;
  bool Registered(std::string_view client_id) const;

 private:
  struct Client {
    std::string role;
    uint64_t current_stream = 0;  // 0: not subscribed
  };

  const Limits limits_;
  TokenBucket subscribe_bucket_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Client> clients_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> subscribed_per_role_ ABSL_GUARDED_BY(mu_);
  uint64_t next_stream_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace clusterd::cluster
