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
  void RunCycle(int64_t now_ms);

  // The SwitchInfoCfg record of the last cycle (reporting enabled), UpdateTime = now_s.
  model::SwitchInfo Snapshot(const SwitchFaultCatalog& catalog, int64_t now_s) const;
  // True when a once-only fault waits to be dropped by the next cycle.
  bool HasTransient() const;

 private:
  struct Active {
    SwitchFaultInput input;
    AssembledCode parsed;
    int64_t first_seen_ms = 0;
    bool remove_next_cycle = false;
    bool added_this_cycle = false;
  };
  std::vector<Active> active_;
  std::vector<std::pair<SwitchFaultInput, AssembledCode>> pending_;
};

}  // namespace clusterd::faults
