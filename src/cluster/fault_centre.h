#pragma once

// The cluster fault centre (fault-pipeline.md §7, §9, §1.4, §1.8, §1.10): Node and ConfigMap
// events in (handlers on the shared informers, store/informer.h); cluster-info ConfigMaps,
// statistic-fault-info, clusterd-manual-info-cm, pod labels and per-job fault snapshots out.
//
// Event-driven and level-triggered: an informer handler only records the newest object for its
// key and queues the key (fault_centre_key.h: `dev/<node>`, `nod/<node>`, `pf/<ns>/<name>`,
// `k8s/<node>`) on a keyed controller (runtime/controller.h), so a burst of writes for one node
// is processed once. One worker (controller().Start(), or controller().RunUntilIdleForTest() in
// tests) owns all state: it verifies the ConfigMap (a bad one keeps the node's last good state,
// is logged and counted), runs the node's processors (fault_pipeline.h) on a copy of its
// original record, re-renders that node's cluster-info entry, and queues the jobs using the
// node (`job/<id>`), whose job centre (fault_job_centre.h) produces the snapshot handed to
// every JobFaultSink when it changed. Time-based verdicts (a filter that runs out, a public
// fault's 5 s visibility, relation time-outs) and the periodic work come back as the key's
// RequeueAfter on the Clock; nothing polls on the hot path.
//
// The parts, one file each: intake, dispatch and configuration (fault_centre.cc), the node
// pipelines (fault_centre_nodes.cc), job mapping (fault_centre_jobs.cc), public faults, manual
// separation and statistic-fault-info (fault_centre_public.cc), the queries
// (fault_centre_queries.cc). Publication is the ClusterInfoPublisher's (its own state and
// writer); the configuration comes from a FaultConfigSource (the files, in production).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/cluster_info_publisher.h"
#include "cluster/cluster_info_shards.h"
#include "cluster/fault_centre_key.h"
#include "cluster/fault_config_source.h"
#include "cluster/fault_intake.h"
#include "cluster/fault_job_centre.h"
#include "cluster/fault_job_faults.h"
#include "cluster/fault_job_index.h"
#include "cluster/fault_pipeline.h"
#include "cluster/fault_signal.h"
#include "cluster/job_registry.h"
#include "cluster/manual_separation.h"
#include "cluster/public_fault_desk.h"
#include "cluster/public_fault_request.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/parallel_for.h"
#include "runtime/controller.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::cluster {

// One row of `clusterctl get faults`.
struct FaultViewRow {
  std::string node;
  std::string npu;  // NPU name, or "-" for whole-node (switch, NodeD) rows
  std::string code;
  std::string level;
  std::string source;             // device, network, public, manual, switch, node
  int64_t since_ms = 0;           // clusterd's first receive time
  std::vector<std::string> jobs;  // jobs using the NPU (or the node)
};

// The configuration the centre runs with, and where each part came from (GET
// /api/clusterd/v1/configuration, `clusterctl get configuration`).
struct FaultConfigurationView {
  ManualSeparationPolicy manual_separation;
  std::string manual_separation_source;      // "cluster-system/clusterd-config-cm", or the default
  int64_t manual_separation_applied_ms = 0;  // 0: never read from the ConfigMap
  std::string public_fault_source;           // the file in use
  std::set<std::string> public_fault_resources;
  size_t public_fault_codes = 0;
  size_t relation_rules = 0;
  size_t fault_durations = 0;
  std::string data_dir;
  std::vector<std::string> notes;  // as ConfigurationNotes
};

