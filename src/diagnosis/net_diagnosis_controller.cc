#include "diagnosis/net_diagnosis_controller.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "diagnosis/file_pingmesh_result_source.h"
#include "diagnosis/net_topology.h"

namespace clusterd::diagnosis {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::string_view kNetDiagnosisControllerLog = "netfault";
constexpr char kRootKey[] = "root";
constexpr char kConfigKey[] = "config";
constexpr char kTopologyKey[] = "topology";
constexpr char kReportKey[] = "report";
constexpr std::string_view kRoundPrefix = "round/";
constexpr char kCathelperFile[] = "cathelper.conf";
constexpr char kNetworkFaultFile[] = "network_fault.json";
constexpr std::string_view kPingListPrefix = "ping_list_";

Counter& NetDiagnosisRounds() {
  return MetricsRegistry::Default().GetCounter("clusterd_netfault_rounds_total",
                                               "Slow-network detection rounds (per super pod).");
}
Counter& Alarms() {
  return MetricsRegistry::Default().GetCounter("clusterd_netfault_alarms_total",
                                               "Slow-network alarms raised (after suppression).");
}
Counter& RejectedConfigs() {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_rejected_configs_total",
      "pingmesh-config updates ignored because a value is invalid.");
}
Counter& BadRows() {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_bad_rows_total",
      "ping_result CSV rows skipped (malformed) or files with a bad header.");
}
Counter& FaultReports(std::string_view outcome) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_public_fault_reports_total",
      "Slow-network public-fault requests by outcome (sent, retry, dropped).",
      {{"outcome", std::string(outcome)}});
}
Counter& BadTopology() {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_bad_topology_total",
      "A5 topology annotations refused (an NPU's network path, or a super pod's address map).");
}
Counter& TopologyWrites(std::string_view outcome) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_netfault_topology_writes_total",
      "Super-pod topology publications (ConfigMap + files) by outcome.",
      {{"outcome", std::string(outcome)}});
}

std::string Rfc3339(absl::Time t) {
  if (t == absl::InfinitePast()) return "";
  return absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone());
}

// Writes through a temporary file and a rename, so readers never see half a file.
absl::Status WriteFileAtomic(const fs::path& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat(path.parent_path().string(), ": ", ec.message()));
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat(tmp.string(), ": write failed"));
  }
  fs::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat(path.string(), ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status AppendFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << content;
  out.flush();
  if (!out) return absl::InternalError(absl::StrCat(path.string(), ": append failed"));
  return absl::OkStatus();
}

// §7.4 step 1: the probes of the NPUs of one server to every other NPU of the super pod.
Json PingList(const SuperPodDevice& pod, const SuperPodNodeEntry& server, int64_t packet_size) {
  auto phy = [](const std::string& id) {
    int64_t v = 0;
    return absl::SimpleAtoi(id, &v) ? Json(v) : Json(id);
  };
  // A5 NPUs with a network path are probed by address, within their plane.
  auto info = [](const SuperPodNodeEntry& n, const std::string& p) -> const NpuNetInfo* {
    auto it = n.npu_info.find(p);
    return it == n.npu_info.end() ? nullptr : &it->second;
  };
  Json list = Json::array();
  for (const auto& [src_phy, src_sdid] : server.devices) {
    const NpuNetInfo* src = info(server, src_phy);
    for (const auto& [name, node] : pod.nodes) {
      for (const auto& [dst_phy, dst_sdid] : node.devices) {
        const NpuNetInfo* dst = info(node, dst_phy);
        if (src && dst ? src->addr == dst->addr || src->plane != dst->plane
                       : dst_sdid == src_sdid) {
          continue;
        }
        list.push_back(Json{{"srcType", kObjectNpu},
                            {"dstType", kObjectNpu},
                            {"pktSize", packet_size},
                            {"srcCardPhyId", phy(src_phy)},
                            {"srcAddr", src ? src->addr : src_sdid},
                            {"dstAddr", dst ? dst->addr : dst_sdid},
                            {"dstCardPhyId", phy(dst_phy)}});
      }
    }
  }
  return Json::array({Json{{"pingList", list}}});
}

}  // namespace

