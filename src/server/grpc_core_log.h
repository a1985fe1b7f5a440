#pragma once

#include "absl/strings/string_view.h"

namespace clusterd::server {

// Sends gRPC core's own log lines (ERROR by default) to our log instead of stderr. A failed
// TLS handshake (garbage on the TLS port, a client certificate from another CA) is one such
// line per connection: those are counted in clusterd_grpc_tls_handshake_failures_total and
// their lines rate-limited (at most 10 at once, then one per second, with `suppressed=<n>`),
// so a flood of bad handshakes cannot flood the log. Other lines pass through as warnings.
// Idempotent; call before the gRPC server starts.
void RouteGrpcCoreLogs();

// True for a gRPC core log line that reports a failed TLS handshake.
bool IsHandshakeFailureLine(absl::string_view message);

}  // namespace clusterd::server
