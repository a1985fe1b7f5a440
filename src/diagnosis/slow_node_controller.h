#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "diagnosis/degradation_handler.h"
#include "diagnosis/feat_conf.h"
#include "diagnosis/profiling_data_source.h"
#include "diagnosis/public_fault.h"
#include "diagnosis/slow_node_algorithm.h"
#include "model/job_profiling_switch.h"
#include "runtime/controller.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::diagnosis {

// The job as the controller needs it (from the job-summary stream or the PodGroup).
struct SlowNodeJob {
  std::string ns;
  std::string name;
  std::string job_id;
  std::string status;                // running, pending, failed, complete, delete
  std::vector<ServerRanks> servers;  // from the rank table; empty: grouped by cardOneNode
  int64_t reschedule_count = 0;      // TotalRescheduleTimes; a change restarts detection
  bool operator==(const SlowNodeJob&) const = default;
};
inline constexpr std::string_view kJobStatusRunning = "running";
inline constexpr std::string_view kJobStatusComplete = "complete";

// Pull source of job state, asked on every tick when no summary was pushed with ObserveJob.
using SlowNodeJobLookup =
    std::function<std::optional<SlowNodeJob>(const std::string& ns, const std::string& name)>;
// Default lookup: the PodGroup whose controller owner (or own name) is the job; job id = the
// owner's uid; status = lower-cased status.phase ("Running" -> running).
SlowNodeJobLookup PodGroupJobLookup(store::ObjectStore& store);

// Turns the job's profiling on or off (§6.2 through ModifyTrainingDataTraceSwitch).
class ProfilingSwitchWriter {
 public:
  virtual ~ProfilingSwitchWriter() = default;
  virtual absl::Status SetProfiling(const SlowNodeJob& job,
                                    const model::ProfilingSwitch& value) = 0;
};
// Default: creates or updates `data-trace-<job>` (label reset=true, ownerReference to the
// AscendJob when the job id is known, data.profilingSwitch) in the job namespace, the ConfigMap
// of §5.2 that the device plugin mirrors to the pods.
class StoreProfilingSwitchWriter final : public ProfilingSwitchWriter {
 public:
  explicit StoreProfilingSwitchWriter(store::ObjectStore& store) : store_(store) {}
  absl::Status SetProfiling(const SlowNodeJob& job, const model::ProfilingSwitch& value) override;

 private:
  store::ObjectStore& store_;
};
model::ProfilingSwitch HeavyProfiling();  // all five on
model::ProfilingSwitch LightProfiling();  // CommunicationOperator off, the others on
model::ProfilingSwitch NoProfiling();     // all five off

struct SlowNodeControllerOptions {
  // Where the ranks' profiling data come from (not owned; outlives the controller). Null: a
  // FileProfilingDataSource on profiling_root and max_file_bytes.
  ProfilingDataSource* source = nullptr;
  // Root of the ranks' data: <profiling_root>/<jobId>/<rank>/{steptime.csv,comm.csv,
  // parallel_group.json} (the node-side layout of §5.5/§6.3), when `source` is null.
  std::string profiling_root = "/user/cluster-info/profiling";
  std::string reporter_node = "clusterd";  // influence nodeName of the faults (§6.2)
  std::string reporter_ip = "127.0.0.1";   // key of the cluster result JSON
  StatisticsMode mode = StatisticsMode::kIntended;
  // Initial profiling: steps every rank must have before detection starts (§6.2 step 3).
  int64_t initial_steps = 20;
  absl::Duration readiness_poll = absl::Seconds(10);
  absl::Duration node_report_timeout = absl::Seconds(7200);
  absl::Duration all_nodes_report_timeout = absl::Seconds(60);
  absl::Duration retry_delay = absl::Seconds(3);  // profiling switches and fault reports
  int max_retries = 20;
  // Largest parallel_group.json read (the file source, when `source` is null).
  size_t max_file_bytes = 64 << 20;
  // Newest samples kept per rank and series between rounds (at least 2·(N + K)): the CSVs are
  // read incrementally, so a round costs the lines appended since the last one.
  size_t max_samples_per_series = 128;
  // The process's shared ConfigMap informer (ClusterBrain's); null: an informer of the
  // controller's own over the store.
  store::InformerFactory* informers = nullptr;
};

// Per-rank line of the view.
struct SlowNodeRankView {
  int64_t rank = 0;
  std::string node;
  double mean = 0;  // stepTime baseline μ (ns)
  double sigma = 0;
  int64_t count = 0;
  int64_t last_step = 0;
  bool slow = false;
  double degradation = 0;
  std::string result;  // "slow", "normal", "no data", "waiting"
};