struct NetDiagnosisController::Pod {
  std::string id;
  bool detecting = false;
  CathelperConf conf;
  std::string topology_hash;  // the topology detection was started with
  absl::Time start = absl::InfinitePast();
  absl::Time next_round = absl::InfinitePast();
  std::unique_ptr<SuperPodNetDetector> detector;
  std::vector<fs::path> ping_lists;
  int64_t rounds = 0;
  int64_t log_entries = 0;  // the n of "Detection <n> result"
  int64_t alarms_total = 0;
  int64_t faults_sent = 0;
  std::vector<NetAlarm> last_alarms;
  absl::Time last_alarm_time = absl::InfinitePast();
  std::string last_error;
};

NetDiagnosisController::NetDiagnosisController(store::ObjectStore& store, Clock& clock,
                                               PublicFaultSink& sink, NetDiagnosisOptions options)
    : store_(store),
      clock_(clock),
      sink_(sink),
      options_(std::move(options)),
      own_results_(options_.results ? nullptr
                                    : std::make_unique<FilePingmeshResultSource>(
                                          options_.root, options_.max_file_bytes)),
      results_(options_.results ? options_.results : own_results_.get()),
      controller_(
          {.name = "diagnosis-netfault", .thread_name = "net-diagnosis", .background = true}, clock,
          [this](const std::string& key, int) { return Reconcile(key); }) {
  absl::MutexLock lock(&mu_);
  PublishViews();
}

NetDiagnosisController::~NetDiagnosisController() { Stop(); }

absl::Status NetDiagnosisController::Start() {
  auto selector = store::LabelSelector::Parse(absl::StrCat(Sv(kPingmeshConsumerLabel), "=true"));
  if (!selector.ok()) return selector.status();
  store::InformerFactory* informers = options_.informers;
  if (informers == nullptr) {
    own_informers_ = std::make_unique<store::InformerFactory>(store_);
    informers = own_informers_.get();
  }
  store::SharedInformer& cms = informers->For(store::kConfigMaps);
  store::SharedInformer& nodes = informers->For(store::kNodes);
  CLUSTERD_RETURN_IF_ERROR(cms.Start());
  CLUSTERD_RETURN_IF_ERROR(nodes.Start());
  config_registration_ =
      cms.AddHandler({.filter = {.ns = std::string(kPingmeshNamespace), .selector = *selector},
                      .on_event =
                          [this](const store::WatchEvent& e) {
                            if (store::NameOf(e.object()) == kPingmeshConfigName)
                              controller_.Enqueue(kConfigKey);
                          },
                      .on_replay = nullptr});
  // Node changes are debounced: the first change parks the topology pass one tick ahead, the
  // following ones join it (AddAfter keeps the earlier due time).
  node_registration_ =
      nodes.AddHandler({.filter = {},
                        .on_event =
                            [this](const store::WatchEvent&) {
                              controller_.EnqueueAfter(kTopologyKey, options_.topology_tick);
                            },
                        .on_replay = nullptr});
  Resync();
  controller_.Start();
  return absl::OkStatus();
}

void NetDiagnosisController::Stop() {
  config_registration_.reset();
  node_registration_.reset();
  if (own_informers_ != nullptr) own_informers_->Stop();
  controller_.Stop();
}

void NetDiagnosisController::Resync() {
  controller_.Enqueue(kRootKey);
  controller_.Enqueue(kConfigKey);
  controller_.Enqueue(kTopologyKey);
}

std::string NetDiagnosisController::PodDir(const std::string& id) const {
  const std::string name = absl::StrCat(Sv(kSuperPodPrefix), id);
  return (fs::path(options_.root) / "cluster" / name).string();
}

bool NetDiagnosisController::DetectionOn() const {
  if (!config_) return false;
  return std::any_of(config_->begin(), config_->end(),
                     [](const auto& e) { return e.second.activate; });
}

