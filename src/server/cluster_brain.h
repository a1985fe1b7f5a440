#pragma once

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "auth/pod_identity_index.h"
#include "cluster/data_trace.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_config_files.h"
#include "cluster/job_registry.h"
#include "cluster/rank_table_global_feed.h"
#include "common/clock.h"
#include "diagnosis/file_pingmesh_result_source.h"
#include "diagnosis/file_profiling_data_source.h"
#include "diagnosis/net_diagnosis_controller.h"
#include "diagnosis/slow_node_controller.h"
#include "server/goodput_bridge.h"
#include "server/recovery_bridge.h"
#include "server/slow_node_bridge.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::server {

// The decision rooms of clusterd and their worker threads, assembled over one store. The gRPC
// services and the HTTP server take references to its parts; apps/clusterd only creates it,
// lets the services attach their listeners, then Start()s it.
class ClusterBrain {
 public:
  struct Options {
    cluster::JobRegistry::Options registry;
    cluster::GlobalRankTableFeed::Options global_rank_tables;
    cluster::FaultCentre::Options faults;  // its `config` is set to the files below
    // Where the fault centre's configuration files are (--data-dir, --public-fault-config).
    cluster::FaultConfigFiles::Options fault_config;
    RecoveryBridge::Options recovery;
    // Slow-node diagnosis (issue 9): profiling root, reporter node and IP, timers.
    diagnosis::SlowNodeControllerOptions slow_node;
    // Slow-network diagnosis (issue 9, §7): enabled when net_fault.root (RAS_NET_ROOT_PATH) is set.
    diagnosis::NetDiagnosisOptions net_fault;
    // Goodput and repeat offenders (docs/goodput.md).
    GoodputBridge::Options goodput;
  };

  ClusterBrain(store::ObjectStore& store, Clock& clock, Options options);
  ClusterBrain(store::ObjectStore& store, Clock& clock) : ClusterBrain(store, clock, Options{}) {}
  ~ClusterBrain();

  ClusterBrain(const ClusterBrain&) = delete;
  ClusterBrain& operator=(const ClusterBrain&) = delete;

  // Rebuilds the job registry from the store, starts the watches and one worker thread per
  // queue. Call after every listener (services) is attached.
  absl::Status Start();
  // Stops watches and workers, then the shared informers; idempotent.
  void Stop();

  // The one informer per resource that the rooms share (store/informer.h).
  store::InformerFactory& informers() { return informers_; }

  cluster::JobRegistry& jobs() { return jobs_; }
  // podIP -> job ids, kept from the registry's pods (job identity of the gRPC callers).
  const auth::PodIdentityIndex& pod_identities() const { return pod_identities_; }
  cluster::GlobalRankTableFeed& global_rank_tables() { return global_rank_tables_; }
  cluster::DataTraceSwitches& data_trace() { return data_trace_; }
  cluster::FaultCentre& faults() { return faults_; }
  // The recovery controller (RecoveryExecutor) and its gRPC-side registry.
  RecoveryBridge& recovery() { return recovery_; }
  // Slow-node detection for the ras-feature-slownode-<job> ConfigMaps (docs/diagnosis.md).
  diagnosis::SlowNodeController& slow_nodes() { return slow_nodes_; }
  // Slow-network detection (pingmesh, §7); null when no RAS_NET_ROOT_PATH root is configured.
  const diagnosis::NetDiagnosisController* net_faults() const { return net_faults_.get(); }
  // Goodput per job and the repeat-offender list; its worker starts with StartGoodput.
  GoodputBridge& goodput() { return goodput_; }
  // Starts the goodput worker, reading fault occurrences from `feed` (may be null). Call after
  // Start(); Stop() stops it.
  void StartGoodput(FaultFeed* feed) { goodput_.Start(feed); }

 private:
  store::InformerFactory informers_;       // first: every room registers on it
  auth::PodIdentityIndex pod_identities_;  // before jobs_: the registry feeds it
  cluster::JobRegistry jobs_;
  cluster::GlobalRankTableFeed global_rank_tables_;
  cluster::DataTraceSwitches data_trace_;
  cluster::FaultConfigFiles fault_config_;  // read by faults_
  cluster::FaultCentre faults_;          // reads jobs_; started after it
  RecoveryBridge recovery_;              // reads jobs_, receives faults_'s per-job snapshots
  GoodputBridge goodput_;                // fed by jobs_, faults_ and recovery_'s cycles
  DiagnosisFaultSink slow_node_faults_;  // into faults_
  DiagnosisFaultSink net_faults_sink_;   // into faults_
  SlowNodeProfilingWriter slow_node_profiling_;  // through data_trace_
  // The ranks' profiling files under --profiling-root (unless Options name another source).
  diagnosis::FileProfilingDataSource slow_node_data_;
  diagnosis::SlowNodeController slow_nodes_;  // fed by jobs_'s signals; started last
  // The ping results and cathelper.conf under RAS_NET_ROOT_PATH; null with net_faults_.
  std::unique_ptr<diagnosis::FilePingmeshResultSource> net_results_;
  std::unique_ptr<diagnosis::NetDiagnosisController> net_faults_;  // into net_faults_sink_
  bool started_ = false;
};

}  // namespace clusterd::server
