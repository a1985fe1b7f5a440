#include "cluster/fault_pipeline.h"

namespace clusterd::cluster {

DeviceCycleOutput RunDeviceCycle(const DeviceRecord& original, DeviceCycleState& state,
                                 const DeviceCycleInput& in) {
  DeviceCycleOutput out;
  out.record = original;
  DeviceRecord& r = out.record;
  StageResult due;
  bool bump = false;  // §1.4: UpdateTime becomes now when one of these changed the faults

  StageResult s = ApplyPublicFaults(r, in.public_faults);
  bump = bump || s.changed;
  due.Merge(s);
  due.Merge(ApplyCustomFilter(r, in.custom_filter, in.now_ms, &out.custom_hidden));
  s = ApplyUceAccompany(r, state.uce, in.business_uce_ms, in.now_ms);
  bump = bump || s.changed;
  due.Merge(s);
  s = ApplyRetry(r, in.retry, in.now_ms, &out.force_added);
  bump = bump || s.changed;
  due.Merge(s);
  s = ApplyRecoverInPlace(r, in.recover_in_place, in.now_ms, &out.in_place_hidden);
  bump = bump || s.changed;
  due.Merge(s);
  due.Merge(ApplyStressTest(r, in.stress_test));
  due.Merge(ApplyPreSeparate(r, in.used_npus));
  if (in.manual_separation_enabled) {
    out.occurrences = ApplyIncrementFault(r, state.increment, in.job_of_npu);
    due.Merge(ApplyManualFault(r, in.manual_npus));
  } else {
    state.increment.previous.clear();
  }
  if (bump) r.update_time_s = in.now_ms / 1000;
  out.next_due_ms = due.next_due_ms;
  return out;
}

SwitchCycleOutput RunSwitchCycle(const SwitchRecord& original, SwitchCycleState& state,
                                 const SwitchCycleInput& in) {
  SwitchCycleOutput out;
  out.record = original;
  StageResult due = ApplySwitchCustomFilter(out.record, in.policies, in.now_ms);
  UpdateSwitchLinkDownMemory(original, state.link_down_ms, in.now_ms);
  if (state.link_down_ms.has_value()) due.Due(*state.link_down_ms + kSwitchLinkDownMemoryMs + 1);
  due.Merge(ApplySwitchPreSeparate(out.record, in.any_npu_used));
  out.next_due_ms = due.next_due_ms;
  return out;
}

NodeRecord RunNodeCycle(const NodeRecord& original, bool any_npu_used) {
  NodeRecord out = original;
  ApplyNodePreSeparate(out, any_npu_used);
  return out;
}

}  // namespace clusterd::cluster