runtime::Result NetDiagnosisController::Reconcile(const std::string& key) {
  absl::MutexLock lock(&mu_);
  runtime::Result result = runtime::Result::Done();
  // Each key's own timer is its RequeueAfter; an earlier wake already pending for the key (a
  // restart's first round, a node change's topology pass) still wins in the queue.
  std::optional<absl::Time> wake;
  if (key == kRootKey) {
    wake = CheckRoot();
  } else if (key == kConfigKey) {
    if (absl::Status read = ReconcileConfig(); !read.ok()) result = runtime::Result::Retry(read);
  } else if (key == kTopologyKey) {
    wake = PublishTopology();
  } else if (key == kReportKey) {
    if (FlushReports()) wake = clock_.Now() + options_.retry_delay;  // in order, never blocking
  } else if (absl::StartsWith(key, Sv(kRoundPrefix))) {
    wake = RoundOf(key.substr(kRoundPrefix.size()));
  }
  PublishViews();
  if (wake.has_value()) return runtime::Result::RequeueAfter(*wake - clock_.Now());
  return result;
}

std::optional<absl::Time> NetDiagnosisController::CheckRoot() {
  if (root_ready_) return std::nullopt;
  std::error_code ec;
  const bool ok = !options_.root.empty() && fs::is_directory(options_.root, ec);
  if (ok) fs::create_directories(fs::path(options_.root) / "cluster", ec);
  if (!ok || ec) {
    ++root_failures_;
    if (root_failures_ <= options_.root_failures_logged) {
      LogWarn(kNetDiagnosisControllerLog,
              "RAS_NET_ROOT_PATH is not a usable directory; slow-network detection idles",
              {{"root", options_.root},
               {"error", ec ? ec.message() : std::string("missing")},
               {"failures", static_cast<int64_t>(root_failures_)}});
    }
    return clock_.Now() + options_.root_poll;
  }
  if (root_failures_ > 0) {
    LogInfo(kNetDiagnosisControllerLog, "RAS_NET_ROOT_PATH is available",
            {{"root", options_.root}});
  }
  root_failures_ = 0;
  root_ready_ = true;
  controller_.Enqueue(kConfigKey);
  controller_.Enqueue(kTopologyKey);
  return std::nullopt;
}

absl::Status NetDiagnosisController::ReconcileConfig() {
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(kPingmeshNamespace),
                             std::string(kPingmeshConfigName)};
  auto cm = store_.Get(key);
  if (!cm.ok()) {
    if (!absl::IsNotFound(cm.status())) {
      LogWarn(kNetDiagnosisControllerLog, "cannot read pingmesh-config", {{"error", cm.status()}});
      return cm.status();  // retried with back-off
    }
    return absl::OkStatus();  // §7.1: a deletion does nothing
  }
  auto label = store::LabelSelector::Parse(absl::StrCat(Sv(kPingmeshConsumerLabel), "=true"));
  if (label.ok() && !label->Matches(*cm)) return absl::OkStatus();  // not for ClusterD
  std::map<std::string, std::string> data;
  std::string bad_key;
  if (cm->contains("data") && (*cm)["data"].is_object()) {
    for (auto it = (*cm)["data"].begin(); it != (*cm)["data"].end(); ++it) {
      if (!it.value().is_string()) {
        bad_key = it.key();
        break;
      }
      data[it.key()] = it.value().get<std::string>();
    }
  }
  absl::StatusOr<std::map<std::string, PingmeshEntry>> parsed =
      bad_key.empty()
          ? ParsePingmeshConfig(data)
          : absl::StatusOr<std::map<std::string, PingmeshEntry>>(absl::InvalidArgumentError(
                absl::StrCat("pingmesh-config key \"", bad_key, "\": not a string")));
  if (!parsed.ok()) {
    RejectedConfigs().Increment();
    config_error_ = std::string(parsed.status().message());
    LogWarn(kNetDiagnosisControllerLog, "invalid pingmesh-config update ignored",
            {{"reason", config_error_}});
    return absl::OkStatus();
  }
  // A repeated configuration (resync, the root appearing) is applied again quietly: every step
  // below is idempotent.
  const bool same = config_ && *config_ == *parsed;
  config_ = std::move(*parsed);
  config_error_.clear();
  const bool on = DetectionOn();
  if (!same) {
    LogInfo(kNetDiagnosisControllerLog, "pingmesh-config accepted",
            {{"detection", on ? "on" : "off"}, {"entries", static_cast<int64_t>(config_->size())}});
  }
  if (!root_ready_) return absl::OkStatus();  // idles; applied once the root appears
  if (on && !started_once_) {
    started_once_ = true;
    LogInfo(kNetDiagnosisControllerLog, "slow-network analysis controller started");
  }
  if (started_once_) {
    WriteCathelpers();  // netFault=off for every super pod when all off
    WriteRoce();
  }
  if (on) controller_.Enqueue(kTopologyKey);  // publishes what changed while detection was off
  Reload();
  return absl::OkStatus();
}

