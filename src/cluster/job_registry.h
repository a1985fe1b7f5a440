#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/job_lifecycle.h"
#include "cluster/job_record.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/parallel_for.h"
#include "common/rate_limiter.h"
#include "model/device_naming.h"
#include "model/job_summary_signal.h"
#include "model/pod_group_info.h"
#include "model/pod_info.h"
#include "runtime/controller.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::cluster {

// The job registry (jobs-ranktable-diagnosis.md §1): which job owns which pods, ranks and NPUs,
// each job's status, its rank table and its job-summary ConfigMaps and signals.
//
// Fed by the shared informers (store/informer.h) of PodGroups, Pods and Nodes. A handler only
// decodes the object, updates the registry's cache and records the job's pending operation ("latest
// operation wins", §1.7) before adding the job id to a keyed WorkQueue; a worker re-reads the cache
// and applies DecideJob (job_lifecycle.h), then writes the ConfigMaps and emits the signal. Timers
// (the 60 s pre-delete grace, the hourly consistency re-check, retries) are WorkQueue::AddAfter
// on the Clock: nothing polls.
//
// Start() lists before it watches, so the caches are complete before the first reconcile, and
// rebuilds every record from the store: from the PodGroups and Pods, and from the job-summary
// ConfigMaps of jobs that disappeared while clusterd was down (they are pre-deleted and expire
// as usual instead of being left behind).
//
// Bad input never stops the registry: PodGroups and Pods without a controller owner are ignored,
// pods with missing/invalid/duplicate rank indices or malformed allocation annotations are left
// out of the rank table; each case is logged and counted in
// clusterd_job_registry_rejected_total{reason}. A failed ConfigMap write is retried with
// back-off without committing the step, so the signal is emitted once the write succeeded.
class JobRegistry {
 public:
  struct Options {
    // Reconcile rate: a token bucket. The original's 5/s, burst 20 (§1.7) makes a cluster of
    // 1,000 new jobs take over 3 minutes before their pods are known to the fault centre (a
    // fault on such a job reaches no controller meanwhile); ours defaults to 100/s, burst 200,
    // still a bound on the ConfigMap writes each reconcile may make (clusterd
    // --job-reconcile-rate / --job-reconcile-burst).
    double reconcile_rate = 100;
    int64_t reconcile_burst = 200;
    absl::Duration pre_delete_grace = absl::Seconds(60);
    absl::Duration consistency_period = absl::Hours(1);
    // The consistency re-check runs only when at most this many operations are pending.
    size_t consistency_max_pending = 5;
    // deviceNameCustomization.json (clusterd --device-name-file): the renamed NPU resource and
    // allocation annotation of pods and PodGroups.
    model::DeviceNaming naming;
    // Runs the start-up decoding of every cached pod (its allocation annotation is JSON), and
    // the start-up decision of every job, on several threads; ClusterBrain passes ParallelFor.
    // Unset: in turn, on the starting thread.
    ParallelRunner parallel_for;
  };
  using SignalListener = std::function<void(const model::JobSummarySignal&)>;

  // `informers` hands out the process's shared informers (ClusterBrain's); null: the registry
  // keeps informers of its own over `store` (tests, benchmarks).
  JobRegistry(store::ObjectStore& store, Clock& clock, Options options,
              store::InformerFactory* informers);
  JobRegistry(store::ObjectStore& store, Clock& clock, Options options)
      : JobRegistry(store, clock, options, nullptr) {}
  JobRegistry(store::ObjectStore& store, Clock& clock) : JobRegistry(store, clock, Options{}) {}
  ~JobRegistry();

  JobRegistry(const JobRegistry&) = delete;
  JobRegistry& operator=(const JobRegistry&) = delete;

  // Called for every signal, on the worker thread, after the ConfigMaps were written. Must not
  // block. Register before Start.
  void AddSignalListener(SignalListener listener);
  // Called (on the registry's worker, never under its lock) when the fault view of the jobs
  // (FaultSnapshot) changed: a reconcile committed a record, or decided one it may not write yet.
  void AddViewListener(std::function<void()> listener);

