#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "faults/chip_profile.h"
#include "faults/fault_event.h"
#include "faults/fault_policy.h"
#include "faults/npu_fault_state.h"
#include "model/upgrade_fault_reason.h"

namespace clusterd::faults {

struct DeviceEngineOptions {
  ChipProfile profile;
  std::vector<int> npu_ids;      // physical ids, in enumeration (logic id) order
  bool grace_tolerance = false;  // FreeRestartNPU stays healthy on an NPU in use (§3.4)
};

// An escalation reason that was removed (release by time, by the operator, or autofill
// expiry); the agent logs it and emits the EventReleaseUpgradeFault event.
struct ReleasedReason {
  std::string npu_name;
  model::UpgradeFaultReason reason;
};

struct CycleStats {
  int events_applied = 0;
  int events_ignored = 0;       // 0x8C2FA009 "reset finished"
  int events_dropped = 0;       // network codes on a chip without a parameter plane
  int bus_events_filtered = 0;  // AIC/AIV events absorbed by the 80E01801 rule
};

struct CycleResult {
  std::vector<ReleasedReason> released;
  CycleStats stats;
};

// The node-side NPU fault policy engine (fault-pipeline.md §3–§6): driver events in, per-NPU
// levels, health, escalation reasons and the ManuallySeparateNPU set out. Pure: no I/O, no
// threads, no clock; every method that depends on time takes `now_ms` (Unix ms). Not
// thread-safe; the agent owns it on one thread.
//
// A cycle (§5.4) is RunCycle: it applies the events submitted since the previous cycle, runs
// the duration and frequency algorithms and computes levels and health. Its results stay
// readable (npus(), ManuallySeparatedNames(), Reasons()) until the next cycle, which first
// drops what was meant to be reported once (notices, in-cycle blips).
class DeviceFaultEngine {
 public:
  DeviceFaultEngine(DeviceEngineOptions options, FaultPolicyPtr policy, int64_t start_ms);

  // Queues an event for the next cycle. False (and nothing queued) for an unknown NPU.
  bool Submit(const NpuFaultEvent& event);
  CycleResult RunCycle(int64_t now_ms);

  // Earliest time a cycle without new events would change the results (duration timeouts
  // and recoveries, release windows, held bus events, once-only codes to drop); nullopt when
  // only a new event can. A value <= now means "run a cycle now".
  std::optional<int64_t> NextDeadlineMs() const;

  // Operator policy reload (§5.5 "Configuration change"): reasons of codes no longer
  // configured are removed, changed handling updates their level, trackers of unconfigured
  // codes are dropped; the ManuallySeparateNPU set is not touched.
  void SetPolicy(FaultPolicyPtr policy);
  void SetNpusInUse(absl::flat_hash_set<int> npu_ids);
  const absl::flat_hash_set<int>& npus_in_use() const { return in_use_; }
  // Graceful tolerance (§3.4, §3.6): an NPU in a hot-reset ring, or isolated after a failed
  // reset. False for an unknown NPU.
  bool SetResetting(int npu_id, bool resetting);
  bool SetForcedIsolation(int npu_id, bool isolate);

  // The `ManuallySeparateNPU` field as the ConfigMap holds it now. An NPU that was written
  // there and is now missing was released by the operator: it leaves the set and loses its
  // ManuallySeparateNPU reasons. Names added by hand are ignored. Apply before RunCycle.
  std::vector<ReleasedReason> ApplyPublishedManualList(const std::vector<std::string>& names);
  // After a successful write of `names` as the ManuallySeparateNPU field.
  void MarkPublished(const std::vector<std::string>& names);
  // Agent start: the field and UpgradeFaultReason found in the existing ConfigMap (§5.5).
  void Restore(const std::vector<std::string>& manual_names,
               const model::UpgradeFaultReasons& reasons, int64_t now_ms);

  const std::vector<NpuFaultState>& npus() const { return npus_; }
  const FaultPolicy& policy() const { return *policy_; }
  const ChipProfile& profile() const { return options_.profile; }
  // Names in the ManuallySeparateNPU set, by logic id.
  std::vector<std::string> ManuallySeparatedNames() const;
  model::UpgradeFaultReasons Reasons() const;
  model::UpgradeFaultReason ToModel(const EscalationReason& reason) const;
  // The level of one current code on its own (§3.2 step 2-3 on {code}; §3.3 for network).
  model::FaultLevel CodeLevel(const NpuFaultState& npu, Plane plane, FaultCode code) const;
  bool InUse(int npu_id) const { return in_use_.contains(npu_id); }

 private:
  NpuFaultState* FindNpu(int id);

 public:
  const NpuFaultState* Npu(int id) const;

 private:
  NpuFaultState* FindNpu(std::string_view name);
  void StartCycle(NpuFaultState& npu);
  void ApplyHbmRule(NpuFaultState& npu, int64_t now_ms, CycleStats& stats);
  void ApplyEvents(NpuFaultState& npu, int64_t now_ms, CycleStats& stats);
  void AccountDurations(NpuFaultState& npu, int64_t now_ms);
  void EvaluateFrequencies(NpuFaultState& npu, int64_t now_ms, CycleResult& result);
  void ReleaseAutofill(NpuFaultState& npu, int64_t now_ms, CycleResult& result);
  void ComputeLevels(NpuFaultState& npu);
  void UpsertReason(NpuFaultState& npu, const EscalationReason& reason);
  bool RemoveReason(NpuFaultState& npu, FaultCode code, UpgradeType type, CycleResult* result);
  void LeaveManualIfUnsupported(NpuFaultState& npu);
  std::optional<int64_t> NpuDeadlineMs(const NpuFaultState& npu) const;
  void MarkAllDirty();

  DeviceEngineOptions options_;
  FaultPolicyPtr policy_;
  int64_t start_ms_;
  int64_t last_cycle_ms_;
  std::vector<NpuFaultState> npus_;
  absl::flat_hash_set<int> in_use_;
  // Per-cycle scratch, kept to reuse its capacity.
  std::vector<std::pair<FaultCode, DurationEvent>> duration_scratch_;
  std::vector<DurationEvent> events_scratch_;
  std::vector<DurationTransition> transitions_scratch_;
};

}  // namespace clusterd::faults