void NetDiagnosisController::WriteCathelpers() {
  for (const auto& [id, pod] : topology_) {
    const std::string text = RenderCathelperConf(CathelperFor(EffectiveEntry(*config_, id)));
    absl::Status st = WriteFileAtomic(fs::path(PodDir(id)) / kCathelperFile, text);
    if (!st.ok()) {
      LogWarn(kNetDiagnosisControllerLog, "cannot write cathelper.conf",
              {{"superPod", id}, {"error", st}});
      auto& p = pods_[id];
      if (!p) {
        p = std::make_unique<Pod>();
        p->id = id;
      }
      p->last_error = std::string(st.message());
    }
  }
}

void NetDiagnosisController::WriteRoce() {
  // §7.2: only when the configuration has a roce key and there are A5 super pods.
  if (!config_ || !config_->count(std::string(kRoceKey))) return;
  const std::vector<int64_t> ids = RoceSuperPods(topology_);
  if (ids.empty()) return;
  const std::string list = RoceListJson(ids);
  const std::string conf = RenderCathelperConf(CathelperFor(config_->at(std::string(kRoceKey))));
  if (list + conf == roce_written_) return;
  const fs::path dir = fs::path(options_.root) / "cluster" / std::string(kRoceDir);
  absl::Status st = WriteFileAtomic(dir / absl::StrCat(Sv(kRoceDir), ".json"), list);
  if (st.ok()) st = WriteFileAtomic(dir / kCathelperFile, conf);
  if (!st.ok()) {
    TopologyWrites("error").Increment();
    LogWarn(kNetDiagnosisControllerLog, "cannot write the RoCE files", {{"error", st}});
    return;  // tried again on the next accepted configuration or topology change
  }
  roce_written_ = list + conf;
  LogInfo(kNetDiagnosisControllerLog, "RoCE super-pod list written",
          {{"superPods", static_cast<int64_t>(ids.size())}});
}

std::optional<absl::Time> NetDiagnosisController::PublishTopology() {
  auto list = store_.List(store::kNodes, store::ListOptions{});
  if (!list.ok()) {
    LogWarn(kNetDiagnosisControllerLog, "cannot list nodes", {{"error", list.status()}});
    return clock_.Now() + options_.topology_tick;
  }
  std::vector<std::string> problems;
  topology_ = BuildSuperPods(list->items, &problems);
  if (problems != topology_problems_) {
    for (const std::string& why : problems) {
      BadTopology().Increment();
      LogWarn(kNetDiagnosisControllerLog, "A5 network path refused; the NPU is analysed NPU-direct",
              {{"reason", why}});
    }
    topology_problems_ = std::move(problems);
  }
  // §7.2: published only while detection is on.
  if (!root_ready_ || !DetectionOn()) return std::nullopt;
  if (!topology_published_once_) {
    // ConfigMaps left by an earlier run whose super pod is gone are deleted too.
    store::ListOptions cms;
    cms.ns = std::string(kPingmeshNamespace);
    if (auto sel = store::LabelSelector::Parse("app=pingmesh"); sel.ok()) cms.selector = *sel;
    if (auto existing = store_.List(store::kConfigMaps, cms); existing.ok()) {
      for (const store::Object& cm : existing->items) {
        const std::string name = store::NameOf(cm);
        int64_t id = 0;
        if (!absl::StartsWith(name, Sv(kSuperPodPrefix)) ||
            !absl::SimpleAtoi(absl::string_view(name).substr(kSuperPodPrefix.size()), &id)) {
          continue;
        }
        published_hash_.try_emplace(std::to_string(id), "");
      }
    }
    topology_published_once_ = true;
  }
  std::vector<std::string> dirty;
  for (const auto& [id, pod] : topology_) {
    auto it = published_hash_.find(id);
    if (it == published_hash_.end() || it->second != SuperPodContentHash(pod)) dirty.push_back(id);
  }
  for (const auto& [id, hash] : published_hash_) {
    if (!topology_.count(id)) dirty.push_back(id);
  }
  int done = 0;
  bool changed = false, retry = false;
  for (const std::string& id : dirty) {
    if (done == options_.topology_batch) {
      retry = true;  // the rest on the next tick
      break;
    }
    ++done;
    auto it = topology_.find(id);
    absl::Status st = PublishPod(id, it == topology_.end() ? nullptr : &it->second);
    if (st.ok()) {
      TopologyWrites("ok").Increment();
      changed = true;
      continue;
    }
    TopologyWrites("error").Increment();
    LogWarn(kNetDiagnosisControllerLog, "super-pod topology not published; retried",
            {{"superPod", id}, {"error", st}});
    auto& p = pods_[id];
    if (!p) {
      p = std::make_unique<Pod>();
      p->id = id;
    }
    p->last_error = std::string(st.message());
    retry = true;
  }
  if (changed) {
    if (started_once_) WriteRoce();
    Reload();
  }
  if (retry) return clock_.Now() + options_.topology_tick;
  return std::nullopt;
}

