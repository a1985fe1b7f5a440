#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/metrics.h"
#include "server/http_transport.h"
#include "store/object_store.h"

namespace clusterd::cluster {
class JobRegistry;
class FaultCentre;
}  // namespace clusterd::cluster

namespace clusterd::diagnosis {
class SlowNodeController;
class NetDiagnosisController;
}  // namespace clusterd::diagnosis

namespace clusterd::server {

class RecoveryBridge;
class FaultFeed;
class GoodputBridge;

// The operator-facing HTTP endpoint:
//   GET /healthz   liveness: 200 "ok" while the process serves
//   GET /readyz    readiness: 200 "ok", or 503 with the reason; then "note: ..." lines
//   GET /metrics   Prometheus text format 0.0.4
//   GET /version   {"name":"clusterd","version":"..."}
//   GET /api/v1/...  only with store_mirror (--http-store-mirror): a read-only,
//                  Kubernetes-shaped view of the object store: /api/v1/<resource>,
//                  /api/v1/namespaces/<ns>/<resource>[/<name>], /api/v1/<cluster-scoped
//                  resource>/<name>; ?labelSelector=... Pods come without their containers'
//                  env/envFrom; ConfigMaps only from configmap_namespaces (others: 404).
//   GET /api/clusterd/v1/nodes[/<node>]               the nodes (name, labels, annotations,
//                  conditions, unschedulable): what clusterctl needs of them
//   GET /api/clusterd/v1/deviceinfo                   the device-info ConfigMaps
//                  (kube-system/mindx-dl-deviceinfo-*), what clusterctl reads for NPU health
//   GET /api/clusterd/v1/jobs[?namespace=NS]          the job registry's records
//   GET /api/clusterd/v1/jobs/<job>[?namespace=NS]    one record (<job>: job id, or job name)
//   GET /api/clusterd/v1/jobs/<job>/ranktable          its rank table (the hccl.json object)
//   GET /api/clusterd/v1/faults[?node=N][&job=J]       the fault centre's current view, one item
//                  per (node, NPU, code): node, npu, code, level, source, since, jobs
//   GET /api/clusterd/v1/recovery[?namespace=NS]      every recovery controller: state, phase,
//                  strategy, fault ranks, uuid, history of the current cycle (RecoveryJson)
//   GET /api/clusterd/v1/recovery/<job>[?namespace=NS] one controller (<job>: id, job or PodGroup
//   name) GET /api/clusterd/v1/slownode[?namespace=NS]      every slow-node detection (one per
//                  ras-feature-slownode ConfigMap): state, step, baselines, latest result
//   GET /api/clusterd/v1/slownode/<job>[?namespace=NS] one job (<job>: job name or id)
//   GET /api/clusterd/v1/netfault                     slow-network detection (pingmesh): root,
//                  configuration, and per super pod detection on/off, period, rounds, last alarms
//   GET /api/clusterd/v1/goodput[?namespace=NS]       goodput per job: time training and lost
//                  per cause, ETTR over the life and the window, timeline (docs/goodput.md)
//   GET /api/clusterd/v1/goodput/<job>[?namespace=NS] one job (<job>: job id, or job name)
//   GET /api/clusterd/v1/offenders                    faults per node and NPU, MTBF, and the
//                  repeat-offender verdicts under the policy
//   GET /, /dashboard, /api/clusterd/v1/events        the dashboard and its live fault feed
//                  (server/dashboard.h)
class HttpServer {
 public:
  struct Options {
    std::string listen;                          // host:port; port 0 picks a free port
    store::ObjectStore* store = nullptr;         // may be null: /api answers 503
    const cluster::JobRegistry* jobs = nullptr;  // may be null: /api/clusterd/v1/jobs answers 503
    const cluster::FaultCentre* faults =
        nullptr;                               // may be null: /api/clusterd/v1/faults answers 503
    const RecoveryBridge* recovery = nullptr;  // may be null: /api/clusterd/v1/recovery answers 503
    // may be null: /api/clusterd/v1/slownode answers 503
    const diagnosis::SlowNodeController* slow_nodes = nullptr;
    // may be null (no --ras-net-root): /api/clusterd/v1/netfault answers 503
    const diagnosis::NetDiagnosisController* net_faults = nullptr;
    FaultFeed* fault_feed = nullptr;  // may be null: /api/clusterd/v1/events answers 503
    // may be null: /api/clusterd/v1/goodput and /offenders answer 503
    const GoodputBridge* goodput = nullptr;
    MetricsRegistry* metrics = nullptr;       // defaults to MetricsRegistry::Default()
    std::function<absl::Status()> readiness;  // null: always ready
    // Lines /readyz adds after its verdict (optional files not in use, ...); null: none.
    std::function<std::vector<std::string>()> readiness_notes;
    std::string version;

    // Transport bars: connection caps, idle timeout, header and body limits (http_transport.h).
    HttpTransport::Limits limits;
    // HTTPS when tls.cert and tls.key are set (mTLS with tls.client_ca); reloaded on change.
    HttpTransport::TlsFiles tls;
    // Called for every path outside open_paths (HttpTransport::Options::authorize). Null:
    // every request is allowed.
    std::function<absl::Status(const HttpCaller&)> authorize;
    std::set<std::string> open_paths = {"/healthz", "/readyz"};
    // The raw store mirror /api/v1/... (off: 404 with a Status naming the flag).
    bool store_mirror = false;
    // Namespaces whose ConfigMaps the mirror serves (clusterd's own).
    std::set<std::string> configmap_namespaces = DefaultConfigMapNamespaces();
  };

  // kube-system (device info, fault config), mindx-dl (node info, node fault config, leases),
  // cluster-system (the cluster-info ConfigMaps clusterd publishes).
  static std::set<std::string> DefaultConfigMapNamespaces();

  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(Options options);
  ~HttpServer();

  const std::string& address() const { return address_; }
  int port() const { return port_; }
  void Stop();

 private:
  explicit HttpServer(Options options);
  void RegisterRoutes();

  Options options_;
  HttpTransport transport_;
  std::string address_;
  int port_ = 0;
};

// HTTP status for an absl::Status code (NotFound 404, InvalidArgument 400, Aborted 409, ...).
int HttpCodeFor(absl::StatusCode code);

}  // namespace clusterd::server
