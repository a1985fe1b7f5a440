#include "auth/audit.h"

#include <string>

#include "common/log.h"
#include "common/metrics.h"

namespace clusterd::auth {

void Audit(absl::string_view method, const Principal& who, absl::string_view peer,
           absl::string_view target, absl::string_view result, absl::string_view detail) {
  LogInfo("audit", "call",
          {{"audit", "true"},
           {"method", method},
           {"user", who.name},
           {"authn", AuthMethodName(who.method)},
           {"peer", peer},
           {"target", target},
           {"result", result},
           {"detail", detail}});
  MetricsRegistry::Default()
      .GetCounter("clusterd_audit_events_total", "Audited (mutating) calls, by method and result.",
                  {{"method", std::string(method)}, {"result", std::string(result)}})
      .Increment();
}

}  // namespace clusterd::auth
