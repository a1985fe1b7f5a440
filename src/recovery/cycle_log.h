#pragma once

// What an incident review reads of a recovery: one info line when a cycle starts (its uuid and
// fault ranks), one per strategy decided, one when it ends (the outcome, why it ended and how
// long it took), each naming the job as namespace/name with the job id as a field; and the
// cycle metrics an SLO is built on:
//   clusterd_recovery_cycles_total{strategy,outcome}            counter
//   clusterd_recovery_duration_seconds{strategy,outcome}        histogram, first signal to end
// A cycle starts with a new uuid and ends with the controller's reset. outcome: success (the
// newest ProcessRecoverStatus written in the cycle is a *-success or exit-completed), failed (a
// *-failed), or ended (none was written: the client left, the job was deleted, a hot switch).
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "recovery/command.h"
#include "recovery/job_recovery.h"

namespace clusterd::recovery {

// The running cycle, as the executor keeps it between steps.
struct CycleTracking {
  absl::Time started = absl::InfinitePast();  // InfinitePast: no cycle is running
  std::string uuid;
  std::string strategy;  // the newest decided
  std::string status;    // the newest ProcessRecoverStatus written
};

// Told of each cycle's start, strategy and end as they are logged (goodput accounting). Called
// on the job's strand: one job at a time, different jobs possibly on different threads.
class CycleObserver {
 public:
  virtual ~CycleObserver() = default;
  virtual void OnCycleStarted(const std::string& job_id, absl::Time at) = 0;
  virtual void OnStrategyDecided(const std::string& job_id, const std::string& strategy,
                                 absl::Time at) = 0;
  virtual void OnCycleEnded(const std::string& job_id, const std::string& strategy,
                            const std::string& outcome, absl::Time at) = 0;
};

// Logs (and counts) what the step from `before_uuid`/`before_decided` to `after` with
// `commands` changed, and tells `observer` (may be null). `job` is namespace/name.
void LogCycleStep(std::string_view job, std::string_view before_decided, const JobRecovery& after,
                  const std::vector<Command>& commands, absl::Time now, CycleTracking* cycle,
                  CycleObserver* observer = nullptr);

// "rank:type,..." or "<none>".
std::string FaultRanksText(const std::vector<FaultRank>& ranks);

}  // namespace clusterd::recovery
