#include "agent/kube_event.h"

#include "absl/strings/str_cat.h"

namespace clusterd::agent {
namespace {

// metadata / firstTimestamp / lastTimestamp are seconds (Kubernetes `Time`); eventTime is
// microseconds (`MicroTime`), as the API server returns them.
std::string KubeTime(int64_t ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}
std::string KubeMicroTime(int64_t ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

store::Object BaseEvent(const EventReporter& reporter, std::string name, std::string_view type,
                        std::string_view reason, std::string_view action, std::string message,
                        int64_t reported_ms) {
  const std::string at = KubeTime(reported_ms);
  return store::Object{
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", std::move(name)}, {"namespace", kEventNamespace}}},
      {"involvedObject",
       {{"kind", "Pod"}, {"namespace", reporter.pod_namespace}, {"name", reporter.pod_name}}},
      {"reason", reason},
      {"message", std::move(message)},
      {"source", {{"component", kEventReporter}, {"host", reporter.node}}},
      {"firstTimestamp", at},
      {"lastTimestamp", at},
      {"count", 1},
      {"type", type},
      {"eventTime", KubeMicroTime(reported_ms)},
      {"action", action},
      {"reportingComponent", kEventReporter},
      {"reportingInstance", reporter.pod_name}};
}

}  // namespace

std::string FaultEventName(const std::string& pod, int64_t reported_ms, int logic_id) {
  return absl::StrCat(pod, ".", reported_ms, logic_id);
}

std::string ReleaseEventName(const std::string& pod, int64_t reported_ms) {
  return absl::StrCat(pod, ".eventreleaseupgradefault.", reported_ms);
}

std::string_view EventReasonOf(faults::Assertion assertion) {
  switch (assertion) {
    case faults::Assertion::kOccur:
      return "Occur";
    case faults::Assertion::kRecover:
      return "Recovery";
    case faults::Assertion::kOnce:
      return "Notice";
  }
  return "Occur";
}

std::string FaultEventMessage(const EventReporter& reporter, const NpuFaultReport& report) {
  const std::string where =
      report.by_logic_id ? absl::StrCat("logicID:", report.logic_id)
                         : absl::StrCat("cardID:", report.card_id, ", deviceID:", report.device_id);
  return absl::StrCat("device fault, nodeName:", reporter.node,
                      ", assertion:", std::string(EventReasonOf(report.assertion)), ", ", where,
                      ", faultCodes:", report.fault_code,
                      ", faultLevelName:", std::string(model::FaultLevelName(report.level)),
                      ", alarmRaisedTime:",
                      absl::FormatTime("%Y-%m-%d %H:%M:%S",
                                       absl::FromUnixMillis(report.alarm_time_ms), reporter.zone));
}

store::Object FaultEventObject(const EventReporter& reporter, const NpuFaultReport& report,
                               int64_t reported_ms) {
  return BaseEvent(reporter, FaultEventName(reporter.pod_name, reported_ms, report.logic_id),
                   report.assertion == faults::Assertion::kOccur ? "Warning" : "Normal",
                   EventReasonOf(report.assertion), model::FaultLevelName(report.level),
                   FaultEventMessage(reporter, report), reported_ms);
}

store::Object ReleaseEventObject(const EventReporter& reporter,
                                 const model::UpgradeFaultReasons& released, int64_t reported_ms) {
  return BaseEvent(reporter, ReleaseEventName(reporter.pod_name, reported_ms), "Normal",
                   kReleaseReason, kReleaseReason, model::RenderUpgradeFaultReasons(released),
                   reported_ms);
}

}  // namespace clusterd::agent