absl::Status NetDiagnosisController::PublishPod(const std::string& id, const SuperPodDevice* pod) {
  const std::string name = absl::StrCat(Sv(kSuperPodPrefix), id);
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(kPingmeshNamespace),
                             name};
  const fs::path dir = PodDir(id);
  const fs::path json_path = dir / absl::StrCat(name, ".json");
  if (pod == nullptr) {
    // §7.2: the last node is gone: the ConfigMap and the JSON go, cathelper.conf stays.
    absl::Status st = store_.Delete(key);
    if (!st.ok() && !absl::IsNotFound(st)) return st;
    std::error_code ec;
    fs::remove(json_path, ec);
    published_hash_.erase(id);
    LogInfo(kNetDiagnosisControllerLog, "super pod has no node left; topology removed",
            {{"superPod", id}});
    return absl::OkStatus();
  }
  store::Object want = SuperPodConfigMap(*pod);
  auto existing = store_.Get(key);
  if (existing.ok()) {
    store::Object cm = *existing;
    if (cm.value("data", Json::object()) != want["data"] || !cm["metadata"].contains("labels") ||
        cm["metadata"]["labels"].value("app", "") != "pingmesh") {
      cm["data"] = want["data"];
      cm["metadata"]["labels"]["app"] = "pingmesh";
      auto updated = store_.Update(store::kConfigMaps, cm);
      if (!updated.ok()) return updated.status();
    }
  } else if (absl::IsNotFound(existing.status())) {
    auto created = store_.Create(store::kConfigMaps, want);
    if (!created.ok()) return created.status();
  } else {
    return existing.status();
  }
  if (absl::Status st = WriteFileAtomic(json_path, SuperPodFileJson(*pod)); !st.ok()) return st;
  const std::optional<PingmeshEntry> entry =
      config_ ? EffectiveEntry(*config_, id) : std::optional<PingmeshEntry>();
  if (absl::Status st =
          WriteFileAtomic(dir / kCathelperFile, RenderCathelperConf(CathelperFor(entry)));
      !st.ok()) {
    return st;
  }
  published_hash_[id] = SuperPodContentHash(*pod);
  LogInfo(kNetDiagnosisControllerLog, "super-pod topology published",
          {{"superPod", id}, {"nodes", static_cast<int64_t>(pod->nodes.size())}});
  return absl::OkStatus();
}

