#pragma once

// Goodput and repeat offenders (docs/goodput.md) fed from what clusterd already sees: the job
// summaries (status), the fault centre's per-job snapshots (when a fault hit a running job), the
// recovery cycles (start, strategy, end) and the fault feed (every fault occurrence per node and
// NPU), and the fault episodes of every job (cluster/fault_episodes.h). Keeps its state in the
// store (ConfigMap cluster-system/clusterd-goodput and its job shards, goodput_state.h), reads
// the repeat-offender policy from cluster-system/clusterd-config-cm key
// repeat-offender-policy.json (off when absent; a refused policy keeps the previous one),
// carries out the policy's action (cordon or taint) once per verdict, and exports the aggregate
// metrics.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/fault_episodes.h"
#include "cluster/fault_job_faults.h"
#include "cluster/goodput_ledger.h"
#include "cluster/repeat_offenders.h"
#include "common/clock.h"
#include "model/job_summary_signal.h"
#include "nlohmann/json.hpp"
#include "recovery/cycle_log.h"
#include "server/goodput_state.h"
#include "store/object_store.h"

namespace clusterd::server {

class FaultFeed;

inline constexpr std::string_view kGoodputNamespace = "cluster-system";
inline constexpr std::string_view kGoodputConfigMap = "clusterd-goodput";
inline constexpr std::string_view kOffenderPolicyKey = "repeat-offender-policy.json";
inline constexpr std::string_view kOffenderAnnotation = "clusterd.io/repeat-offender";

class GoodputBridge : public cluster::JobFaultSink, public recovery::CycleObserver {
 public:
  struct Options {
    cluster::GoodputOptions ledger;
    absl::Duration tick = absl::Seconds(5);         // policy read, expiry, prune, metrics
    absl::Duration save_every = absl::Seconds(30);  // the state ConfigMap (when changed)
  };

  GoodputBridge(store::ObjectStore& store, Clock& clock, Options options);
  GoodputBridge(store::ObjectStore& store, Clock& clock) : GoodputBridge(store, clock, Options{}) {}
  ~GoodputBridge() override;

  // Restores the persisted state (a malformed one is logged and counted, and starts afresh) and
  // reads the policy once.
  absl::Status Restore();
  // Starts the worker; `feed` (may be null) gives the fault occurrences of the offender list.
  void Start(FaultFeed* feed);
  void Stop();

  // Inputs (any thread).
  void OnJobSummary(const model::JobSummarySignal& signal);
  void OnJobFaults(const cluster::JobFaultRanks& faults) override;
  void OnCycleStarted(const std::string& job_id, absl::Time at) override;
  void OnStrategyDecided(const std::string& job_id, const std::string& strategy,
                         absl::Time at) override;
  void OnCycleEnded(const std::string& job_id, const std::string& strategy,
                    const std::string& outcome, absl::Time at) override;
  void OnFaultOccurred(const std::string& node, const std::string& npu, const std::string& code,
                       const std::string& level, absl::Time at);
  void OnFaultCleared(const std::string& node, const std::string& npu, const std::string& code);

  // One pass of the worker: policy, expiry, pruning, metrics, and the state when due (tests).
  void Tick();
  absl::Status Save();

  // GET /api/clusterd/v1/goodput[?namespace=NS]: {"kind":"GoodputList",...,"items":[...]}.
  nlohmann::ordered_json GoodputList(const std::string& ns) const;
  // GET /api/clusterd/v1/goodput/<job>: by job id, or namespace/name, or name (NotFound, or
  // InvalidArgument when a name is ambiguous without a namespace).
  absl::StatusOr<nlohmann::ordered_json> GoodputOf(const std::string& job,
                                                   const std::string& ns) const;
  // GET /api/clusterd/v1/offenders.
  nlohmann::ordered_json Offenders() const;
  // GET /api/clusterd/v1/episodes[?job=JOB]: the fault episodes, newest first.
  nlohmann::ordered_json Episodes(const std::string& job) const;

 private:
  void ReadPolicy();
  // Opens or extends the job's fault episode with the faults new in its snapshot.
  void NoteEpisodeFaults(const cluster::JobFaultRanks& faults) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string JobNameOf(const std::string& job_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies the cycle events waiting in cycle_events_, oldest first (StateLock calls it).
  void ApplyCycleEventsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // mu_, taken with the waiting cycle events applied first. Every holder that reads or changes
  // the ledger, the episodes or the offenders takes mu_ this way, so the ledger sees the events
  // in the order they came, and a query sees them all.
  class ABSL_SCOPED_LOCKABLE StateLock {
   public:
    explicit StateLock(const GoodputBridge* bridge) ABSL_EXCLUSIVE_LOCK_FUNCTION(bridge->mu_);
    ~StateLock() ABSL_UNLOCK_FUNCTION();
    StateLock(const StateLock&) = delete;
    StateLock& operator=(const StateLock&) = delete;

   private:
    const GoodputBridge* const bridge_;
  };
  void Act(const cluster::OffenderVerdict& verdict);
  void Run(FaultFeed* feed);

  store::ObjectStore& store_;
  Clock& clock_;
  const Options options_;

  // Taken before mu_ by Save.
  absl::Mutex save_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  GoodputStateStore state_store_;
  mutable absl::Mutex mu_;
  // Mutable: a query (const) first applies the cycle events that already happened.
  mutable cluster::GoodputLedger ledger_ ABSL_GUARDED_BY(mu_);
  cluster::RepeatOffenders offenders_ ABSL_GUARDED_BY(mu_);
  mutable cluster::FaultEpisodes episodes_ ABSL_GUARDED_BY(mu_);
  // Per job: the interrupting faults (node|device|code) of its last snapshot.
  std::map<std::string, std::set<std::string>> job_faults_ ABSL_GUARDED_BY(mu_);
  // Per job: every fault of its last snapshot that an episode counts (any but NotHandleFault).
  std::map<std::string, std::set<std::string>> episode_faults_ ABSL_GUARDED_BY(mu_);
  std::string policy_text_ ABSL_GUARDED_BY(mu_);  // the last policy text read (applied or not)
  mutable bool dirty_ ABSL_GUARDED_BY(mu_) = true;
  // The recovery strands' cycle events (CycleObserver) wait here rather than for mu_: a tick or
  // a save holds mu_ over every job (at 20,000 jobs, tens of milliseconds to build the saved
  // state), and a strand calls the observer before it sends the cycle's first signal.
  struct CycleEvent {
    enum class Kind { kStarted, kDecided, kEnded } kind;
    std::string job_id;
    std::string detail;  // kDecided: the strategy; kEnded: the outcome
    absl::Time at;
  };
  mutable absl::Mutex cycle_events_mu_ ABSL_ACQUIRED_AFTER(mu_);
  mutable std::vector<CycleEvent> cycle_events_ ABSL_GUARDED_BY(cycle_events_mu_);
  absl::Time last_save_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace clusterd::server
