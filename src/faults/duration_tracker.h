#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "faults/fault_customization.h"

namespace clusterd::faults {

// One occur (true) or recover (false) of a code with a FaultDuration entry.
struct DurationEvent {
  bool occur = true;
  int64_t time_ms = 0;
  bool operator==(const DurationEvent&) const = default;
};

// A change of the timed-out state, at its faultAlarmTime.
struct DurationTransition {
  bool timed_out = false;
  int64_t fault_alarm_time_ms = 0;
  bool operator==(const DurationTransition&) const = default;
};

// The duration algorithm of fault-pipeline.md §5.6 for one (NPU, code): steps 1 and 2, run
// once per cycle. Pure state machine; the engine applies steps 3 and 4.
class DurationTracker {
 public:
  // Feeds this cycle's events and runs the timeout / recovery tests at `now_ms`. Transitions
  // are appended to `out` in the order they happen (one cycle may recover and time out again).
  void Advance(const std::vector<DurationEvent>& events, const DurationPolicy& policy,
               int64_t now_ms, std::vector<DurationTransition>* out);

  bool timed_out() const { return timed_out_; }
  int64_t fault_alarm_time_ms() const { return fault_alarm_time_ms_; }
  int64_t recover_duration_ms() const { return recover_duration_ms_; }
  const std::vector<DurationEvent>& queue() const { return queue_; }

  // The earliest time at which Advance with no new events would change the state; nullopt if
  // only a new event can. May be <= now when the previous cycle left work (a timeout fired on a
  // pair and later events wait for the recovery test).
  std::optional<int64_t> NextDeadlineMs(const DurationPolicy& policy) const;

  // Agent restart with a FaultDuration reason in the ConfigMap: timed out since
  // `fault_alarm_time_ms`, recovering since `recover_since_ms` unless the code re-occurs.
  void RestoreTimedOut(int64_t fault_alarm_time_ms, int64_t recover_since_ms);

 private:
  void Normalise();
  // Returns true when the loop must continue with a timeout test on what is left.
  bool RecoveryTest(const DurationPolicy& policy, int64_t now_ms,
                    std::vector<DurationTransition>* out);
  void TimeoutTest(const DurationPolicy& policy, int64_t now_ms,
                   std::vector<DurationTransition>* out);

  bool timed_out_ = false;
  std::vector<DurationEvent> queue_;
  int64_t fault_alarm_time_ms_ = 0;
  int64_t recover_duration_ms_ = 0;
};

}  // namespace clusterd::faults