void NetDiagnosisController::Reload() {
  std::set<std::string> ids;
  for (const auto& [id, pod] : topology_) ids.insert(id);
  for (const auto& [id, pod] : pods_) ids.insert(id);
  for (const std::string& id : ids) {
    auto& p = pods_[id];
    if (!p) {
      p = std::make_unique<Pod>();
      p->id = id;
    }
    Pod& pod = *p;
    // §7.4 step 1: the directory, cathelper.conf with netFault=on and super-pod-<id>.json.
    std::optional<CathelperConf> want;
    std::string hash;
    auto topo = topology_.find(id);
    auto published = published_hash_.find(id);
    // A super pod keeps the topology it was published with until its new one is published.
    if (root_ready_ && DetectionOn() && topo != topology_.end() &&
        published != published_hash_.end() && !published->second.empty()) {
      hash = published->second;
      absl::StatusOr<std::string> text = results_->Cathelper(id);
      const bool json = results_->HasTopology(id);
      if (text.ok() && json) {
        auto conf = ParseCathelperConf(*text);
        if (conf.ok() && conf->net_fault) want = *conf;
        if (!conf.ok()) pod.last_error = std::string(conf.status().message());
      }
    }
    if (pod.detecting && (!want || *want != pod.conf || hash != pod.topology_hash)) {
      StopDetection(pod,
                    !want ? "netFault off or topology gone" : "configuration or topology changed");
    }
    if (want && !pod.detecting) {
      pod.topology_hash = hash;
      StartDetection(pod, *want);
    }
  }
  // Super pods with neither topology nor detection are forgotten.
  std::erase_if(pods_, [&](const auto& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !e.second->detecting && !topology_.count(e.first) && e.second->last_error.empty();
  });
}

void NetDiagnosisController::StartDetection(Pod& pod, const CathelperConf& conf) {
  const absl::Time now = clock_.Now();
  const fs::path dir = PodDir(pod.id);
  pod.conf = conf;
  pod.last_error.clear();
  // The ping lists for NodeD, one per server.
  const SuperPodDevice& topo = topology_.at(pod.id);
  for (const auto& [name, node] : topo.nodes) {
    if (node.server_id.empty()) continue;
    const fs::path path = dir / absl::StrCat(Sv(kPingListPrefix), node.server_id, ".json");
    absl::Status st =
        WriteFileAtomic(path, PingList(topo, node, options_.ping_packet_size).dump(2));
    if (!st.ok()) {
      pod.last_error = std::string(st.message());
      LogWarn(kNetDiagnosisControllerLog, "cannot write ping list",
              {{"superPod", pod.id}, {"error", st}});
      continue;
    }
    pod.ping_lists.push_back(path);
  }
  // network_fault.json is truncated on (re)start.
  if (absl::Status st = WriteFileAtomic(dir / kNetworkFaultFile, ""); !st.ok()) {
    pod.last_error = std::string(st.message());
  }
  pod.detecting = true;
  pod.start = now;
  pod.next_round = now + absl::Seconds(conf.period);
  absl::StatusOr<NetTopology> paths = NetTopologyOf(topo);
  if (!paths.ok()) {
    BadTopology().Increment();
    pod.last_error = std::string(paths.status().message());
    LogWarn(kNetDiagnosisControllerLog, "A5 topology refused; the super pod is analysed NPU-direct",
            {{"superPod", pod.id}, {"reason", paths.status()}});
  }
  pod.detector =
      std::make_unique<SuperPodNetDetector>(pod.id, conf, paths.ok() ? *paths : NetTopology{});
  pod.rounds = 0;
  pod.log_entries = 0;
  LogInfo(kNetDiagnosisControllerLog, "slow-network detection starts",
          {{"superPod", pod.id},
           {"period", conf.period},
           {"servers", static_cast<int64_t>(pod.ping_lists.size())}});
  controller_.EnqueueAfter(absl::StrCat(Sv(kRoundPrefix), pod.id), absl::Seconds(conf.period));
}

void NetDiagnosisController::StopDetection(Pod& pod, const std::string& reason) {
  if (!pod.detecting) return;
  for (const fs::path& path : pod.ping_lists) {
    std::error_code ec;
    fs::remove(path, ec);
  }
  pod.ping_lists.clear();
  pod.detecting = false;
  pod.detector.reset();
  pod.next_round = absl::InfinitePast();
  LogInfo(kNetDiagnosisControllerLog, "slow-network detection stops",
          {{"superPod", pod.id}, {"reason", reason}});
}