  // Called with the MindIE job id (pod label jobID) when a pod labelled app=mindie-ms-controller
  // or app=mindie-ms-coordinator is added, changed or deleted (§2.5), after the cache was
  // updated. Runs under the registry's lock: only enqueue. Register before Start.
  using InstanceListener = std::function<void(const std::string& instance_job_id)>;
  void AddInstanceListener(InstanceListener listener);

  // Called for every pod the registry takes (`pod` set, with the job id it belongs to) or drops
  // (`pod` null), keyed "namespace/name", after the cache was updated. Runs under the registry's
  // lock: only update an index. Register before Start. (The pod-IP identity index of
  // auth::PodIdentityIndex is kept this way.)
  using PodListener = std::function<void(const std::string& pod_key, const model::PodInfo* pod,
                                         const std::string& job_id)>;
  void AddPodListener(PodListener listener);

  // Starts the informers of PodGroups, Pods and Nodes (if not yet started), registers on them
  // (the cached objects are delivered before this returns: nodes, pods, then PodGroups), lists
  // the job-summary ConfigMaps, rebuilds the records and queues every job. Before it returns,
  // every job is decided once (DecideStartJobs): the fault view holds them all.
  absl::Status Start();
  // Unregisters from the informers (stops them if they are the registry's own) and stops the
  // reconciles.
  void Stop();
  // The reconciles run on this controller: production starts its worker after Start(); tests and
  // benchmarks driven by a ManualClock pump it (RunUntilIdleForTest, after advancing the clock).
  runtime::Controller& controller() { return controller_; }

  // Watch intake (the handlers call these; tests may too).
  void OnPodGroupEvent(const store::WatchEvent& event);
  void OnPodEvent(const store::WatchEvent& event);
  void OnNodeEvent(const store::WatchEvent& event);

  // Queries: consistent snapshots, safe from any thread.
  std::vector<JobRecord> Jobs() const;  // ordered by namespace, name, job id
  std::optional<JobRecord> FindJob(std::string_view job_id) const;
  // The job named `name` in `ns`; a live record wins over a pre-deleted one. With running_only,
  // only a running, not pre-deleted record.
  std::optional<JobRecord> FindJobByName(std::string_view ns, std::string_view name,
                                         bool running_only = false) const;
  std::vector<model::PodInfo> PodsOfJob(std::string_view job_id) const;
  // MindIE (§1.5): pods of the jobs whose PodGroup has labels jobID=`instance_job_id` and
  // app=`app_type`, in `ns` (any namespace when empty). Read from the cache, so they are current
  // even before the jobs were reconciled.
  std::vector<model::PodInfo> PodsOfInstance(std::string_view ns, std::string_view instance_job_id,
                                             std::string_view app_type) const;
  // Namespace of a PodGroup with labels jobID=`instance_job_id`, app=`app_type`.
  std::optional<std::string> NamespaceOfInstance(std::string_view instance_job_id,
                                                 std::string_view app_type) const;
  // §3.4 snapshot batches of every record (see SnapshotBatches), uuids stamped.
  std::vector<std::vector<model::JobSummarySignal>> SnapshotSignals() const;
  // Operations waiting to be reconciled.
  size_t PendingOperations() const;

  // The fault centre's view of every job, one consistent snapshot (added for the fault centre;
  // implemented in job_registry_fault_snapshot.cc): the record, its PodGroup (null when gone)
  // and its pods by name. Records, pods and PodGroups are shared, not copied.
  //
  // A job whose reconcile is waiting for a token of the write bucket (or whose job-summary write
  // failed) appears with the record its reconcile decided: the bucket paces the ConfigMap
  // writes, not what clusterd knows, so a fault on a job whose pods are in the store reaches the
  // job even while thousands of jobs wait for their summaries to be written (a restart, a burst
  // of new jobs). Its job-summary signal still follows the write.
  struct FaultSnapshotEntry {
    std::shared_ptr<const JobRecord> record;
    std::shared_ptr<const model::PodGroupInfo> pod_group;
    std::vector<std::shared_ptr<const model::PodInfo>> pods;
  };
  std::vector<FaultSnapshotEntry> FaultSnapshot() const;

