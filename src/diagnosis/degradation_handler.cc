#include "diagnosis/degradation_handler.h"

#include <algorithm>

namespace clusterd::diagnosis {

std::string_view ToString(DegradationActionKind kind) {
  switch (kind) {
    case DegradationActionKind::kHeavyProfilingOn:
      return "heavy-profiling-on";
    case DegradationActionKind::kHeavyProfilingOff:
      return "heavy-profiling-off";
    case DegradationActionKind::kReportSlow:
      return "report-slow";
    case DegradationActionKind::kReportRecovery:
      return "report-recovery";
    case DegradationActionKind::kLogConfirmed:
      return "log-confirmed";
    case DegradationActionKind::kLogAlreadyDegraded:
      return "log-already-degraded";
  }
  return "?";
}

DegradationStep AdvanceDegradation(const DegradationState& state, const ClusterResult& result) {
  DegradationStep step{state, {}};
  DegradationState& s = step.next;
  auto act = [&](DegradationActionKind kind, std::vector<int64_t> ranks = {}) {
    step.actions.push_back({kind, std::move(ranks)});
  };
  if (!result.is_slow) {
    if (s.degraded) {
      s.degraded = false;
      s.report_pending = false;
      // Nothing was reported (no slow-calculate rank ever named): nothing to recover.
      if (!s.reported_ranks.empty()) act(DegradationActionKind::kReportRecovery, s.reported_ranks);
      s.reported_ranks.clear();
    }
    if (s.heavy_profiling) {
      s.heavy_profiling = false;
      s.history.clear();
      act(DegradationActionKind::kHeavyProfilingOff);
    }
    return step;
  }
  if (s.degraded) {
    act(DegradationActionKind::kLogAlreadyDegraded);
    if (s.report_pending && !result.slow_calculate_ranks.empty()) {
      s.report_pending = false;
      s.reported_ranks = result.slow_calculate_ranks;
      act(DegradationActionKind::kReportSlow, s.reported_ranks);
    }
    return step;
  }
  s.history.push_back(true);
  while (static_cast<int>(s.history.size()) > kDegradationHistoryLimit) s.history.pop_front();
  if (!s.heavy_profiling) {
    s.heavy_profiling = true;
    act(DegradationActionKind::kHeavyProfilingOn);
    return step;
  }
  const auto slow_count = std::count(s.history.begin(), s.history.end(), true);
  if (slow_count < kSlowResultsToConfirm) return step;
  s.degraded = true;
  act(DegradationActionKind::kLogConfirmed, result.slow_calculate_ranks);
  if (!result.slow_calculate_ranks.empty()) {
    s.reported_ranks = result.slow_calculate_ranks;
    act(DegradationActionKind::kReportSlow, s.reported_ranks);
  } else {
    s.report_pending = true;
  }
  s.heavy_profiling = false;
  s.history.clear();
  act(DegradationActionKind::kHeavyProfilingOff);
  return step;
}

}  // namespace clusterd::diagnosis
