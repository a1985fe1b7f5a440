#pragma once

// Goodput accounting per job (docs/goodput.md): how a job's wall time since clusterd first saw it
// divides into training and the causes of lost time, and its effective training time ratio
// (ETTR = training / counted time) over the job's life and over a sliding window.
//
// Pure: every input carries its time; the caller (server/goodput_bridge) feeds it the job
// summaries, the fault centre's per-job snapshots and the recovery cycles it already sees. Not
// thread-safe: the caller serialises.
//
// What a job's time counts as, from what is known at each instant:
//   detection           from an interrupting fault's own time until clusterd saw it hit the job
//   decision            from then (or from a cycle's start) until a strategy is decided
//   process_restart     a recovery cycle runs its decided strategy
//   training            the job runs, with no interrupting fault and no cycle
//   rescheduling        the job does not run (pending or failed) after it once ran
//   waiting_for_resources  the job has not run yet
// A finished (complete) or deleted job's time stops counting.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "model/job_status.h"
#include "nlohmann/json.hpp"

namespace clusterd::cluster {

enum class TimeUse {
  kTraining,
  kDetection,
  kDecision,
  kProcessRestart,
  kRescheduling,
  kWaitingForResources,
  kNotCounted,  // finished or deleted
};
inline constexpr int kTimeUseCount = 6;  // the counted ones
std::string_view ToString(TimeUse use);

// Fault levels that interrupt training (a sub-health or not-handled fault does not).
bool InterruptsTraining(std::string_view level);

struct GoodputOptions {
  absl::Duration window = absl::Hours(1);      // the sliding window of ETTR
  absl::Duration retention = absl::Hours(24);  // a deleted job is kept this long
  size_t max_jobs = 10000;                     // oldest deleted jobs go first beyond this
  size_t max_intervals_per_job = 256;          // the timeline kept per job
};

struct TimeInterval {
  TimeUse use = TimeUse::kNotCounted;
  absl::Time start;
  absl::Time end;
  std::string strategy;  // decision / process_restart: the cycle's strategy when known
};

// One job's account, as served and persisted.
struct JobGoodput {
  std::string job_id;
  std::string name;  // namespace/name
  absl::Time first_seen;
  std::optional<model::JobStatus> status;
  bool deleted = false;
  absl::Time deleted_at = absl::InfinitePast();
  bool ever_ran = false;
  bool cycle_running = false;
  absl::Time cycle_started = absl::InfinitePast();
  std::string cycle_strategy;                  // "" until decided
  absl::Time fault_at = absl::InfinitePast();  // an interrupting fault not yet answered
  TimeUse use = TimeUse::kNotCounted;
  absl::Time since;                           // when `use` began
  absl::Duration totals[kTimeUseCount] = {};  // closed time per use
  int64_t cycles = 0;
  int64_t faults = 0;                 // interrupting fault episodes
  std::deque<TimeInterval> timeline;  // closed intervals, oldest first, bounded
  // The ledger's save bookkeeping: the record changed since it was last taken for a save, and
  // the oldest interval end that record held (its timeline is cut to the window when saved).
  bool unsaved = true;
  absl::Time saved_oldest_end = absl::InfiniteFuture();

  absl::Duration Total(TimeUse use, absl::Time now) const;  // including the open interval
  absl::Duration Counted(absl::Time now) const;
  // training / counted over the life; nullopt before any time counted.
  std::optional<double> Ettr(absl::Time now) const;
  // Training and counted time within [now - window, now] (what the timeline still holds of it).
  struct WindowShare {
    absl::Duration training;
    absl::Duration counted;
  };
  WindowShare Window(absl::Time now, absl::Duration window) const;
  std::optional<double> WindowEttr(absl::Time now, absl::Duration window) const;
};

class GoodputLedger {
 public:
  explicit GoodputLedger(GoodputOptions options = {}) : options_(options) {}

  // A job summary (status as the job registry derived it); `deleted` for operator "delete".
  void ObserveJob(const std::string& job_id, const std::string& name,
                  std::optional<model::JobStatus> status, bool deleted, absl::Time now);
  // The fault centre's snapshot of the job changed: the earliest time of an interrupting fault
  // in it, or nullopt when none is left.
  void ObserveFaults(const std::string& job_id, std::optional<absl::Time> earliest_fault,
                     absl::Time now);
  void CycleStarted(const std::string& job_id, absl::Time now);
  void StrategyDecided(const std::string& job_id, const std::string& strategy, absl::Time now);
  void CycleEnded(const std::string& job_id, absl::Time now);

  // Drops deleted jobs past the retention, then the oldest deleted ones beyond max_jobs.
  // Returns how many went.
  size_t Prune(absl::Time now);

  const JobGoodput* Find(const std::string& job_id) const;
  const std::map<std::string, JobGoodput>& jobs() const { return jobs_; }
  const GoodputOptions& options() const { return options_; }

  // The served view of one job: totals in seconds per cause, ETTR (life, window), timeline.
  nlohmann::ordered_json JobJson(const JobGoodput& job, absl::Time now) const;

  // Persistence (bounded: the timeline is cut to the window). Restore keeps the current `use`
  // of each job open from its persisted `since`: a restart is time lost to the same cause.
  nlohmann::json Save(absl::Time now) const;
  absl::Status Restore(const nlohmann::json& saved);

  // What an incremental save writes: the records (Save's shape, one per job) that differ from
  // the ones last taken, and the jobs pruned since. A record is taken again when its job
  // changed, or when an interval it held has left the window since (so every record written is
  // the one Save would write now). The first call after construction or Restore takes every
  // job. At 20,000 jobs Save builds every record, about 0.2 s of a core; a save after a few
  // reports builds a few.
  struct SaveDelta {
    std::vector<std::pair<std::string, nlohmann::json>> records;  // job id -> record
    std::vector<std::string> removed;
  };
  SaveDelta TakeSaveDelta(absl::Time now);

 private:
  JobGoodput& JobOf(const std::string& job_id, absl::Time now);
  // Closes the open interval at `t` (clamped into [since, ...]) and re-derives `use`. Every
  // change to a job starts here, so this is where its record is marked unsaved.
  void Advance(JobGoodput& job, absl::Time t);
  nlohmann::json Record(const JobGoodput& job, absl::Time now) const;
  static TimeUse Derive(const JobGoodput& job);

  GoodputOptions options_;
  std::map<std::string, JobGoodput> jobs_;
  std::vector<std::string> removed_since_save_;  // pruned since the last TakeSaveDelta
};

}  // namespace clusterd::cluster
