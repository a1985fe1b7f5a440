#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_job_faults.h"
#include "cluster/job_registry.h"
#include "common/clock.h"
#include "model/device_naming.h"
#include "nlohmann/json.hpp"
#include "recovery/executor.h"
#include "recovery/om_request.h"
#include "recovery/pod_group_index.h"
#include "runtime/controller.h"
#include "server/recovery_sink.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::server {

// Everything between the Recover gRPC service and the recovery room (src/recovery): owns the
// RecoveryExecutor and its RecoverySink, keeps the Init records (§2.3), feeds the controller
// from the fault centre (cluster::JobFaultSink -> HardwareFaultsPublished) and from the shared
// pod and PodGroup informers (pod / PodGroup changes -> RefreshView, PodGroup deletion ->
// JobDeleted; a job's pods are found through the pod informer's kPodGroupIndex), sends the
// 5 s keep-alives, and forwards the controller's fault-centre commands (FaultCentrePort).
//
// Watch handlers and fault deliveries only record the newest input and enqueue a key on the
// bridge's controller (runtime/controller.h); its one worker re-reads and posts (keys
// `pg/<ns>/<name>`, `hw/<job>`, and `#tick`, the timer of keep-alives and OM waiters, which
// asks to be woken again with RequeueAfter when the next keep-alive is due, 5-100 ms later).
// The executor's jobs wake themselves.
class RecoveryBridge final : public cluster::JobFaultSink {
 public:
  struct Options {
    int workers = 2;             // executor strands run on this many threads
    size_t max_jobs = 10000;     // §2.3 Register step 4
    int pod_group_attempts = 4;  // §2.3 Register step 5 patch attempts
    // deviceNameCustomization.json (clusterd --device-name-file), for the jobs' pods.
    model::DeviceNaming naming;
  };
  // §2.3 answer of Init / Register: the wire Status.
  struct Answer {
    int32_t code = 0;
    std::string info;
  };

  // `jobs` and `faults` may be null (tests): the PodGroup is then found by listing, and the
  // fault-centre commands are only logged.
  // `informers` hands out the process's shared informers; null: the bridge keeps its own.
  RecoveryBridge(store::ObjectStore& store, Clock& clock, cluster::JobRegistry* jobs,
                 cluster::FaultCentre* faults, Options options, store::InformerFactory* informers);
  RecoveryBridge(store::ObjectStore& store, Clock& clock, cluster::JobRegistry* jobs,
                 cluster::FaultCentre* faults, Options options)
      : RecoveryBridge(store, clock, jobs, faults, options, nullptr) {}
  RecoveryBridge(store::ObjectStore& store, Clock& clock, cluster::JobRegistry* jobs,
                 cluster::FaultCentre* faults)
      : RecoveryBridge(store, clock, jobs, faults, Options{}) {}
  ~RecoveryBridge() override;
  RecoveryBridge(const RecoveryBridge&) = delete;
  RecoveryBridge& operator=(const RecoveryBridge&) = delete;

  // Resumes recorded cycles (RestoreAll), registers on the informers (starting them if not yet
  // started), starts the executor's workers and the
  // bridge's worker. `run_threads` false: nothing runs by itself (tests drive
  // RunUntilIdleForTest).
  absl::Status Start(bool run_threads = true);
  void Stop();

  Answer Init(const std::string& job_id);
  Answer Register(const std::string& job_id);
  // After a Subscribe was posted: re-delivers the job's last hardware snapshot (the reference's
  // fault centre re-publishes every second; ours publishes on change).
  void RepostFaults(const std::string& job_id);

  recovery::RecoveryExecutor& executor() { return *executor_; }
  const recovery::RecoveryExecutor& executor() const { return *executor_; }
  RecoverySink& sink() { return sink_; }
  // The job's rank table and status, for the §12/§13 request checks.
  recovery::JobTopology Topology(const std::string& job_id) const;
  // The job's world size (WorldSizeOf its controller's view and its replicas in the job
  // registry), for the ReportProcessFault check; nullopt when unknown or without a controller.
  std::optional<int64_t> WorldSize(const std::string& job_id) const;

  // cluster::JobFaultSink (fault centre worker thread; never blocks).
  void OnJobFaults(const cluster::JobFaultRanks& faults) override;
  void OnJobGone(const std::string& job_id) override;

  // GET /api/clusterd/v1/recovery: {"kind":"RecoveryList","items":[...]} (RecoveryJson items).
  nlohmann::ordered_json RecoveryList(const std::string& ns) const;
  // One job by id, job name or PodGroup name (NotFound otherwise).
  absl::StatusOr<nlohmann::ordered_json> RecoveryOf(const std::string& job,
                                                    const std::string& ns) const;

  // Watch intake (the informers' handlers call these; tests may too): queue the PodGroup's key when
  // a job with a controller or an Init record uses it.
  void OnPodEvent(const store::WatchEvent& event);
  void OnPodGroupEvent(const store::WatchEvent& event);

  // Tests: pumps the bridge's and the executor's controllers until both are idle; returns how
  // many reconciles ran.
  size_t RunUntilIdleForTest();
  // Tests: what one tick does (keep-alives, OM waiter expiry); returns when it asks to run
  // again.
  absl::Duration TickForTest() { return Tick(); }

 private:
  class FaultPort;
  struct InitRecord {
    recovery::JobIdentity id;
    recovery::JobConfig config;
  };

  absl::StatusOr<std::pair<recovery::JobIdentity, store::Object>> ResolvePodGroup(
      const std::string& job_id) const;
  void Remember(const recovery::JobIdentity& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LoadRecordedIdentities();
  runtime::Result Reconcile(const std::string& key);
  void HandlePodGroup(const std::string& ns, const std::string& name);
  void HandleFaults(const std::string& job_id);
  // Sends the keep-alives due and expires OM waiters; returns how long until it should run again.
  absl::Duration Tick();
  std::optional<recovery::JobIdentity> IdentityOf(const std::string& job_id) const;
  // The job's replicas as the job registry knows them (0 when unknown).
  int64_t ReplicasOf(const std::string& job_id) const;
  // `item` (a RecoveryJson) with the job's record durability.
  nlohmann::ordered_json WithDurability(nlohmann::ordered_json item,
                                        const std::string& job_id) const;

  store::ObjectStore& store_;
  std::unique_ptr<store::InformerFactory> own_informers_;  // when none was given
  store::InformerFactory* const informers_;  // before executor_, which reads pods through it
  Clock& clock_;
  cluster::JobRegistry* jobs_;
  const Options options_;
  RecoverySink sink_;
  std::unique_ptr<FaultPort> fault_port_;
  std::unique_ptr<recovery::RecoveryExecutor> executor_;

  mutable absl::Mutex mu_;
  std::map<std::string, InitRecord> inited_ ABSL_GUARDED_BY(mu_);
  // Identities of every job Init or a record named: job -> identity, "ns/podgroup" -> jobs.
  std::map<std::string, recovery::JobIdentity> identities_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> jobs_of_pod_group_ ABSL_GUARDED_BY(mu_);
  // The newest fault-centre snapshot of each job (coalesced: the latest wins).
  std::map<std::string, recovery::HardwareFaultsPublished> hw_latest_ ABSL_GUARDED_BY(mu_);

  std::vector<std::unique_ptr<store::InformerRegistration>> registrations_;
  bool started_ = false;
  // Last: its worker calls Reconcile, which uses everything above.
  runtime::Controller controller_;
};

}  // namespace clusterd::server