class FaultCentre {
 public:
  struct Options {
    // The relation-fault and public-fault configuration (fault_config_files.h in production);
    // Start fails when its required part is missing or invalid. Null: none (public faults are
    // refused). Every config_poll_period the centre asks it whether anything changed.
    FaultConfigSource* config = nullptr;
    size_t shard_limit_bytes = ClusterInfoShards::kDefaultLimitBytes;
    double max_writes_per_second = 5;
    int64_t write_burst = 5;
    // Every this often the worker re-reads the job registry (jobs also trigger it on signals).
    absl::Duration job_index_period = absl::Seconds(5);
    // The job index is rebuilt from the registry at most this often: every job the registry
    // reconciles signals a change, and a rebuild reads every job, so a burst of thousands of
    // jobs (a restart, a new cluster) would rebuild it thousands of times (seconds of a
    // 10,000-node start-up). Zero: at every signal.
    absl::Duration job_index_min_interval = absl::Milliseconds(100);
    absl::Duration manual_sync_period = absl::Seconds(15);
    absl::Duration manual_config_period = absl::Seconds(300);
    absl::Duration statistic_min_interval = absl::Seconds(1);
    absl::Duration config_poll_period = absl::Seconds(2);
    IntakeLimits intake;
    // deviceNameCustomization.json (clusterd --device-name-file): how customised nodes name
    // their devices.
    model::DeviceNaming naming;
    // A centre holds at most this many device records (a memory bound: about 25 KiB each);
    // new nodes beyond it are refused, counted, and named on /readyz. The original holds about
    // 16,000 (fault-pipeline.md §7.1); clusterd aims at 50,000 nodes on one brain.
    size_t max_device_records = 65536;
    // Whether a node without a Kubernetes Node object counts as not ready. Default: only once
    // the store has any Node object (the embedded store often has none).
    enum class MissingNode { kAuto, kNotReady, kReady };
    MissingNode missing_node = MissingNode::kAuto;
    // Tests feed store events through Observe instead (Start then lists the store once).
    bool watch_store = true;
    // The process's shared informers of Nodes and ConfigMaps (ClusterBrain's); null: the
    // centre keeps informers of its own over the store (benchmarks, standalone use).
    store::InformerFactory* informers = nullptr;
    // Runs fn(0) .. fn(n - 1), each item independent; used for the start-up decoding of every
    // node's device-info ConfigMap. ClusterBrain passes ParallelFor (every core); unset, the
    // items run in turn on the calling thread, so the centre starts no thread of its own.
    ParallelRunner parallel_for;
  };

  FaultCentre(store::ObjectStore& store, Clock& clock, const JobRegistry* registry,
              Options options);
  ~FaultCentre();
  FaultCentre(const FaultCentre&) = delete;
  FaultCentre& operator=(const FaultCentre&) = delete;

  // Register before Start. Sinks are called on the worker thread, never under a lock.
  void AddJobFaultSink(JobFaultSink* sink);
  // Whether the MindIE instance of a job is subscribed to the Fault service (§7.3 step 2: such
  // server jobs implicitly filter RestartRequest faults for 60 s). Set before Start.
  void SetFaultSubscribed(std::function<bool(const std::string& instance_job_id)> fn) {
    fault_subscribed_ = std::move(fn);
  }

  // Loads configuration and durable state, registers on the informers (or lists the store
  // once) and decodes every node's device-info: the part of the initial view that needs no job,
  // so that it may run beside the job registry's start. Start calls it when it was not called.
  absl::Status Prepare();
  // Builds the job index from the registry and processes everything (the initial view); the
  // informers' changes follow. Call after the registry's Start, whose jobs the view maps.
  absl::Status Start();
  // Closes the watches and stops the key worker and the cluster-info writer.
  void Stop();
  FaultCentreController& controller() { return controller_; }
  // The cluster-info writer (production: writer().Start()).
  runtime::Controller& writer() { return publisher_.writer(); }
  // Tests with a ManualClock: runs the writer's reconcile on the calling thread until it has
  // nothing to write, its tokens run out or a write fails; returns the shards written.
  size_t FlushWrites() { return publisher_.FlushWrites(); }

  // The job registry signalled a change (its listener calls this; cheap, any thread).
  void JobsChanged();
  // Watch intake (the store watches call it; tests may too): records the newest object of a
  // device-info / node-info / public-fault ConfigMap or a Node and queues its key.
  void Observe(std::string_view resource, const store::WatchEvent& event);

  // PubFault.SendPublicFault (§9): rate limit, validation, application. Any thread.
  PublicFaultVerdict SendPublicFault(const PublicFaultRequest& request);

