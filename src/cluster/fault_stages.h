#pragma once

// The processors of the fault centre (fault-pipeline.md §7.3), one pure function each. A stage
// takes the record being processed (a copy of the node's original record, §7.2), the inputs it
// reads, `now`, and — for the stateful ones — its own memory, and reports whether it changed the
// record and when its verdict can next change by itself (`next_due_ms`: a time-based hide that
// runs out). The runtime re-processes the node then; nothing polls.
//
// Device centre order: PublicFault, CustomFilter, UceAccompany, Retry, RecoverInPlace,
// StressTest, PreSeparate, IncrementFault, ManualFault (fault_pipeline.h runs them).
// Switch centre: CustomFilter, Retry, PreSeparate. Node centre: PreSeparate.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/fault_job_index.h"
#include "cluster/fault_types.h"

namespace clusterd::cluster {

// Windows of §7.3 / §10.
inline constexpr int64_t kUceAccompanyWindowMs = 5000;
inline constexpr int64_t kRetryFaultWindowMs = 10000;
inline constexpr int64_t kRetryReportWindowMs = 10000;
inline constexpr int64_t kRetryCompleteWindowMs = 30000;
inline constexpr int64_t kRetryReportForgetMs = 60000;
inline constexpr int64_t kSwitchLinkDownMemoryMs = 180000;
inline constexpr int64_t kRecoverInPlaceWindowMs = 60000;

struct StageResult {
  bool changed = false;
  std::optional<int64_t> next_due_ms;
  void Due(int64_t t) {
    if (!next_due_ms.has_value() || t < *next_due_ms) next_due_ms = t;
  }
  void Merge(const StageResult& o) {
    changed = changed || o.changed;
    if (o.next_due_ms.has_value()) Due(*o.next_due_ms);
  }
};

// ---- 1. PublicFault ----

// A public fault as it applies to one node (§9.4).
struct PublicFaultOnNode {
  std::string key;  // resource + faultId
  std::string code;
  std::string level;
  std::vector<int32_t> device_ids;
  int64_t fault_time_s = 0;
  int64_t added_ms = 0;
  bool operator==(const PublicFaultOnNode&) const = default;
};
// One PublicFault fault per influenced NPU, time in seconds (§7.3 step 1).
StageResult ApplyPublicFaults(DeviceRecord& record, const std::vector<PublicFaultOnNode>& faults);

// ---- 2. CustomFilter ----

// The rules that apply to each NPU of the node (from the job whose pod uses it).
struct CustomFilterInput {
  std::map<std::string, const FaultJobPolicy*> rules_by_npu;  // NPU name -> policy
};
// A fault used by a filtered job is hidden while (now - receive time) <= threshold; a code rule
// is checked before a level rule. Hidden faults are appended to `hidden` (the Fault service
// still shows them to the job).
StageResult ApplyCustomFilter(DeviceRecord& record, const CustomFilterInput& input, int64_t now_ms,
                              std::vector<NpuFault>* hidden);
// The threshold (seconds) a policy gives a (code, level), or nullopt when no rule matches.
std::optional<int64_t> FilterSeconds(const FaultJobPolicy& policy, std::string_view code,
                                     std::string_view level);

// ---- 3. UceAccompany ----

struct UceAccompanyState {
  std::map<std::string, int64_t> uce_time_ms;  // NPU -> latest UCE time
  bool operator==(const UceAccompanyState&) const = default;
};
// AIC/AIV bus faults are held back until 5 s after their own fault time; within 5 s of the NPU's
// UCE time (a UCE fault, or a business-plane UCE report in `business_uce_ms`) they are dropped.
StageResult ApplyUceAccompany(DeviceRecord& record, UceAccompanyState& state,
                              const std::map<std::string, int64_t>& business_uce_ms,
                              int64_t now_ms);

// ---- 4. Retry ----

// A business-plane step-retry report for one NPU (recovery-protocol.md §8.2, §8.3).
struct RetryReport {
  int64_t report_ms = 0;
  int type = 0;                      // 0 UCE, 2 HCCL
  std::optional<int64_t> complete_ms;  // retry completion reported
  bool operator==(const RetryReport&) const = default;
};
struct RetryInput {
  std::set<std::string> retry_npus;             // NPUs used by jobs with retry
  std::map<std::string, RetryReport> reports;   // NPU -> latest report
  std::optional<int64_t> switch_link_down_ms;   // receive time of the node's L2 link-down
  // NPU -> when the recovery controller reported its pod not retryable (recovery-protocol.md
  // §9.8); the faults received at or before that time are no longer retry faults.
  std::map<std::string, int64_t> not_retryable_ms;
};
// UCE / HCCL-retry faults on retry NPUs are deleted while retry is plausible (never when the NPU
// was reported not retryable after the fault arrived); an HCCL fault past that is upgraded to
// RestartBusiness unless a link-down is present, in which case the link-down faults are reported
// in `force_added` (the RelationFault stage takes them in every cycle).
StageResult ApplyRetry(DeviceRecord& record, const RetryInput& input, int64_t now_ms,
                       std::vector<NpuFault>* force_added);
// Whether a UCE/HCCL fault at `fault_time_ms` is still within the retry window (§7.3 step 4).
bool RetryPlausible(int64_t fault_time_ms, const RetryReport* report, int64_t now_ms,
                    int64_t* next_due_ms);

// ---- 5. RecoverInPlace ----

struct RecoverInPlaceNpu {
  std::string job_id;
  int64_t pod_rank = 0;
  std::string pod_uid;
  bool allow_sub_health = false;   // subHealthyStrategy == ignore
  // The business plane asked to report the faults: the pod was reported not retryable after one
  // of its faults arrived (recovery-protocol.md §9.8).
  bool report_requested = false;
  bool rank0_eligible = true;      // pod rank 0 satisfies the same condition
  bool operator==(const RecoverInPlaceNpu&) const = default;
};
struct RecoverInPlaceInput {
  std::map<std::string, RecoverInPlaceNpu> npus;  // NPUs of recover-in-place jobs on the node
};
// A fault hidden because the job restarts in place; re-attached to its fault ranks.
struct InPlaceHidden {
  std::string job_id;
  std::string npu_name;
  std::string code;
  std::string level;
  bool operator==(const InPlaceHidden&) const = default;
};
// Whether the pod owning `npus` can restart in place given `record` (§7.3 step 5): its faults'
// levels are RestartRequest/RestartBusiness/NotHandleFault (and SubHealthFault when allowed),
// and every RestartRequest/RestartBusiness fault is younger than 60 s.
bool PodEligibleForRecoverInPlace(const DeviceRecord& record, const std::set<std::string>& npus,
                                  bool allow_sub_health, int64_t now_ms);
StageResult ApplyRecoverInPlace(DeviceRecord& record, const RecoverInPlaceInput& input,
                                int64_t now_ms, std::vector<InPlaceHidden>* hidden);

// ---- 6. StressTest ----
StageResult ApplyStressTest(DeviceRecord& record, bool node_in_stress_test);

// ---- 7. PreSeparate ----
// `used_npus`: NPU names allocated to pods on the node.
StageResult ApplyPreSeparate(DeviceRecord& record, const std::set<std::string>& used_npus);

// ---- 8. IncrementFault ----

// A new (NPU, code) occurrence for the manual-separation engine (§7.4).
struct FaultOccurrence {
  std::string node;
  std::string npu_name;
  std::string code;
  int64_t received_ms = 0;
  std::string job_id;
  bool operator==(const FaultOccurrence&) const = default;
};
struct IncrementState {
  // (NPU, code) -> (receive time, level) of the previous cycle.
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, std::string>> previous;
  bool operator==(const IncrementState&) const = default;
};
// Occurrences whose (receive time, level) is new since the previous cycle, with a level other
// than NotHandleFault/SubHealthFault, on an NPU used by a job (`job_of_npu`).
std::vector<FaultOccurrence> ApplyIncrementFault(const DeviceRecord& record, IncrementState& state,
                                                 const std::map<std::string, std::string>& job_of_npu);

// ---- 9. ManualFault ----
// One {CardUnhealthy, npu, ManuallySeparateNPU, ""} fault per manually separated NPU.
StageResult ApplyManualFault(DeviceRecord& record, const std::vector<std::string>& manual_npus);

// ---- Switch centre ----

// Switch level order (§1.2.2): Separate > PreSeparate > RestartRequest > SubHealthFault >
// NotHandle; aliases of the custom filter (ResetFault, SeparateFault -> Separate, ...).
int SwitchLevelRank(std::string_view level);  // 4 Separate ... 0 NotHandle, -1 other
std::string SwitchLevelAlias(std::string_view level);
std::string SwitchNodeStatusFor(std::string_view level);

// Hides switch faults matching a filter rule of a job on the node while young; recomputes the
// record's FaultLevel and NodeStatus if anything was hidden.
StageResult ApplySwitchCustomFilter(SwitchRecord& record,
                                    const std::vector<const FaultJobPolicy*>& policies,
                                    int64_t now_ms);
// The Retry stage's memory of the node's L2 link-down (§7.3 step 4): the latest receive time of
// `[0x08520003,na,L2,na]`, kept 180 s.
void UpdateSwitchLinkDownMemory(const SwitchRecord& record, std::optional<int64_t>& memory_ms,
                                int64_t now_ms);
// §7.3 step 7 for a switch record.
StageResult ApplySwitchPreSeparate(SwitchRecord& record, bool any_npu_used);

// ---- Node centre ----
// §7.3 step 7 for a NodeD record (SeparateFault > PreSeparateFault > NotHandleFault).
StageResult ApplyNodePreSeparate(NodeRecord& record, bool any_npu_used);

}  // namespace clusterd::cluster