// What `clusterctl get slownode` shows for one watched job.
struct SlowNodeJobView {
  std::string config_map;  // ns/name of the ras-feature-slownode ConfigMap
  std::string ns;
  std::string job_name;
  std::string job_id;
  std::string state;  // invalid, disabled, waiting-for-job, profiling, detecting, degraded, stopped
  std::string reason;  // why invalid / stopped, last bad input
  int step = 0;        // §6.2 step: 0 not running, 1 initial profiling, 2 detection
  bool heavy_profiling = false;
  bool degraded = false;
  int64_t rounds = 0;
  std::vector<SlowNodeRankView> ranks;
  std::optional<ClusterResult> last_result;
  nlohmann::ordered_json ToJson() const;
};

// Orchestrates slow-node detection (§6.2) for every `ras-feature-slownode-*` ConfigMap: watches
// the ConfigMaps, follows the job, switches profiling, reads the ranks' profiling data every
// nSecondsDoOneDetection, runs the node- and cluster-level algorithms and the degradation
// handler, and reports public faults 110001010 / 100001011 through the sink.
//
// Every event only enqueues a key ("cm/<ns>/<name>" or "job/<ns>/<jobName>") in the controller
// (runtime/controller.h); its worker reconciles from the current objects. A job's period is its
// key's RequeueAfter on the Clock. Tests drive it on their own thread with Resync and
// controller().RunUntilIdleForTest() on a ManualClock, never calling Start.
class SlowNodeController {
 public:
  SlowNodeController(store::ObjectStore& store, Clock& clock, PublicFaultSink& sink,
                     SlowNodeControllerOptions options = {}, SlowNodeJobLookup lookup = nullptr,
                     ProfilingSwitchWriter* switcher = nullptr);
  ~SlowNodeController();
  SlowNodeController(const SlowNodeController&) = delete;
  SlowNodeController& operator=(const SlowNodeController&) = delete;

  // Production: watches the ConfigMaps (label fd-ol-slow-node=true) and runs one worker.
  absl::Status Start();
  void Stop();

  // A job summary (from the Job service stream): replaces the lookup for this job.
  void ObserveJob(const SlowNodeJob& job);
  // A node restarted (the node-restart-info CM of §6.2 step 8): restarts every job using it.
  void NodeRestarted(const std::string& node_ip);

  // Lists the ConfigMaps and queues them (start-up, tests).
  absl::Status Resync();
  runtime::Controller& controller() { return controller_; }

  std::vector<SlowNodeJobView> Views() const;
  std::optional<SlowNodeJobView> View(const std::string& ns, const std::string& job_name) const;

 private:
  struct Context;
  runtime::Result Reconcile(const std::string& key);
  runtime::Result ReconcileConfigMap(const std::string& ns, const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns when the job's key wants to be reconciled again, if it does.
  std::optional<absl::Duration> ReconcileJob(const std::string& job_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<SlowNodeJob> CurrentJob(const Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartDetection(Context& ctx, const SlowNodeJob& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ComputeLayout(Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t MaxSamples(const Context& ctx) const;
  void StopDetection(Context& ctx, bool job_completed, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckInitialProfiling(Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DetectionRound(Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Execute(Context& ctx, const DegradationAction& action, const DegradationState& before)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SwitchProfiling(Context& ctx, const model::ProfilingSwitch& value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushReports(Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishView(const std::string& job_key, const Context* ctx)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::ObjectStore& store_;
  Clock& clock_;
  PublicFaultSink& sink_;
  const SlowNodeControllerOptions options_;
  SlowNodeJobLookup lookup_;
  std::unique_ptr<ProfilingDataSource> own_source_;
  ProfilingDataSource* source_;
  std::unique_ptr<StoreProfilingSwitchWriter> own_switcher_;
  ProfilingSwitchWriter* switcher_;

  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Context>> contexts_ ABSL_GUARDED_BY(mu_);  // ns/job
  std::map<std::string, std::string> job_of_cm_ ABSL_GUARDED_BY(mu_);      // cm ns/name -> ns/job
  std::map<std::string, std::string> invalid_cms_ ABSL_GUARDED_BY(mu_);    // cm ns/name -> reason
  std::map<std::string, SlowNodeJob> observed_jobs_ ABSL_GUARDED_BY(mu_);  // ns/job

  mutable absl::Mutex view_mu_;
  std::map<std::string, SlowNodeJobView> views_ ABSL_GUARDED_BY(view_mu_);  // ns/job or cm

  std::unique_ptr<store::InformerFactory> own_informers_;  // when none was given
  std::unique_ptr<store::InformerRegistration> registration_;
  // Last: its worker calls Reconcile, which uses everything above.
  runtime::Controller controller_;
};

// "[2 5]", the Go rendering of a rank slice used in the log lines.
std::string GoIntSlice(const std::vector<int64_t>& v);

}  // namespace clusterd::diagnosis