std::optional<absl::Time> NetDiagnosisController::RoundOf(const std::string& id) {
  auto it = pods_.find(id);
  if (it == pods_.end() || !it->second->detecting) return std::nullopt;
  Pod& pod = *it->second;
  const absl::Time now = clock_.Now();
  // An early wake-up (a restart re-parked the key) waits for the round's time.
  if (now < pod.next_round) return pod.next_round;
  pod.next_round = now + absl::Seconds(pod.conf.period);

  // §7.4 step 2: every *.csv / *.csv-bak row stamped at or after the detection start.
  const int64_t start_ms = absl::ToUnixMillis(pod.start);
  const fs::path dir = PodDir(id);
  std::vector<PingRow> rows;
  std::vector<std::string> problems;
  absl::StatusOr<std::vector<PingResultFile>> files = results_->PingResults(id);
  if (!files.ok()) problems.push_back(std::string(files.status().message()));
  for (const PingResultFile& file : files.ok() ? *files : std::vector<PingResultFile>{}) {
    if (!file.text.ok()) {
      problems.push_back(std::string(file.text.status().message()));
      continue;
    }
    const std::string& text = *file.text;
    ParseStats stats;
    auto parsed = ParsePingResultCsv(text, &stats);
    // An unterminated last line is still being written, not bad.
    const int malformed = stats.malformed_rows - (!text.empty() && text.back() != '\n' ? 1 : 0);
    if (malformed > 0) {
      BadRows().Increment(static_cast<uint64_t>(malformed));
      problems.push_back(absl::StrCat(file.name, ": ", malformed, " malformed rows skipped"));
    }
    if (!parsed.ok()) {
      BadRows().Increment();
      problems.push_back(std::string(parsed.status().message()));
      continue;
    }
    for (PingRow& r : *parsed) {
      if (r.timestamp >= start_ms) rows.push_back(std::move(r));
    }
  }
  if (!problems.empty()) {
    pod.last_error = problems.front();
    LogWarn(kNetDiagnosisControllerLog, "ping result problems",
            {{"superPod", id},
             {"count", static_cast<int64_t>(problems.size())},
             {"first", problems.front()}});
  }

  const int64_t analysed_before = pod.detector->rounds();
  std::vector<NetAlarm> alarms = pod.detector->Round(rows, now, suppression_);
  ++pod.rounds;
  NetDiagnosisRounds().Increment();
  if (pod.detector->rounds() == analysed_before) {
    LogDebug(kNetDiagnosisControllerLog, "slow-network window not full yet",
             {{"superPod", id}, {"rows", static_cast<int64_t>(rows.size())}});
    return pod.next_round;
  }
  // §7.5: the round's list, appended to network_fault.json, logged, sent when non-empty.
  const std::string entry = NetworkFaultLogEntry(pod.log_entries++, now, alarms);
  if (absl::Status st = AppendFile(dir / kNetworkFaultFile, entry); !st.ok()) {
    pod.last_error = std::string(st.message());
  }
  if (alarms.empty()) {
    LogDebug(kNetDiagnosisControllerLog, "slow-network round: no alarm", {{"superPod", id}});
    return pod.next_round;
  }
  Json list = Json::array();
  for (const NetAlarm& a : alarms) list.push_back(a.ToJson());
  LogInfo(kNetDiagnosisControllerLog,
          absl::StrCat("super pod ", id, " network fault detected: ", list.dump()),
          {{"superPod", id}, {"alarms", static_cast<int64_t>(alarms.size())}});
  Alarms().Increment(alarms.size());
  pod.alarms_total += static_cast<int64_t>(alarms.size());
  pod.last_alarms = alarms;
  pod.last_alarm_time = now;
  reports_.push_back({id, NetFaultReport(alarms, now, NewUuid()), 0});
  // A refused report waits on the report key's own timer, not on this round's.
  if (FlushReports()) controller_.EnqueueAfter(kReportKey, options_.retry_delay);
  return pod.next_round;
}

