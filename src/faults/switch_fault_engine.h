#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_event.h"
#include "faults/switch_fault_catalog.h"
#include "model/switch_info.h"

namespace clusterd::faults {

// UnifiedBus switch faults of an A3 node (fault-pipeline.md §1.2.2): current faults keyed by
// (assembled code, switch chip, port), the node level and status. Pure, one owner thread.
class SwitchFaultEngine {
 public:
  // Ports of one switch chip whose peer is an L2 switch that, all in "occur", force Separate.
  // The original tests for exactly 16, so 17 or more do not; here 16 or more do
  // (docs/compatibility-node.md).
  static constexpr int kL2PortsForSeparate = 16;

  // False (and nothing queued) when the assembled code is malformed.
  bool Submit(const SwitchFaultInput& input);
  // One cycle of the agent (one evaluation of the device-info ConfigMap). `npu_reset_running`:
  // an A3 NPU hot reset is in progress on the node at the end of this cycle (the caller checks
  // the chip family). Consecutive cycles with a reset running are one reset, whatever ring.
  void RunCycle(int64_t now_ms, bool npu_reset_running = false);

  // The SwitchInfoCfg record of the last cycle (reporting enabled), UpdateTime = now_s.
  // §1.2.2: while an A3 NPU hot reset is in progress NodeStatus reads Healthy; from the second
  // cycle of the reset every per-code level reads NotHandle, and so does FaultLevel unless the
  // 16-port rule forces Separate. Both end with the cycle that sees the reset over.
  model::SwitchInfo Snapshot(const SwitchFaultCatalog& catalog, int64_t now_s) const;
  // True when a once-only fault waits to be dropped by the next cycle.
  bool HasTransient() const;
  // True when the next cycle changes the record without a new event: a transient fault, or a
  // reset in its first cycle with faults whose levels the second cycle masks.
  bool NextCycleChangesRecord() const;
  // Cycles in a row that ended with an NPU hot reset running (0: none running).
  int reset_cycles() const { return reset_cycles_; }

 private:
  struct Active {
    SwitchFaultInput input;
    AssembledCode parsed;
    int64_t first_seen_ms = 0;
    bool remove_next_cycle = false;
    bool added_this_cycle = false;
  };
  std::vector<Active> active_;
  int reset_cycles_ = 0;
  std::vector<std::pair<SwitchFaultInput, AssembledCode>> pending_;
};

}  // namespace clusterd::faults
