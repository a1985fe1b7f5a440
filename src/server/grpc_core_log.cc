#include "server/grpc_core_log.h"

#include <mutex>

#include "absl/strings/match.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "grpc/support/log.h"
#include "server/request_limits.h"

namespace clusterd::server {
namespace {

BadInputLog& HandshakeLog() {
  static BadInputLog* log = new BadInputLog(Clock::Real(), 1, 10);
  return *log;
}

void GrpcCoreLog(gpr_log_func_args* args) {
  absl::string_view message = args->message != nullptr ? args->message : "";
  if (IsHandshakeFailureLine(message)) {
    MetricsRegistry::Default()
        .GetCounter("clusterd_grpc_tls_handshake_failures_total",
                    "TLS handshakes on the gRPC TLS port that failed (not TLS, bad or "
                    "untrusted client certificate, ...).")
        .Increment();
    if (int64_t suppressed = 0; HandshakeLog().Admit(&suppressed)) {
      LogWarn("grpc", "TLS handshake refused", {{"error", message}, {"suppressed", suppressed}});
    }
    return;
  }
  if (args->severity == GPR_LOG_SEVERITY_ERROR) {
    LogWarn("grpc", "grpc core",
            {{"message", message},
             {"file", args->file != nullptr ? args->file : ""},
             {"line", args->line}});
  } else {
    LogInfo("grpc", "grpc core",
            {{"message", message},
             {"file", args->file != nullptr ? args->file : ""},
             {"line", args->line}});
  }
}

}  // namespace

bool IsHandshakeFailureLine(absl::string_view message) {
  return absl::StrContains(message, "Handshake failed") ||
         absl::StrContains(message, "handshake failed");
}

void RouteGrpcCoreLogs() {
  static std::once_flag once;
  std::call_once(once, [] { gpr_set_log_function(&GrpcCoreLog); });
}

}  // namespace clusterd::server
