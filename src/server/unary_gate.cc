#include "server/unary_gate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace clusterd::server {

UnaryGate::Pool::Pool(Clock& clock, double rate, int64_t burst, double share, size_t max_callers)
    : bucket(rate, burst, clock),
      callers(clock, {.rate_per_second = rate * std::clamp(share, 0.0, 1.0),
                      .burst = std::max<int64_t>(
                          1, static_cast<int64_t>(std::ceil(burst * std::clamp(share, 0.0, 1.0)))),
                      .max_callers = max_callers}) {}

UnaryGate::UnaryGate(Clock& clock, Limits limits)
    : health_(clock, limits.health_rate, limits.health_burst, limits.caller_share,
              limits.max_callers),
      shared_(clock, limits.shared_rate, limits.shared_burst, limits.caller_share,
              limits.max_callers),
      rejected_(MetricsRegistry::Default().GetCounter("clusterd_grpc_qps_rejected_total",
                                                      "Unary calls refused by the QPS limiter.")),
      rejected_caller_(MetricsRegistry::Default().GetCounter(
          "clusterd_grpc_qps_caller_rejected_total",
          "Unary calls refused because their caller used up its share of the QPS limit (also "
          "counted in clusterd_grpc_qps_rejected_total).")) {}

absl::Status UnaryGate::Admit(absl::string_view full_method, absl::string_view peer) {
  Pool& pool = full_method == kHealthCheckMethod ? health_ : shared_;
  // The caller's own bucket first: a flooding caller's refused calls must not drain the
  // shared bucket.
  if (!pool.callers.TryAcquire(CallerOfPeer(peer))) {
    rejected_caller_.Increment();
  } else if (pool.bucket.TryAcquire()) {
    return absl::OkStatus();
  }
  rejected_.Increment();
  return absl::UnknownError(absl::StrCat("qps exceeded, method=", full_method));
}

}  // namespace clusterd::server