bool NetDiagnosisController::FlushReports() {
  while (!reports_.empty()) {
    PendingReport& p = reports_.front();
    absl::Status st = sink_.SendPublicFault(p.report);
    auto pod = pods_.find(p.super_pod_id);
    if (st.ok()) {
      FaultReports("sent").Increment();
      LogInfo(kNetDiagnosisControllerLog, "slow-network public fault sent",
              {{"superPod", p.super_pod_id}, {"request", p.report.ToJson().dump()}});
      if (pod != pods_.end())
        pod->second->faults_sent += static_cast<int64_t>(p.report.faults.size());
      reports_.pop_front();
      continue;
    }
    if (pod != pods_.end()) pod->second->last_error = std::string(st.message());
    if (++p.attempts >= options_.max_retries) {
      FaultReports("dropped").Increment();
      LogError(kNetDiagnosisControllerLog, "slow-network public fault dropped after retries",
               {{"superPod", p.super_pod_id}, {"error", st}});
      reports_.pop_front();
      continue;
    }
    FaultReports("retry").Increment();
    LogWarn(kNetDiagnosisControllerLog, "slow-network public fault not accepted; retried",
            {{"superPod", p.super_pod_id},
             {"attempt", static_cast<int64_t>(p.attempts)},
             {"error", st}});
    return true;  // retried in order after retry_delay, never blocking the worker
  }
  return false;
}

void NetDiagnosisController::PublishViews() {
  Json config = nullptr;
  if (config_) {
    config = Json::object();
    for (const auto& [k, e] : *config_) {
      config[k] = Json{{"activate", e.activate ? "on" : "off"}, {"task_interval", e.task_interval}};
    }
  }
  Json pods = Json::array();
  std::set<std::string> ids;
  for (const auto& [id, p] : topology_) ids.insert(id);
  for (const auto& [id, p] : pods_) ids.insert(id);
  for (const std::string& id : ids) {
    NetSuperPodView v;
    v.super_pod_id = id;
    if (auto t = topology_.find(id); t != topology_.end()) {
      v.nodes = static_cast<int64_t>(t->second.nodes.size());
      for (const auto& [name, n] : t->second.nodes)
        v.npus += static_cast<int64_t>(n.devices.size());
    }
    if (auto it = pods_.find(id); it != pods_.end()) {
      const Pod& p = *it->second;
      v.detecting = p.detecting;
      v.period_s = p.detecting ? p.conf.period : 0;
      v.detection_start = p.detecting ? Rfc3339(p.start) : "";
      v.rounds = p.rounds;
      v.analysed_rounds = p.detector ? p.detector->rounds() : 0;
      v.alarms_total = p.alarms_total;
      v.faults_sent = p.faults_sent;
      v.last_alarms = p.last_alarms;
      v.last_alarm_time = Rfc3339(p.last_alarm_time);
      v.last_error = p.last_error;
    }
    pods.push_back(v.ToJson());
  }
  Json view = Json{{"kind", "NetFaultView"},
                   {"root", options_.root},
                   {"rootReady", root_ready_},
                   {"detection", !config_        ? "unconfigured"
                                 : DetectionOn() ? "on"
                                                 : "off"},
                   {"config", config},
                   {"configError", config_error_},
                   {"pendingReports", static_cast<int64_t>(reports_.size())},
                   {"superPods", pods}};
  absl::MutexLock lock(&view_mu_);
  view_ = std::move(view);
}

nlohmann::ordered_json NetDiagnosisController::Views() const {
  absl::MutexLock lock(&view_mu_);
  return view_;
}

nlohmann::ordered_json NetSuperPodView::ToJson() const {
  Json alarms = Json::array();
  for (const NetAlarm& a : last_alarms) alarms.push_back(a.ToJson());
  return Json{{"superPodId", super_pod_id},
              {"nodes", nodes},
              {"npus", npus},
              {"detection", detecting ? "on" : "off"},
              {"period", period_s},
              {"detectionStart", detection_start},
              {"rounds", rounds},
              {"analysedRounds", analysed_rounds},
              {"alarmsTotal", alarms_total},
              {"faultsSent", faults_sent},
              {"lastAlarmTime", last_alarm_time},
              {"lastAlarms", alarms},
              {"lastError", last_error}};
}

}  // namespace clusterd::diagnosis
