#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/rate_limiter.h"
#include "server/caller_buckets.h"
#include "server/method_names.h"

namespace clusterd::server {

// The unary QPS limits of the original server (recovery-protocol.md §1.2): HealthCheck has a
// bucket of its own (10 000/s, burst 10 000); every other unary method of every service
// shares one bucket (1 000/s, burst 1 000). Streaming RPCs are not limited here.
//
// Beyond the original: each caller (client address) also has a bucket of its own per pool,
// a `caller_share` of the pool's rate and burst (half by default). A call within its caller's
// share needs a token of both; a call past it may only borrow from the pool while the pool
// holds more than its reserve (a quarter of the burst). A lone caller thus keeps the original's
// rate (1000/s) with a burst of 750 instead of 1000, while one caller flooding SendPublicFault
// cannot empty the pool below the reserve, and another job's Init still gets through; the original
// let one flood refuse everyone.
class UnaryGate {
 public:
  struct Limits {
    double health_rate = 10000;
    int64_t health_burst = 10000;
    double shared_rate = 1000;
    int64_t shared_burst = 1000;
    // Fraction of a pool one caller may use; 1 turns the per-caller buckets off in effect.
    double caller_share = 0.5;
    // Fraction of a pool's burst a caller past its own share cannot borrow: left for the others.
    double reserve_share = 0.25;
    // Callers tracked per pool (memory bound; idle callers are dropped first).
    size_t max_callers = 4096;
  };
  UnaryGate(Clock& clock, Limits limits);
  explicit UnaryGate(Clock& clock) : UnaryGate(clock, Limits{}) {}

  // OK, or the exact error the original returns: UNKNOWN "qps exceeded, method=<full method>"
  // (the same text whether the caller's bucket or the shared one was empty). `peer` is
  // grpc::ServerContext::peer() ("ipv4:10.0.0.7:51234"); its address names the caller.
  absl::Status Admit(absl::string_view full_method, absl::string_view peer);

 private:
  struct Pool {
    Pool(Clock& clock, double rate, int64_t burst, double share, double reserve_share,
         size_t max_callers);
    TokenBucket bucket;
    // Tokens of `bucket` a caller past its own share cannot borrow: burst x reserve_share.
    double reserve;
    CallerBuckets callers;
  };

  Pool health_;
  Pool shared_;
  Counter& rejected_;
  Counter& rejected_caller_;
};

inline constexpr absl::string_view kHealthCheckMethod = method::kRecoverHealthCheck;

}  // namespace clusterd::server