  // The fault view's changes since `cursor` (0: from nothing), so that a reader keeps its copy
  // up to date at the cost of what changed, not of every job: at 20,000 jobs reading the whole
  // snapshot on every change was a fifth of clusterd's CPU and delayed process-fault reports.
  // Every change of a job's record (committed or decided), PodGroup or pods moves the cursor.
  struct FaultViewChanges {
    uint64_t cursor = 0;  // pass it to the next call
    // `jobs` is the whole view, not a difference: `cursor` was 0, or so old that jobs which
    // left the view since were forgotten (the registry remembers a bounded number of them).
    bool everything = false;
    std::vector<FaultSnapshotEntry> jobs;  // jobs changed and in the view, as FaultSnapshot
    std::vector<std::string> gone;         // jobs changed and no longer in the view
  };
  FaultViewChanges FaultViewChangesSince(uint64_t cursor) const;

  // The key of the hourly consistency re-check in the queue (not a valid UID).
  static constexpr std::string_view kConsistencyKey = "#consistency";

 private:
  struct PodEntry {
    std::shared_ptr<const model::PodInfo> pod;
    std::string job_id;
  };

  runtime::Result Reconcile(const std::string& key);
  // Without a token of the write bucket: decides the job's step once per generation and keeps
  // the record it would write for the fault view; says when a token is due.
  runtime::Result DecideAhead(const std::string& key, JobOperation op, uint64_t generation,
                              absl::Duration wait);
  // nullopt when `key` may reconcile now: a token was free, or the one it reserved is paid
  // for. Otherwise how long until its reserved token is: a key reserves once, so a backlog of
  // N keys costs N reserves, not N wake-ups for every token the bucket refills.
  std::optional<absl::Duration> WaitForTokenLocked(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls the view listeners when the fault view moved since they were last called.
  void NotifyView();
  // Records that the fault view of `job_id` changed (or may have: its inputs were queued).
  void MarkViewLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job's record in the fault view (the decided one ahead of the committed); null when the
  // job is not in the view.
  std::shared_ptr<const JobRecord> ViewRecordLocked(const std::string& job_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<FaultSnapshotEntry> FaultEntryLocked(const std::string& job_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<FaultSnapshotEntry> FaultSnapshotLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // At Start: decides every job found in the store, as DecideAhead does, on every core
  // (parallel_for), so that the fault view (FaultSnapshot) holds each job's rank table when
  // Start returns, however many wait for a write token. Returns the number of jobs decided.
  size_t DecideStartJobs();
  runtime::Result ReconcileExpiry(const std::string& job_id);
  runtime::Result RunConsistencyCheck();
  // Store writes of a step; the first failure.
  // Both return how many ConfigMaps the store committed (a write of what it holds already
  // commits nothing).
  absl::StatusOr<size_t> Execute(const JobRecord& record, const JobStep& step);
  absl::StatusOr<bool> WriteConfigMap(const ConfigMapWrite& write);
  void Emit(model::JobSummarySignal signal);
  void Reject(std::string_view reason, std::string_view message, bool loud);

  void QueueOperation(const std::string& job_id, JobOperation op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyPodGroup(store::WatchEventType type, const store::Object& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyPod(store::WatchEventType type, const store::Object& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyNode(store::WatchEventType type, const store::Object& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecoverFromSummary(const store::Object& config_map) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemovePod(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Decodes the pods the informer holds at start-up, in parallel and unlocked (decoding reads
  // the object and the options alone), for ApplyPod to take as the replay delivers them.
  void PreparePods(std::vector<std::shared_ptr<const store::Object>> pods);
  absl::StatusOr<model::PodInfo> DecodePod(const store::Object& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyInstance(const model::PodInfo& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IgnoredSoftSharePodGroup(const model::PodGroupInfo& pg) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pre-deleted records by "namespace/name" of their job: what Observe looks for when a job
  // is added (a new job of the name replaces them).
  using PreDeletedByName = absl::flat_hash_map<std::string, std::vector<std::string>>;
  PreDeletedByName PreDeletedRecordsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `pre_deleted`: PreDeletedRecordsLocked() when many jobs are observed at once (a pass over
  // every record for each added job made the start-up decisions quadratic); null: the records
  // are looked through.
  JobObservation Observe(const std::string& job_id, JobOperation op,
                         std::vector<std::shared_ptr<const model::PodInfo>>* keep_alive,
                         const PreDeletedByName* pre_deleted = nullptr) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateGaugesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::ObjectStore& store_;
  std::unique_ptr<store::InformerFactory> own_informers_;  // when none was given
  store::InformerFactory* const informers_;
  Clock& clock_;
  const Options options_;
  TokenBucket bucket_;
  std::vector<SignalListener> listeners_;
  std::vector<InstanceListener> instance_listeners_;
  std::vector<PodListener> pod_listeners_;

  mutable absl::Mutex mu_;
  // Caches, keyed by namespace/name.
  absl::flat_hash_map<std::string, std::shared_ptr<const model::PodGroupInfo>> pod_groups_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> pod_group_of_job_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, PodEntry> pods_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> pod_by_uid_ ABSL_GUARDED_BY(mu_);
  // PreparePods' results by object, until the start-up replay hands each object to ApplyPod
  // (the entry keeps its object alive, so an address cannot stand for another object).
  struct PreparedPod {
    std::shared_ptr<const store::Object> object;
    absl::StatusOr<model::PodInfo> pod;
  };
  absl::flat_hash_map<const store::Object*, PreparedPod> prepared_pods_ ABSL_GUARDED_BY(mu_);
  // job id -> pod name -> pod (name order makes every build deterministic)
  absl::flat_hash_map<std::string, std::map<std::string, std::shared_ptr<const model::PodInfo>>>
      pods_of_job_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> node_serial_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> node_serial_by_ip_ ABSL_GUARDED_BY(mu_);
  // Immutable once stored: a reconcile reads one without copying and replaces it whole.
  absl::flat_hash_map<std::string, std::shared_ptr<const JobRecord>> records_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, JobOperation> pending_ ABSL_GUARDED_BY(mu_);
  // Bumped by every QueueOperation: tells a decided-but-unwritten record from a stale one.
  absl::flat_hash_map<std::string, uint64_t> generation_ ABSL_GUARDED_BY(mu_);
  // Records decided but not yet written (see FaultSnapshot), with the generation they were
  // decided at. A committed record replaces its entry.
  struct Provisional {
    uint64_t generation = 0;
    std::shared_ptr<const JobRecord> record;  // null: the decision drops the record
  };
  absl::flat_hash_map<std::string, Provisional> provisional_ ABSL_GUARDED_BY(mu_);
  // Keys waiting for the reconcile bucket, and when the token each reserved is paid for.
  absl::flat_hash_map<std::string, absl::Time> token_due_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> view_listeners_;
  // The fault view's change log (FaultViewChangesSince): each job at the sequence number of its
  // last change. Jobs that left the view are dropped from it once they outnumber the view;
  // `view_floor_` is the newest change so forgotten.
  uint64_t view_seq_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t view_floor_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t view_notified_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, uint64_t> view_seq_of_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::string> view_log_ ABSL_GUARDED_BY(mu_);

  std::vector<std::unique_ptr<store::InformerRegistration>> registrations_;

  Gauge& jobs_gauge_;
  Gauge& pods_gauge_;
  Counter& signals_add_;
  Counter& signals_delete_;
  Counter& write_failures_;
  Histogram& reconcile_seconds_;
  // Last: its worker calls Reconcile, which uses everything above.
  runtime::Controller controller_;
};

}  // namespace clusterd::cluster
