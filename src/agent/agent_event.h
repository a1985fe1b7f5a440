#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "faults/fault_event.h"

namespace clusterd::agent {

// One fault event from any source, for the device, switch or node engine.
using AgentEvent =
    std::variant<faults::NpuFaultEvent, faults::SwitchFaultInput, faults::NodeFaultInput>;

// An event due `at_ms` after the agent's start (script and sim sources).
struct ScheduledEvent {
  int64_t at_ms = 0;
  AgentEvent event;
};

// "chip", "network", "switch" or "node", for logs and metrics.
std::string_view EventKind(const AgentEvent& event);

}  // namespace clusterd::agent
