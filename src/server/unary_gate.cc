#include "absl/strings/string_view.h"
#include "server/unary_gate.h"

#include "absl/strings/str_cat.h"

namespace clusterd::server {

UnaryGate::UnaryGate(Clock& clock, Limits limits)
    : health_(limits.health_rate, limits.health_burst, clock),
      shared_(limits.shared_rate, limits.shared_burst, clock),
      rejected_(MetricsRegistry::Default().GetCounter(
          "clusterd_grpc_qps_rejected_total", "Unary calls refused by the QPS limiter.")) {}

absl::Status UnaryGate::Admit(absl::string_view full_method) {
  TokenBucket& bucket = full_method == kHealthCheckMethod ? health_ : shared_;
  if (bucket.TryAcquire()) return absl::OkStatus();
  rejected_.Increment();
  return absl::UnknownError(absl::StrCat("qps exceeded, method=", full_method));
}

}  // namespace clusterd::server
