#pragma once

#include <cstdint>
#include <optional>

#include "agent/agent_event.h"

namespace clusterd::agent {

// A source whose events are due at known offsets from the agent's start: the script (all known
// up front) and the simulator (drawn lazily). The agent core pops due events on its timer, so
// these sources need no thread of their own.
class EventSchedule {
 public:
  virtual ~EventSchedule() = default;
  // Offset (ms from start) of the next event, nullopt when exhausted.
  virtual std::optional<int64_t> NextAtMs() = 0;
  // The next event; only after NextAtMs returned a value.
  virtual ScheduledEvent Pop() = 0;
};

}  // namespace clusterd::agent
