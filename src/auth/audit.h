#pragma once

#include "absl/strings/string_view.h"
#include "auth/principal.h"

namespace clusterd::auth {

// One mutating call: a structured log line with audit=true (who, how authenticated, from where,
// which method, for what, the result and its detail), counted in
// clusterd_audit_events_total{method,result}. `result`: "ok", "refused" (the protocol's own
// non-zero code) or "denied" (authentication or authorisation).
void Audit(absl::string_view method, const Principal& who, absl::string_view peer,
           absl::string_view target, absl::string_view result, absl::string_view detail = "");

}  // namespace clusterd::auth
