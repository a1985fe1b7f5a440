#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/agent_event.h"

namespace clusterd::agent {

// A line of a fault script that could not be used.
struct ScriptError {
  int line = 0;  // 1-based
  std::string message;
};

struct FaultScript {
  std::vector<ScheduledEvent> events;  // sorted by at_ms, file order kept for equal times
  std::vector<ScriptError> errors;
};

// Parses a `script:FILE` text: JSON lines (event_json.h), blank lines and lines starting with
// `#` ignored. A malformed line is reported with its number and skipped; nothing throws.
FaultScript ParseFaultScript(std::string_view text, int num_npus);

}  // namespace clusterd::agent
