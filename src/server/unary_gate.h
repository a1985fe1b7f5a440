#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/rate_limiter.h"
#include "server/method_names.h"

namespace clusterd::server {

// The unary QPS limits of the original server (recovery-protocol.md §1.2): HealthCheck has a
// bucket of its own (10 000/s, burst 10 000); every other unary method of every service
// shares one bucket (1 000/s, burst 1 000). Streaming RPCs are not limited here.
class UnaryGate {
 public:
  struct Limits {
    double health_rate = 10000;
    int64_t health_burst = 10000;
    double shared_rate = 1000;
    int64_t shared_burst = 1000;
  };
  UnaryGate(Clock& clock, Limits limits);
  explicit UnaryGate(Clock& clock) : UnaryGate(clock, Limits{}) {}

  // OK, or the exact error the original returns: UNKNOWN "qps exceeded, method=<full method>".
  absl::Status Admit(absl::string_view full_method);

 private:
  TokenBucket health_;
  TokenBucket shared_;
  Counter& rejected_;
};

inline constexpr absl::string_view kHealthCheckMethod = method::kRecoverHealthCheck;

}  // namespace clusterd::server
