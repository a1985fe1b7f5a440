#pragma once

#include <vector>

#include "agent/event_schedule.h"
#include "agent/fault_script.h"

namespace clusterd::agent {

// The events of a parsed fault script, in order.
class ScriptSchedule final : public EventSchedule {
 public:
  explicit ScriptSchedule(std::vector<ScheduledEvent> events) : events_(std::move(events)) {}
  std::optional<int64_t> NextAtMs() override {
    if (next_ >= events_.size()) return std::nullopt;
    return events_[next_].at_ms;
  }
  ScheduledEvent Pop() override { return events_[next_++]; }

 private:
  std::vector<ScheduledEvent> events_;
  size_t next_ = 0;
};

}  // namespace clusterd::agent
