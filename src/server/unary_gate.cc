#include "server/unary_gate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace clusterd::server {

UnaryGate::Pool::Pool(Clock& clock, double rate, int64_t burst, double share, double reserve_share,
                      size_t max_callers)
    : bucket(rate, burst, clock),
      reserve(static_cast<double>(burst) * std::clamp(reserve_share, 0.0, 1.0)),
      callers(clock, {.rate_per_second = rate * std::clamp(share, 0.0, 1.0),
                      .burst = std::max<int64_t>(
                          1, static_cast<int64_t>(std::ceil(burst * std::clamp(share, 0.0, 1.0)))),
                      .max_callers = max_callers}) {}

UnaryGate::UnaryGate(Clock& clock, Limits limits)
    : health_(clock, limits.health_rate, limits.health_burst, limits.caller_share,
              limits.reserve_share, limits.max_callers),
      shared_(clock, limits.shared_rate, limits.shared_burst, limits.caller_share,
              limits.reserve_share, limits.max_callers),
      rejected_(MetricsRegistry::Default().GetCounter("clusterd_grpc_qps_rejected_total",
                                                      "Unary calls refused by the QPS limiter.")),
      rejected_caller_(MetricsRegistry::Default().GetCounter(
          "clusterd_grpc_qps_caller_rejected_total",
          "Unary calls refused because their caller used up its share of the QPS limit (also "
          "counted in clusterd_grpc_qps_rejected_total).")) {}

absl::Status UnaryGate::Admit(absl::string_view full_method, absl::string_view peer) {
  Pool& pool = full_method == kHealthCheckMethod ? health_ : shared_;
  if (pool.callers.TryAcquire(CallerOfPeer(peer))) {
    if (pool.bucket.TryAcquire()) return absl::OkStatus();
  } else if (pool.bucket.Available() >= pool.reserve + 1 && pool.bucket.TryAcquire()) {
    // Past its share, a caller may still borrow from the shared bucket while that holds more
    // than the reserve: a lone caller gets the original's full limit, and the reserve is left
    // for the others. (Two borrowers racing may dip a token or two into it.)
    return absl::OkStatus();
  } else {
    rejected_caller_.Increment();
  }
  rejected_.Increment();
  return absl::UnknownError(absl::StrCat("qps exceeded, method=", full_method));
}

}  // namespace clusterd::server
