#pragma once

// One node's pass through a centre (fault-pipeline.md §7.2, §7.3): a copy of the original record
// runs through the processors in their exact order. Pure: the inputs, the node's processor
// memory and `now` in; the processed record, what was hidden, the occurrences for manual
// separation and the time the result next changes by itself out.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/fault_stages.h"
#include "cluster/fault_types.h"

namespace clusterd::cluster {

struct DeviceCycleInput {
  int64_t now_ms = 0;
  std::vector<PublicFaultOnNode> public_faults;
  CustomFilterInput custom_filter;
  std::map<std::string, int64_t> business_uce_ms;  // NPU -> business-plane UCE report time
  RetryInput retry;
  RecoverInPlaceInput recover_in_place;
  bool stress_test = false;
  std::set<std::string> used_npus;               // NPU names allocated to pods on the node
  bool manual_separation_enabled = false;
  std::vector<std::string> manual_npus;           // clusterd-manual-info-cm Total of the node
  std::map<std::string, std::string> job_of_npu;  // NPU name -> job id
};

// Memory of the stateful device processors, per node.
struct DeviceCycleState {
  UceAccompanyState uce;
  IncrementState increment;
  bool operator==(const DeviceCycleState&) const = default;
};

struct DeviceCycleOutput {
  DeviceRecord record;
  std::vector<NpuFault> custom_hidden;         // CustomFilter (the Fault service shows them)
  std::vector<InPlaceHidden> in_place_hidden;  // RecoverInPlace (re-attached to fault ranks)
  std::vector<NpuFault> force_added;           // link-down faults the Retry stage forces
  std::vector<FaultOccurrence> occurrences;    // IncrementFault -> manual separation
  std::optional<int64_t> next_due_ms;
};

DeviceCycleOutput RunDeviceCycle(const DeviceRecord& original, DeviceCycleState& state,
                                 const DeviceCycleInput& input);

struct SwitchCycleInput {
  int64_t now_ms = 0;
  std::vector<const FaultJobPolicy*> policies;  // custom filters of jobs on the node
  bool any_npu_used = false;
};
struct SwitchCycleState {
  std::optional<int64_t> link_down_ms;  // the Retry stage's L2 link-down memory
};
struct SwitchCycleOutput {
  SwitchRecord record;
  std::optional<int64_t> next_due_ms;
};
SwitchCycleOutput RunSwitchCycle(const SwitchRecord& original, SwitchCycleState& state,
                                 const SwitchCycleInput& input);

NodeRecord RunNodeCycle(const NodeRecord& original, bool any_npu_used);

}  // namespace clusterd::cluster
