#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "diagnosis/slow_node_algorithm.h"

namespace clusterd::diagnosis {

// The degradation handler of jobs-ranktable-diagnosis.md §6.2 step 6: turns each cluster result
// into profiling switches and public-fault reports. Pure: Advance(state, result) -> step.

inline constexpr int kDegradationHistoryLimit = 10;
inline constexpr int kSlowResultsToConfirm = 5;

struct DegradationState {
  bool degraded = false;
  bool heavy_profiling = false;
  std::deque<bool> history;             // slow results while not degraded, last 10
  bool report_pending = false;          // confirmed with no slow-calculate rank yet
  std::vector<int64_t> reported_ranks;  // last reported as slow (the recovery carries them)
  bool operator==(const DegradationState&) const = default;
};

enum class DegradationActionKind {
  kHeavyProfilingOn,    // all five switches on
  kHeavyProfilingOff,   // CommunicationOperator off, the others on ("light")
  kReportSlow,          // public fault 110001010 with `ranks`
  kReportRecovery,      // public fault 100001011 with `ranks`
  kLogConfirmed,        // "... in cluster got degradation, slow rank ids: [..]"
  kLogAlreadyDegraded,  // "... in cluster got degradation, no need to start heavy profiling"
};
std::string_view ToString(DegradationActionKind kind);

struct DegradationAction {
  DegradationActionKind kind;
  std::vector<int64_t> ranks;
  bool operator==(const DegradationAction&) const = default;
};

struct DegradationStep {
  DegradationState next;
  std::vector<DegradationAction> actions;
};

// The heavy-profiling flag in `next` assumes the switch succeeds; the caller restores the old
// flag when it fails (the original changes it only on success).
DegradationStep AdvanceDegradation(const DegradationState& state, const ClusterResult& result);

}  // namespace clusterd::diagnosis
