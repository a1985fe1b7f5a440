#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "faults/fault_event.h"
#include "model/fault_level.h"
#include "model/upgrade_fault_reason.h"
#include "store/object_store.h"

namespace clusterd::agent {

// Kubernetes Events the Ascend Device Plugin writes (seed 001 Table 6, fault-pipeline.md §1.11).
// Pure builders: the EventRecorder writes what they return.

// Namespace of every event, whatever the reporting pod's own namespace.
inline constexpr std::string_view kEventNamespace = "kube-system";
// Source component, reportingComponent (the original's controller name).
inline constexpr std::string_view kEventReporter = "device-plugin";
// Reason and action of an escalation release event.
inline constexpr std::string_view kReleaseReason = "EventReleaseUpgradeFault";

// Who reports: the pod named as involvedObject and reportingInstance, and its node.
struct EventReporter {
  std::string pod_name;
  std::string pod_namespace = "kube-system";
  std::string node;
  absl::TimeZone zone = absl::LocalTimeZone();  // of alarmRaisedTime in the message
};

// One driver fault event of one NPU, as the event describes it.
struct NpuFaultReport {
  int logic_id = 0;
  int card_id = 0;
  int device_id = 0;
  bool by_logic_id = false;  // A5: the message says logicID instead of cardID / deviceID
  faults::Assertion assertion = faults::Assertion::kOccur;
  std::string fault_code;  // upper-case hex, as the device-info ConfigMap spells it
  model::FaultLevel level = model::FaultLevel::kNotHandleFault;
  int64_t alarm_time_ms = 0;
};

// `<pod>.<reporting time ms><logic id>`, e.g. "npu-agent-x7k2p.17180000000003".
std::string FaultEventName(const std::string& pod, int64_t reported_ms, int logic_id);
// `<pod>.eventreleaseupgradefault.<ms>`: the original's `EventReleaseUpgradeFault` lower-cased,
// since an object name must be a DNS-1123 subdomain (docs/compatibility.md).
std::string ReleaseEventName(const std::string& pod, int64_t reported_ms);

// Occur / Recovery / Notice.
std::string_view EventReasonOf(faults::Assertion assertion);
// `device fault, nodeName:..., assertion:..., cardID:..., deviceID:..., faultCodes:...,
// faultLevelName:..., alarmRaisedTime:YYYY-MM-DD hh:mm:ss`.
std::string FaultEventMessage(const EventReporter& reporter, const NpuFaultReport& report);

// The Event for a fault: type Warning for an occurrence, Normal otherwise.
store::Object FaultEventObject(const EventReporter& reporter, const NpuFaultReport& report,
                               int64_t reported_ms);
// The Normal event for escalation reasons removed together; the message is their
// UpgradeFaultReason JSON.
store::Object ReleaseEventObject(const EventReporter& reporter,
                                 const model::UpgradeFaultReasons& released, int64_t reported_ms);

}  // namespace clusterd::agent