  // Business-plane reports from the recovery controller (recovery-protocol.md §8.2, §8.3).
  void ReportBusinessRetry(const std::string& job_id, int64_t rank, int type);
  void ReportRetryComplete(const std::string& job_id, int64_t rank);
  // The recovery controller's pods that must exit (recovery-protocol.md §9.8): the faults their
  // NPUs carry now are no longer retry faults. For 60 s (as a business report) the Retry stage
  // stops hiding them, their business retry reports stop counting, RecoverInPlace stops hiding
  // the pods' faults, and the job's ranks for them are not step retry. A job the centre does not
  // know, a pod rank the job does not have, or a pod with no fault and no retry report is refused
  // (logged and counted as kind `not-retryable`) and changes nothing; the other ranks still count.
  void ReportNotRetryable(const std::string& job_id, const std::vector<int64_t>& pod_ranks);
  // Nodes of a running stress test (§7.3 step 6).
  void SetStressTestNodes(std::set<std::string> nodes);

  // ---- queries (any thread) ----
  std::vector<FaultViewRow> FaultRows(const std::string& node, const std::string& job) const;
  FaultMsgSignal ClusterSignal() const;  // §4.6
  std::optional<JobFaultRanks> JobFaults(const std::string& job_id) const;
  // Register's check: a job with that id, or a MindIE job with that instance id and app type.
  bool JobKnown(const std::string& job_id, const std::string& role) const;
  bool JobExists(const std::string& job_id) const;
  // Problems with optional configuration files, and nodes refused for the record limit, one
  // line each (/readyz shows them).
  std::vector<std::string> ConfigurationNotes() const;
  FaultConfigurationView Configuration() const;
  // Rendered content of a cluster-info ConfigMap as the centre holds it (tests, benchmarks).
  std::string ShardContent(const std::string& cm_name) const;
  std::string ShardOfNode(const std::string& node) const;  // device kind
  size_t DeviceNodeCount() const;
  size_t DeviceShardCount() const;
  size_t PendingKeys() const { return controller_.Ready(); }

 private:
  struct NodeState {
    std::optional<DeviceRecord> device_original;
    std::optional<SwitchRecord> switch_original;
    std::optional<NodeRecord> node_original;
    std::optional<DeviceCycleOutput> device_out;
    std::optional<SwitchRecord> switch_out;
    std::optional<NodeRecord> node_out;
    DeviceCycleState device_state;
    SwitchCycleState switch_state;
    bool k8s_exists = false;
    bool k8s_ready = false;
    std::string ip;
    std::string sn;
  };
  struct JobState {
    RelationState relation;
    JobFaultRanks last;
    bool delivered = false;
    std::string digest;
  };
  using Kind = FaultCentreKey::Kind;

