#pragma once

#include <cstdint>
#include <deque>
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
#include "diagnosis/net_fault.h"
#include "diagnosis/pingmesh_result_source.h"
#include "diagnosis/public_fault.h"
#include "diagnosis/super_pod_topology.h"
#include "nlohmann/json.hpp"
#include "runtime/controller.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::diagnosis {

inline constexpr std::string_view kPingmeshConfigName = "pingmesh-config";
inline constexpr std::string_view kPingmeshConsumerLabel = "mx-consumer-cim";

struct NetDiagnosisOptions {
  // RAS_NET_ROOT_PATH: the shared storage root; every file lives under <root>/cluster/.
  std::string root;
  // Where the ping results and cathelper.conf are read back from (not owned; outlives the
  // controller). Null: a FilePingmeshResultSource on root and max_file_bytes.
  PingmeshResultSource* results = nullptr;
  // The root is re-checked this often while it is missing (§7: 5 s, the first 4 failures logged).
  absl::Duration root_poll = absl::Seconds(5);
  int root_failures_logged = 4;
  // Node changes mark super pods dirty; they are published on this tick, batch per tick (§7.2).
  absl::Duration topology_tick = absl::Seconds(5);
  int topology_batch = 5;
  // Public-fault retries (§7.5: 20 times, 3 s apart).
  absl::Duration retry_delay = absl::Seconds(3);
  int max_retries = 20;
  // Largest ping_result CSV read (the file source, when `results` is null; the file rotates
  // every 45 s, so it stays small).
  size_t max_file_bytes = 16 << 20;
  // pktSize of the generated ping lists.
  int64_t ping_packet_size = 1024;
  // The process's shared ConfigMap and Node informers (ClusterBrain's); null: informers of the
  // controller's own over the store.
  store::InformerFactory* informers = nullptr;
};

// What `GET /api/clusterd/v1/netfault` shows for one super pod.
struct NetSuperPodView {
  std::string super_pod_id;
  int64_t nodes = 0;
  int64_t npus = 0;
  bool detecting = false;  // netFault=on and the files are in place
  int64_t period_s = 0;
  std::string detection_start;  // RFC 3339, empty while not detecting
  int64_t rounds = 0;           // detection rounds since (re)start (window full or not)
  int64_t analysed_rounds = 0;  // rounds with a full window
  int64_t alarms_total = 0;
  int64_t faults_sent = 0;
  std::vector<NetAlarm> last_alarms;  // of the last round that raised any
  std::string last_alarm_time;
  std::string last_error;
  nlohmann::ordered_json ToJson() const;
};

// Slow-network diagnosis plumbing (jobs-ranktable-diagnosis.md §7.1-§7.5): watches the
// `cluster-system/pingmesh-config` ConfigMap and the Nodes, publishes the super-pod topology
// (`super-pod-<id>` ConfigMaps, `super-pod-<id>.json`, `cathelper.conf`), and for every super
// pod with netFault=on writes the ping lists, reads the ping_result CSVs every period, runs
// SuperPodNetDetector, appends to network_fault.json and sends the alarms as public faults
// (200001010/11/12) through the sink.
//
// Watch events only enqueue keys in the controller (runtime/controller.h); its one worker
// reconciles. A key's own timer (the next round, the root re-check, a topology or report retry)
// is its reconcile's Result::RequeueAfter on the Clock; EnqueueAfter is left for other keys' first
// delays (a node change's topology debounce, the first round of a (re)started super pod, the first
// retry of a report a round could not send). Tests drive it on their own thread with Resync and
// controller().RunUntilIdleForTest() on a ManualClock, never calling Start.
class NetDiagnosisController {
 public:
  NetDiagnosisController(store::ObjectStore& store, Clock& clock, PublicFaultSink& sink,
                         NetDiagnosisOptions options);
  ~NetDiagnosisController();
  NetDiagnosisController(const NetDiagnosisController&) = delete;
  NetDiagnosisController& operator=(const NetDiagnosisController&) = delete;

  // Production: watches the pingmesh-config ConfigMap and the Nodes, runs one worker.
  absl::Status Start();
  void Stop();

  // Queues the configuration, the root check and a topology pass (start-up, tests).
  void Resync();
  // The reconciles run here (Start starts its worker; tests pump it).
  runtime::Controller& controller() { return controller_; }

  // The feature's state: {"root","rootReady","detection","config",...,"superPods":[...]}.
  nlohmann::ordered_json Views() const;

 private:
  struct Pod;
  struct PendingReport {
    std::string super_pod_id;
    PublicFaultReport report;
    int attempts = 0;
  };
  runtime::Result Reconcile(const std::string& key);
  // The functions returning a time are the reconciles of their keys: when the key wants to be
  // woken again (its RequeueAfter), if it does.
  std::optional<absl::Time> CheckRoot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Not OK: pingmesh-config could not be read (retried with back-off).
  absl::Status ReconcileConfig() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<absl::Time> PublishTopology() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PublishPod(const std::string& id, const SuperPodDevice* pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteCathelpers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // super-pod-roce/super-pod-roce.json and its cathelper.conf (§7.2, A5 only).
  void WriteRoce() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Reload() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartDetection(Pod& pod, const CathelperConf& conf) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StopDetection(Pod& pod, const std::string& reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<absl::Time> RoundOf(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True when the first pending report was refused and waits for retry_delay.
  bool FlushReports() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishViews() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string PodDir(const std::string& id) const;
  bool DetectionOn() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::ObjectStore& store_;
  Clock& clock_;
  PublicFaultSink& sink_;
  const NetDiagnosisOptions options_;
  std::unique_ptr<PingmeshResultSource> own_results_;
  PingmeshResultSource* results_;

  mutable absl::Mutex mu_;
  bool root_ready_ ABSL_GUARDED_BY(mu_) = false;
  int root_failures_ ABSL_GUARDED_BY(mu_) = 0;
  // The last accepted pingmesh-config (nullopt: none yet).
  std::optional<std::map<std::string, PingmeshEntry>> config_ ABSL_GUARDED_BY(mu_);
  std::string config_error_ ABSL_GUARDED_BY(mu_);
  bool started_once_ ABSL_GUARDED_BY(mu_) = false;
  bool topology_published_once_ ABSL_GUARDED_BY(mu_) = false;
  // Built from the Nodes on the last topology pass; published content hashes per pod.
  std::map<std::string, SuperPodDevice> topology_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> published_hash_ ABSL_GUARDED_BY(mu_);
  // The A5 path refusals of the last topology pass (logged and counted when they change).
  std::vector<std::string> topology_problems_ ABSL_GUARDED_BY(mu_);
  // What the RoCE files hold (list + cathelper.conf), to skip unchanged rewrites.
  std::string roce_written_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<Pod>> pods_ ABSL_GUARDED_BY(mu_);
  AlarmSuppression suppression_ ABSL_GUARDED_BY(mu_);
  std::deque<PendingReport> reports_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex view_mu_;
  nlohmann::ordered_json view_ ABSL_GUARDED_BY(view_mu_);

  std::unique_ptr<store::InformerFactory> own_informers_;  // when none was given
  std::unique_ptr<store::InformerRegistration> config_registration_;
  std::unique_ptr<store::InformerRegistration> node_registration_;
  // Last: its worker calls Reconcile, which uses everything above.
  runtime::Controller controller_;
};

}  // namespace clusterd::diagnosis
