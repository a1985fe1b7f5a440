#pragma once

// Fault episodes (docs/goodput.md "Fault episodes"): what happened to a job from a fault to
// training again, one row per incident, the table `clustersim` prints at the end of a run and the
// dashboard draws. An episode opens when a fault clusterd had not seen hits a job (its own time,
// and when clusterd saw it), gathers the faults that hit the job until its recovery cycle ends,
// and records the cycle's start (the job was notified), the strategies decided in order and the
// end (training again, with the outcome). A fault that clears before any cycle closes its
// episode as cleared; a cycle with no fault before it (a job-reported or manual one) opens an
// episode of its own.
//
// Pure: every input carries its time. Not thread-safe: the caller (server/goodput_bridge)
// serialises. Bounded: the newest `capacity` episodes, each with at most kMaxFaultsPerEpisode
// faults listed (all counted).
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace clusterd::cluster {

inline constexpr size_t kMaxFaultsPerEpisode = 32;

struct EpisodeFault {
  std::string node;
  std::string npu;  // device id, "-1" for a whole-node fault
  std::string code;
  std::string level;
  absl::Time at = absl::InfinitePast();  // the fault's own time (InfinitePast: not given)
  bool operator==(const EpisodeFault&) const = default;
};

struct FaultEpisode {
  uint64_t id = 0;
  std::string job_id;
  std::string job_name;              // namespace/name, "" while unknown
  std::vector<EpisodeFault> faults;  // the first kMaxFaultsPerEpisode
  int64_t fault_count = 0;
  absl::Time occurred = absl::InfinitePast();  // the earliest fault's own time
  absl::Time detected = absl::InfinitePast();  // clusterd saw the first fault hit the job
  absl::Time notified = absl::InfinitePast();  // the job's recovery cycle started
  absl::Time decided = absl::InfinitePast();   // the first strategy was decided
  absl::Time resumed = absl::InfinitePast();   // the cycle ended
  absl::Time cleared = absl::InfinitePast();   // the faults cleared before any cycle
  std::vector<std::string> strategies;         // decided, in order, fallbacks included
  std::string outcome;                         // the cycle's, "" while it runs

  bool closed() const { return resumed != absl::InfinitePast() || cleared != absl::InfinitePast(); }
  // "node-4/npu1", "node-4" for a whole-node fault, "8 NPUs on 2 nodes", "-" with no fault.
  std::string Where() const;
};

class FaultEpisodes {
 public:
  explicit FaultEpisodes(size_t capacity = 256) : capacity_(capacity) {}

  // Faults clusterd had not seen on the job before (`name` is namespace/name, may be "").
  void FaultsHit(const std::string& job_id, const std::string& name,
                 const std::vector<EpisodeFault>& faults, absl::Time now);
  // The job's fault snapshot is empty again.
  void FaultsCleared(const std::string& job_id, absl::Time now);
  void CycleStarted(const std::string& job_id, const std::string& name, absl::Time now);
  void StrategyDecided(const std::string& job_id, const std::string& strategy, absl::Time now);
  void CycleEnded(const std::string& job_id, const std::string& outcome, absl::Time now);
  // The job's name became known: its episodes opened before that get it.
  void NameJob(const std::string& job_id, const std::string& name);

  const std::deque<FaultEpisode>& episodes() const { return episodes_; }

  // {"kind":"FaultEpisodeList","items":[...]} newest first; `job` (id, namespace/name or name)
  // filters when not empty.
  nlohmann::ordered_json ToJson(const std::string& job, absl::Time now) const;
  static nlohmann::ordered_json EpisodeJson(const FaultEpisode& e, absl::Time now);

  nlohmann::json Save() const;
  absl::Status Restore(const nlohmann::json& saved);

 private:
  // The job's newest episode that is not closed, or null.
  FaultEpisode* OpenOf(const std::string& job_id);
  FaultEpisode& Open(const std::string& job_id, const std::string& name, absl::Time now);

  size_t capacity_;
  uint64_t next_id_ = 1;
  std::deque<FaultEpisode> episodes_;  // oldest first
};

}  // namespace clusterd::cluster