  // The worker's reconcile: dispatches the key to its part, then hands out what it produced.
  runtime::Result Reconcile(const FaultCentreKey& key);
  // Key handlers, on the worker, under mu_. Each returns when its own key wants to come back
  // (a pipeline's next due time), queues the jobs it affected in `jobs`.
  std::optional<int64_t> HandleDevice(const std::string& node, std::vector<std::string>* jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleNodeInfo(const std::string& node, std::vector<std::string>* jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleK8sNode(const std::string& node, std::vector<std::string>* jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandlePublicFaultCm(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<int64_t> HandleJob(const std::string& job_id,
                                   std::vector<JobFaultRanks>* deliveries,
                                   std::vector<PodLabelPatch>* patches)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<int64_t> ExpirePublicFaults() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The newest watched object of `key` not yet taken. Nothing pending: nullopt; a deletion: a null
  // object. The object is the store's own (shared), not a copy.
  using PendingObject = std::optional<std::shared_ptr<const store::Object>>;
  PendingObject TakePending(const FaultCentreKey& key);
  // The initial view decodes every node's device-info ConfigMap, each independent of the
  // others: they are decoded ahead, on several threads (about a third of a restart's initial
  // view at 50,000 nodes), and HandleDevice takes the result for the object it was made from.
  void PrepareDeviceIntakes();
  absl::StatusOr<DeviceIntake> DecodeDeviceInfo(const std::string& node,
                                                const std::shared_ptr<const store::Object>& cm)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Re-reads the registry (outside mu_) and, when anything changed, updates the index (under mu_)
  // with the jobs that changed and those that are gone.
  void RefreshIndex(std::vector<std::string>* gone);
  void UpdateIndex(std::vector<FaultJob> changed, const std::vector<std::string>& removed,
                   std::vector<std::string>* gone) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A node's device-info pipelines (switch, then NPUs) in three steps: PrepareNodeRun updates
  // the centre's state they read (forgets old retry reports, the MindIE filter policies of the
  // node's jobs); ComputeNodeRun runs the processors and renders the cluster-info entries,
  // reading the centre's state and writing only the node's own cycle state, so that the
  // initial view runs it for many nodes side by side; ApplyNodeRun publishes the result and
  // queues the affected jobs. Returns when the node's pipelines want to run again.
  std::optional<int64_t> ProcessNode(const std::string& node, NodeState& ns,
                                     std::vector<std::string>* jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  struct NodeRun {
    std::optional<SwitchCycleOutput> switch_out;
    std::string switch_entry;
    std::optional<DeviceCycleOutput> device_out;
    std::string device_entry;
    bool device_changed = false;
  };
  void PrepareNodeRun(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  NodeRun ComputeNodeRun(const std::string& node, NodeState& ns, int64_t now) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::optional<int64_t> ApplyNodeRun(const std::string& node, NodeState& ns, NodeRun run,
                                      std::vector<std::string>* jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets business and not-retryable reports older than 60 s.
  void ForgetOldRetryReports(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The device pipeline's input for the node (its device-info record taken in).
  DeviceCycleInput DeviceInputFor(const std::string& node, const NodeState& ns, int64_t now) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The initial view: while Start drains the keys, device-info keys only take in their object
  // and job keys wait (both are remembered); then every such node's pipelines run on every
  // core (ParallelRunner), and the waiting jobs are queued once, with every node's result.
  void RunDeferredNodePipelines();
  JobNodeView ViewOf(const std::string& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job's business retry reports that still count: those made after the NPU was last
  // reported not retryable.
  RetryBook LiveRetryBook(const std::string& job_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When the NPU `id` of `node` was last reported not retryable for the job, if it was.
  std::optional<int64_t> NotRetryableSince(const std::string& job_id, const std::string& node,
                                           int64_t id) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool NodeReady(const NodeState* ns) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueJobsOn(const std::string& node, std::vector<std::string>* jobs) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues what a public-fault outcome asks for: the changed nodes' pipelines, the expiry and
  // the statistic write.
  void FollowUp(const PublicFaultDesk::Outcome& outcome);
  // The node of a serial number (the node annotation), for public-fault validation.
  std::optional<std::string> NodeBySerial(const std::string& sn) const;
  // Queues another key for `due_ms` on the clock (an earlier pending time wins).
  void ScheduleAt(const FaultCentreKey& key, int64_t due_ms);
  // The wake-up of the key being reconciled, `due_ms` on the clock.
  runtime::Result WakeAt(std::optional<int64_t> due_ms) const;
  int64_t NowMs() const;

  // The initial objects and every change: handlers on the shared informers (watch_store), or
  // one list of the store (tests that feed Observe). Either way they are stashed and queued.
  absl::Status RegisterOnInformers();
  absl::Status ListOnce();

  // Configuration: asks the source, applies what changed (under mu_).
  void LoadConfig();
  void ApplyConfig(FaultConfigRead read) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Manual separation's periodic work; each returns when its key comes back.
  std::optional<int64_t> RunManualTriage() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunManualConfig();
  void PatchPodLabels(const std::vector<PodLabelPatch>& patches);

  store::ObjectStore& store_;
  Clock& clock_;
  const JobRegistry* registry_;
  const Options options_;
  std::vector<JobFaultSink*> sinks_;
  std::function<bool(const std::string&)> fault_subscribed_;
  FaultConfigSource* const config_;
  std::unique_ptr<store::InformerFactory> own_informers_;  // watch_store without informers
  store::InformerFactory* const informers_;
  std::vector<std::unique_ptr<store::InformerRegistration>> registrations_;

  // Newest watched objects not yet taken by the worker (nullopt: deleted).
  absl::Mutex pending_mu_;
  std::map<std::string, std::shared_ptr<const store::Object>> pending_ ABSL_GUARDED_BY(pending_mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, NodeState> nodes_ ABSL_GUARDED_BY(mu_);
  struct PreparedIntake {
    std::shared_ptr<const store::Object> config_map;
    absl::StatusOr<DeviceIntake> intake;
  };
  std::map<std::string, PreparedIntake> prepared_intakes_ ABSL_GUARDED_BY(mu_);
  bool prepared_ = false;                               // Prepare ran (the starting thread's)
  absl::Duration prepare_time_ = absl::ZeroDuration();  // its decoding, for the start-up log
  size_t device_records_ ABSL_GUARDED_BY(mu_) = 0;
  // Nodes whose device-info was refused for max_device_records (until it is accepted or gone).
  std::set<std::string> refused_device_nodes_ ABSL_GUARDED_BY(mu_);
  // The initial view's drain (Start): the nodes whose pipelines and the jobs whose snapshots
  // wait until every key has been taken in (RunDeferredNodePipelines).
  bool building_initial_view_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> deferred_nodes_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> deferred_jobs_ ABSL_GUARDED_BY(mu_);
  size_t k8s_nodes_ ABSL_GUARDED_BY(mu_) = 0;
  // Serial number -> node; a leaf lock, so that the public-fault desk may ask under its own.
  mutable absl::Mutex sn_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::map<std::string, std::string> node_by_sn_ ABSL_GUARDED_BY(sn_mu_);
  FaultJobIndex index_ ABSL_GUARDED_BY(mu_);
  // The registry snapshot the index was built from, kept alive so that an unchanged job (the
  // same record, PodGroup and pod objects) is recognised by pointer and not built again.
  std::map<std::string, JobRegistry::FaultSnapshotEntry> index_source_;  // by job id; worker only
  uint64_t index_cursor_ = 0;  // of the registry's FaultViewChangesSince; worker only
  absl::Time last_index_refresh_ = absl::InfinitePast();                 // worker only
  absl::Duration index_refresh_gap_ = absl::ZeroDuration();              // worker only
  std::map<std::string, JobState> jobs_ ABSL_GUARDED_BY(mu_);
  RelationConfig relation_config_ ABSL_GUARDED_BY(mu_);
  // Why the optional user configuration is not in use ("" = it is, or there is none).
  std::string configuration_note_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<std::pair<std::string, int64_t>, RetryReport>> retry_
      ABSL_GUARDED_BY(mu_);  // job -> (node, physical id) -> report
  // job -> (node, physical id) -> when its pod was reported not retryable; forgotten after 60 s.
  std::map<std::string, std::map<std::pair<std::string, int64_t>, int64_t>> not_retryable_
      ABSL_GUARDED_BY(mu_);
  std::set<std::string> stress_nodes_ ABSL_GUARDED_BY(mu_);
  // Custom-filter policies with the MindIE implicit rule added (§7.3 step 2), by job.
  std::map<std::string, FaultJobPolicy> mindie_policies_ ABSL_GUARDED_BY(mu_);

  // The parts that own their state, each under its own lock (taken after mu_, never before):
  // publication (the cluster-info shards and their writer), public faults, manual separation.
  ClusterInfoPublisher publisher_;
  PublicFaultDesk public_faults_;
  ManualSeparation manual_;

  Counter& snapshots_;
  Histogram& process_seconds_;
  Gauge& device_nodes_gauge_;
  Gauge& refused_nodes_gauge_;

  // Last: its worker calls Reconcile, which uses everything above.
  FaultCentreController controller_;
};

}  // namespace clusterd::cluster
