#pragma once

#include <string_view>

#include "model/fault_level.h"

namespace clusterd::faults {

// Chip health of an NPU from its chip level (fault-pipeline.md §3.4). `in_use`: a pod holds
// the NPU; `grace_tolerance`: graceful fault tolerance is on for it.
bool ChipHealthy(model::FaultLevel level, bool in_use, bool grace_tolerance);
// Network health: healthy only for no fault or NotHandleFault.
bool NetworkHealthy(model::FaultLevel level);
// reset.json Policy of a chip level (§3.6).
std::string_view ResetPolicyFor(model::FaultLevel level);

}  // namespace clusterd::faults
