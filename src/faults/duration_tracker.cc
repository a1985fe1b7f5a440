#include "faults/duration_tracker.h"

#include <algorithm>

namespace clusterd::faults {

void DurationTracker::Normalise() {
  auto by_time = [](const DurationEvent& a, const DurationEvent& b) {
    return a.time_ms < b.time_ms;
  };
  if (!std::is_sorted(queue_.begin(), queue_.end(), by_time)) {
    std::stable_sort(queue_.begin(), queue_.end(), by_time);
  }
  // Collapse runs with the same assertion, keeping the first (in place).
  queue_.erase(std::unique(queue_.begin(), queue_.end(),
                           [](const DurationEvent& a, const DurationEvent& b) {
                             return a.occur == b.occur;
                           }),
               queue_.end());
  if (!queue_.empty() && queue_.front().occur == timed_out_) {
    // Not timed out: a leading recover has nothing to end. Timed out: a leading occur is the
    // one that already timed out.
    queue_.erase(queue_.begin());
  }
}

void DurationTracker::TimeoutTest(const DurationPolicy& policy, int64_t now_ms,
                                  std::vector<DurationTransition>* out) {
  const int64_t t = policy.fault_timeout_ms;
  size_t i = 0;
  for (; i + 1 < queue_.size(); i += 2) {
    if (queue_[i + 1].time_ms - queue_[i].time_ms > t) {
      timed_out_ = true;
      fault_alarm_time_ms_ = queue_[i].time_ms + t;
      out->push_back({true, fault_alarm_time_ms_});
      // The queue is deliberately not trimmed: the next cycle drops this occur and runs the
      // recovery test on what follows (§5.6).
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  if (i < queue_.size()) {  // one unpaired occur
    const DurationEvent occur = queue_[i];
    queue_ = {occur};
    if (now_ms - occur.time_ms > t) {
      timed_out_ = true;
      fault_alarm_time_ms_ = occur.time_ms + t;
      out->push_back({true, fault_alarm_time_ms_});
    }
    return;
  }
  queue_.clear();  // only short blips
}

bool DurationTracker::RecoveryTest(const DurationPolicy& policy, int64_t now_ms,
                                   std::vector<DurationTransition>* out) {
  const int64_t r = policy.recover_timeout_ms;
  size_t i = 0;
  for (; i + 1 < queue_.size(); i += 2) {
    const int64_t up = queue_[i + 1].time_ms - queue_[i].time_ms;
    if (up > r) {
      timed_out_ = false;
      fault_alarm_time_ms_ = queue_[i].time_ms + r;
      recover_duration_ms_ = up;
      out->push_back({false, fault_alarm_time_ms_});
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(i + 1));
      return true;
    }
  }
  if (i < queue_.size()) {  // one trailing recover
    const DurationEvent recover = queue_[i];
    recover_duration_ms_ = now_ms - recover.time_ms;
    if (now_ms - recover.time_ms > r) {
      timed_out_ = false;
      fault_alarm_time_ms_ = recover.time_ms + r;
      out->push_back({false, fault_alarm_time_ms_});
      queue_.clear();
      return true;
    }
    queue_ = {recover};
    return false;
  }
  queue_.clear();  // only short recoveries: still timed out
  return false;
}

void DurationTracker::Advance(const std::vector<DurationEvent>& events,
                              const DurationPolicy& policy, int64_t now_ms,
                              std::vector<DurationTransition>* out) {
  queue_.insert(queue_.end(), events.begin(), events.end());
  Normalise();
  for (;;) {
    if (!timed_out_) {
      TimeoutTest(policy, now_ms, out);
      return;
    }
    if (!RecoveryTest(policy, now_ms, out)) return;
  }
}

std::optional<int64_t> DurationTracker::NextDeadlineMs(const DurationPolicy& policy) const {
  if (queue_.empty()) return std::nullopt;
  if (timed_out_) {
    if (queue_.front().occur) {
      // The occur that timed out. With events after it (a timeout that fired on a pair) the
      // next cycle runs the recovery test on them; alone it waits for a recover.
      if (queue_.size() > 1) return queue_.front().time_ms;
      return std::nullopt;
    }
    return queue_.front().time_ms + policy.recover_timeout_ms + 1;
  }
  return queue_.front().time_ms + policy.fault_timeout_ms + 1;
}

void DurationTracker::RestoreTimedOut(int64_t fault_alarm_time_ms, int64_t recover_since_ms) {
  timed_out_ = true;
  fault_alarm_time_ms_ = fault_alarm_time_ms;
  recover_duration_ms_ = 0;
  queue_ = {{false, recover_since_ms}};
}

}  // namespace clusterd::faults
