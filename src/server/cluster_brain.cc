#include "server/cluster_brain.h"

#include "common/log.h"
#include "common/parallel_for.h"
#include "common/status_util.h"

namespace clusterd::server {
namespace {

// Start-up decoding (device-info ConfigMaps, pods) on every core, on threads named
// `thread_name`, 1,024 items a thread at least (fewer are not worth a thread).
ParallelRunner StartupRunner(std::string thread_name) {
  return [thread_name = std::move(thread_name)](size_t n, const std::function<void(size_t)>& fn) {
    ParallelFor(n, /*min_per_thread=*/1024, thread_name, fn);
  };
}

// The fault centre reads its configuration files through the source the brain owns, and the
// store through the brain's informers.
cluster::FaultCentre::Options WithConfig(cluster::FaultCentre::Options options,
                                         cluster::FaultConfigSource* config,
                                         store::InformerFactory* informers) {
  options.config = config;
  if (options.informers == nullptr) options.informers = informers;
  if (!options.parallel_for) options.parallel_for = StartupRunner("fault-intake");
  return options;
}

cluster::JobRegistry::Options WithParallelStart(cluster::JobRegistry::Options options) {
  if (!options.parallel_for) options.parallel_for = StartupRunner("pod-intake");
  return options;
}

// The diagnosis controllers read their files through the sources the brain owns.
diagnosis::SlowNodeControllerOptions WithSource(diagnosis::SlowNodeControllerOptions options,
                                                diagnosis::ProfilingDataSource* source,
                                                store::InformerFactory* informers) {
  if (options.source == nullptr) options.source = source;
  if (options.informers == nullptr) options.informers = informers;
  return options;
}

}  // namespace

ClusterBrain::ClusterBrain(store::ObjectStore& store, Clock& clock, Options options)
    : informers_(store),
      jobs_(store, clock, WithParallelStart(options.registry), &informers_),
      global_rank_tables_(store, jobs_, clock, options.global_rank_tables, &informers_),
      data_trace_(store, jobs_),
      fault_config_(options.fault_config, clock),
      faults_(store, clock, &jobs_, WithConfig(options.faults, &fault_config_, &informers_)),
      recovery_(store, clock, &jobs_, &faults_, options.recovery, &informers_),
      goodput_(store, clock, options.goodput),
      slow_node_faults_(faults_, "slow-node"),
      net_faults_sink_(faults_, "slow-network"),
      slow_node_profiling_(store, data_trace_),
      slow_node_data_(options.slow_node.profiling_root, options.slow_node.max_file_bytes),
      slow_nodes_(store, clock, slow_node_faults_,
                  WithSource(options.slow_node, &slow_node_data_, &informers_),
                  /*lookup=*/nullptr, &slow_node_profiling_) {
  faults_.AddJobFaultSink(&recovery_);
  // Goodput: job statuses from the summaries, faults from the per-job snapshots, and the
  // recovery cycles as the executor logs them.
  faults_.AddJobFaultSink(&goodput_);
  jobs_.AddSignalListener(
      [this](const model::JobSummarySignal& signal) { goodput_.OnJobSummary(signal); });
  recovery_.executor().SetCycleObserver(&goodput_);
  // Job identity (auth::Authorizer::ActForJob): which pod IP acts for which job ids.
  jobs_.AddPodListener([this](const std::string& key, const model::PodInfo* pod,
                              const std::string& job_id) {
    if (pod == nullptr) {
      pod_identities_.Remove(key);
      return;
    }
    std::vector<std::string> ids = {job_id};
    if (auto l = pod->labels.find(std::string(model::kLabelMindIeJobId)); l != pod->labels.end()) {
      ids.push_back(l->second);
    }
    pod_identities_.Set(key, pod->pod_ip, std::move(ids));
  });
  // A job signal means its pods, ranks or NPUs may have changed: the fault centre re-reads jobs.
  jobs_.AddViewListener([this] { faults_.JobsChanged(); });
  // The job summaries tell the slow-node controller which jobs run and on which servers (§6.2);
  // jobs without a signal yet are looked up through their PodGroup.
  jobs_.AddSignalListener([this](const model::JobSummarySignal& signal) {
    if (auto job = SlowNodeJobFromSignal(signal)) slow_nodes_.ObserveJob(*job);
  });
  // Slow-network alarms take the same way into the fault centre (the sink is stateless).
  if (!options.net_fault.root.empty()) {
    diagnosis::NetDiagnosisOptions net = options.net_fault;
    if (net.informers == nullptr) net.informers = &informers_;
    if (net.results == nullptr) {
      net_results_ =
          std::make_unique<diagnosis::FilePingmeshResultSource>(net.root, net.max_file_bytes);
      net.results = net_results_.get();
    }
    net_faults_ =
        std::make_unique<diagnosis::NetDiagnosisController>(store, clock, net_faults_sink_, net);
  }
}

ClusterBrain::~ClusterBrain() { Stop(); }

absl::Status ClusterBrain::Start() {
  if (started_) return absl::OkStatus();
  started_ = true;
  // The saved goodput state first: the registry's first summaries continue it.
  if (absl::Status s = goodput_.Restore(); !s.ok()) {
    LogWarn("cluster-brain", "goodput state not read; starting afresh", {{"error", s}});
  }
  // Each room starts the shared informers it registers on (the first one lists the resource).
  // The feed subscribes to the registry's pod changes before the registry lists.
  CLUSTERD_RETURN_IF_ERROR(global_rank_tables_.Start());
  // The registry takes in its jobs while the fault centre takes in its nodes: two rooms that
  // share only the (thread-safe) informers. At 50,000 nodes each is most of a second, much of
  // it on one thread.
  absl::Status registry_started;
  absl::Status faults_prepared;
  ParallelFor(2, /*min_per_thread=*/1, "room-start", [&](size_t room) {
    if (room == 0) {
      registry_started = jobs_.Start();
    } else {
      faults_prepared = faults_.Prepare();
    }
  });
  CLUSTERD_RETURN_IF_ERROR(registry_started);
  CLUSTERD_RETURN_IF_ERROR(faults_prepared);
  jobs_.controller().Start();
  global_rank_tables_.controller().Start();
  // The fault centre builds its initial view with the registry's jobs, then runs its worker
  // and writer.
  CLUSTERD_RETURN_IF_ERROR(faults_.Start());
  faults_.controller().Start();
  faults_.writer().Start();
  // Recorded recovery cycles resume (RestoreAll), then the executor's workers start.
  CLUSTERD_RETURN_IF_ERROR(recovery_.Start());
  // Slow-node detection reports into the running fault centre: it starts last.
  CLUSTERD_RETURN_IF_ERROR(slow_nodes_.Start());
  if (net_faults_) CLUSTERD_RETURN_IF_ERROR(net_faults_->Start());
  LogInfo("cluster-brain", "started");
  return absl::OkStatus();
}

void ClusterBrain::Stop() {
  slow_nodes_.Stop();  // first: its worker calls into the fault centre and the data trace
  if (net_faults_) net_faults_->Stop();  // its worker calls into the fault centre too
  recovery_.Stop();
  goodput_.Stop();  // after the rooms that feed it; saves its state
  jobs_.Stop();
  global_rank_tables_.Stop();
  faults_.Stop();
  informers_.Stop();  // last: the rooms above have dropped their registrations
}

}  // namespace clusterd::server
