#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace clusterd::faults {

// Occurrence history of one (NPU, code) with a FaultFrequency entry (fault-pipeline.md §5.5):
// the occurrence times, the last fault and the last recovery, all Unix ms.
class FrequencyTracker {
 public:
  void RecordFault(int64_t time_ms);
  void RecordRecover(int64_t time_ms) { last_recover_ms_ = time_ms; }
  // Step 1: forget occurrences before `cutoff_ms`.
  void DropBefore(int64_t cutoff_ms);
  void Clear() { occurrences_.clear(); }

  size_t count() const { return occurrences_.size(); }
  int64_t last_fault_ms() const { return last_fault_ms_; }
  int64_t last_recover_ms() const { return last_recover_ms_; }
  // Agent restart with an escalation reason in the ConfigMap: the code last occurred at the
  // reason's upgrade time and counts as recovered at the restart, so a release window runs
  // from the restart unless the code is reported again.
  void Restore(int64_t last_fault_ms, int64_t recovered_ms) {
    last_fault_ms_ = last_fault_ms;
    last_recover_ms_ = recovered_ms;
  }

 private:
  std::vector<int64_t> occurrences_;  // ascending
  int64_t last_fault_ms_ = 0;
  int64_t last_recover_ms_ = 0;
};

}  // namespace clusterd::faults
