#include "faults/frequency_tracker.h"

#include <algorithm>

namespace clusterd::faults {

void FrequencyTracker::RecordFault(int64_t time_ms) {
  occurrences_.insert(std::upper_bound(occurrences_.begin(), occurrences_.end(), time_ms), time_ms);
  last_fault_ms_ = time_ms;
}

void FrequencyTracker::DropBefore(int64_t cutoff_ms) {
  auto keep = std::lower_bound(occurrences_.begin(), occurrences_.end(), cutoff_ms);
  occurrences_.erase(occurrences_.begin(), keep);
}

}  // namespace clusterd::faults
