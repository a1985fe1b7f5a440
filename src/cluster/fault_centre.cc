#include "cluster/fault_centre.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cluster/cluster_info_render.h"
#include "cluster/data_files.h"
#include "common/canonical_json.h"
#include "common/file_change.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/status_util.h"
#include "model/config_map_names.h"

namespace clusterd::cluster {
namespace {

constexpr char kComponent[] = "fault-centre";
constexpr std::string_view kDevKey = "dev/";
constexpr std::string_view kNodKey = "nod/";
constexpr std::string_view kK8sKey = "k8s/";
constexpr std::string_view kPfKey = "pf/";
constexpr std::string_view kJobKey = "job/";
constexpr char kIndexKey[] = "#index";
constexpr char kPfExpireKey[] = "#pf-expire";
constexpr char kManualTriageKey[] = "#manual-triage";
constexpr char kManualSyncKey[] = "#manual-sync";
constexpr char kManualConfigKey[] = "#manual-config";
constexpr char kStatisticKey[] = "#statistic";
constexpr char kConfigPollKey[] = "#config-poll";
// clusterd-config-cm changed (its watch): the policy is read now, the 300 s poll stays a backstop.
constexpr char kManualConfigChangedKey[] = "#manual-config-changed";
constexpr char kWriteKey[] = "#write";  // the cluster-info writer's one key

absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string Key(std::string_view prefix, std::string_view rest) {
  return absl::StrCat(Sv(prefix), Sv(rest));
}

bool HasPrefix(const std::string& key, std::string_view prefix, std::string* rest) {
  if (key.size() < prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return false;
  *rest = key.substr(prefix.size());
  return true;
}

std::map<std::string, std::string> StringData(const store::Object& cm) {
  std::map<std::string, std::string> out;
  auto it = cm.find("data");
  if (it == cm.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) out.emplace(k, v.get<std::string>());
  }
  return out;
}

bool NodeIsReady(const store::Object& node) {
  auto status = node.find("status");
  if (status == node.end() || !status->is_object()) return false;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return false;
  for (const auto& c : *conditions) {
    if (StringOr(c, "type", "") == "Ready") return StringOr(c, "status", "") == "True";
  }
  return false;
}

std::string NodeInternalIp(const store::Object& node) {
  auto status = node.find("status");
  if (status == node.end() || !status->is_object()) return "";
  auto addresses = status->find("addresses");
  if (addresses == status->end() || !addresses->is_array()) return "";
  for (const auto& a : *addresses) {
    if (StringOr(a, "type", "") == "InternalIP") return StringOr(a, "address", "");
  }
  return "";
}

std::string NodeSerial(const store::Object& node) {
  auto md = node.find("metadata");
  if (md == node.end() || !md->is_object()) return "";
  auto ann = md->find("annotations");
  if (ann == md->end() || !ann->is_object()) return "";
  return StringOr(*ann, "product-serial-number", "");
}

Counter& RejectedCounter(std::string_view kind, std::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_fault_centre_rejected_total",
      "Inputs the fault centre rejected or dropped, by kind and reason (checkcode, malformed, "
      "oversized, too_many_records, invalid_entry, rate_limited, invalid, cache_full).",
      {{"kind", std::string(kind)}, {"reason", std::string(reason)}});
}

Counter& PublicFaultRequests(std::string_view source, int32_t code) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_public_fault_requests_total",
      "Public-fault requests by source (grpc, configmap) and result code (0, 409, 410).",
      {{"source", std::string(source)}, {"code", std::to_string(code)}});
}

}  // namespace

FaultCentre::FaultCentre(store::ObjectStore& store, Clock& clock, const JobRegistry* registry,
                         Options options)
    : store_(store),
      clock_(clock),
      registry_(registry),
      options_(std::move(options)),
      device_shards_(std::string(kClusterInfoDevicePrefix), options_.shard_limit_bytes),
      switch_shards_(std::string(kClusterInfoSwitchPrefix), options_.shard_limit_bytes),
      node_shard_(std::string(kClusterInfoNodeName), SIZE_MAX),
      write_bucket_(options_.max_writes_per_second, options_.write_burst, clock),
      writes_ok_(MetricsRegistry::Default().GetCounter(
          "clusterd_fault_centre_cm_writes_total", "cluster-info ConfigMap writes by result.",
          {{"result", "ok"}})),
      writes_failed_(MetricsRegistry::Default().GetCounter(
          "clusterd_fault_centre_cm_writes_total", "cluster-info ConfigMap writes by result.",
          {{"result", "error"}})),
      bytes_written_(MetricsRegistry::Default().GetCounter(
          "clusterd_fault_centre_cm_write_bytes_total",
          "Bytes of cluster-info ConfigMap values written.")),
      snapshots_(MetricsRegistry::Default().GetCounter(
          "clusterd_fault_centre_job_snapshots_total",
          "Job fault snapshots handed to the sinks (recovery controller, Fault service).")),
      process_seconds_(MetricsRegistry::Default().GetHistogram(
          "clusterd_fault_centre_process_seconds", "Time to handle one fault-centre key.",
          MetricsRegistry::LatencyBounds())),
      device_nodes_gauge_(MetricsRegistry::Default().GetGauge(
          "clusterd_fault_centre_device_nodes", "Nodes with a device-info record.")),
      public_faults_gauge_(MetricsRegistry::Default().GetGauge(
          "clusterd_public_faults", "Public faults held (per node and fault).")),
      controller_({.name = "fault_centre", .thread_name = "fault-centre"}, clock,
                  [this](const std::string& key, int) {
                    Handle(key);
                    return runtime::Result::Done();
                  }),
      writer_({.name = "cluster_info_writer",
               .thread_name = "cluster-info",
               .base_retry_delay = absl::Seconds(1),
               .max_retry_delay = absl::Seconds(30)},
              clock, [this](const std::string&, int) { return ReconcileWrites(); }) {}

FaultCentre::~FaultCentre() { Stop(); }

void FaultCentre::AddJobFaultSink(JobFaultSink* sink) { sinks_.push_back(sink); }

int64_t FaultCentre::NowMs() const { return absl::ToUnixMillis(clock_.Now()); }

void FaultCentre::Reject(std::string_view kind, std::string_view reason, std::string_view message) {
  RejectedCounter(kind, reason).Increment();
  LogWarn(kComponent, message, {{"kind", kind}, {"reason", reason}});
}

void FaultCentre::ScheduleAt(const std::string& key, int64_t due_ms) {
  controller_.EnqueueAfter(key, absl::Milliseconds(due_ms - NowMs()));
}

// ---- configuration ----

void FaultCentre::LoadConfigFiles() {
  const std::string dir = options_.data_dir.empty() ? "." : options_.data_dir;
  // A shipped file that cannot be read or parsed now (it was at start) keeps what it gave.
  auto shipped = [&](std::string_view name) -> absl::StatusOr<std::string> {
    if (options_.data_dir.empty()) return std::string();  // tests without data
    return ReadDataFile(dir, name);
  };
  absl::StatusOr<std::string> rules = shipped(kRelationRulesFile);
  absl::StatusOr<std::string> durations = shipped(kFaultDurationFile);
  std::optional<RelationConfig> relation;
  if (rules.ok() && durations.ok()) {
    std::vector<std::string> problems;
    relation = ParseRelationConfig(*rules, *durations, &problems);
    for (const auto& p : problems) LogWarn(kComponent, "relation fault configuration", {{"problem", p}});
  } else {
    LogError(kComponent, "relation fault configuration not reloaded; the previous one is kept",
             {{"error", rules.ok() ? durations.status() : rules.status()}});
  }
  // The user's public-fault configuration is optional: without it (or when it is wrong) the
  // shipped defaults apply, and /readyz says why (one warning per change of the problem).
  std::string text;
  std::string user_note;
  if (const std::string& user = options_.public_fault_config_path; !user.empty()) {
    absl::StatusOr<std::string> read = ReadWholeFile(user, 8 << 20);
    if (read.ok()) {
      text = *std::move(read);
    } else {
      user_note = absl::StrCat("optional file ", user, " not used (shipped public-fault defaults ",
                               "apply): ", read.status().message());
    }
  }
  absl::StatusOr<PublicFaultConfig> config = absl::NotFoundError("no user configuration");
  bool from_user = false;
  if (!text.empty()) {
    config = ParsePublicFaultConfig(text);
    from_user = config.ok();
    if (!config.ok()) {
      user_note = absl::StrCat("optional file ", options_.public_fault_config_path,
                               " rejected (shipped public-fault defaults apply): ",
                               config.status().message());
    }
  }
  if (!config.ok()) {
    absl::StatusOr<std::string> defaults = shipped(kPublicFaultDefaultsFile);
    text = defaults.ok() ? *std::move(defaults) : std::string();
    config = defaults.ok() ? ParsePublicFaultConfig(text) : defaults.status();
  }
  absl::MutexLock lock(&mu_);
  if (relation.has_value() && *relation != relation_config_) {
    relation_config_ = *std::move(relation);
    LogInfo(kComponent, "relation fault configuration applied",
            {{"rules", relation_config_.rules.size()},
             {"durations", relation_config_.timeout_s.size()},
             {"dir", dir}});
  }
  if (user_note != configuration_note_) {
    if (!user_note.empty()) LogWarn(kComponent, "public fault user configuration", {{"problem", user_note}});
    configuration_note_ = user_note;
  }
  if (config.ok()) {
    std::string source = from_user ? options_.public_fault_config_path
                                   : absl::StrCat(dir, "/", Sv(kPublicFaultDefaultsFile));
    if (text != public_config_text_ || source != public_config_source_) {
      public_config_ = *config;
      public_config_text_ = text;
      public_faults_.SetResources(public_config_.resources, NowMs());
      public_config_source_ = std::move(source);
      LogInfo(kComponent, "public fault configuration applied",
              {{"resources", public_config_.resources.size()},
               {"codes", public_config_.level_of_code.size()},
               {"source", public_config_source_}});
    }
  } else if (public_config_text_.empty()) {
    LogError(kComponent, "no public fault configuration; public faults are refused",
             {{"error", config.status()}});
  } else {
    LogError(kComponent, "public fault configuration not reloaded; the previous one is kept",
             {{"error", config.status()}});
  }
}

FaultConfigurationView FaultCentre::Configuration() const {
  absl::MutexLock lock(&mu_);
  FaultConfigurationView v;
  v.manual_separation = manual_.policy();
  v.manual_separation_source =
      manual_policy_applied_ms_ > 0
          ? absl::StrCat(Sv(kManualNamespace), "/", Sv(kManualConfigName))
          : absl::StrCat("default (no valid ", Sv(kManualNamespace), "/", Sv(kManualConfigName),
                         " read)");
  v.manual_separation_applied_ms = manual_policy_applied_ms_;
  v.public_fault_source = public_config_source_;
  v.public_fault_resources = public_config_.resources;
  v.public_fault_codes = public_config_.level_of_code.size();
  v.relation_rules = relation_config_.rules.size();
  v.fault_durations = relation_config_.timeout_s.size();
  v.data_dir = options_.data_dir;
  if (!configuration_note_.empty()) v.notes.push_back(configuration_note_);
  return v;
}

std::vector<std::string> FaultCentre::ConfigurationNotes() const {
  absl::MutexLock lock(&mu_);
  if (configuration_note_.empty()) return {};
  return {configuration_note_};
}

void FaultCentre::PollConfigFiles() {
  bool changed = false;
  for (const auto& file : config_file_changes_) changed |= file->Changed();  // look at each
  if (changed) LoadConfigFiles();
  controller_.EnqueueAfter(kConfigPollKey, options_.config_poll_period);
}

// ---- start / stop ----

absl::Status FaultCentre::Start() {
  if (!options_.data_dir.empty()) {
    CLUSTERD_RETURN_IF_ERROR(CheckRequiredDataFiles(options_.data_dir));
  }
  // The files are looked at every config_poll_period and re-read when one changed (a ConfigMap
  // volume or an operator replaces them by rename; an edit in place changes size or mtime).
  std::vector<std::string> watched;
  if (!options_.data_dir.empty()) {
    for (std::string_view name : kRequiredDataFiles) {
      watched.push_back(absl::StrCat(options_.data_dir, "/", Sv(name)));
    }
  }
  if (!options_.public_fault_config_path.empty()) watched.push_back(options_.public_fault_config_path);
  // Removing the user file brings the shipped defaults back, so its removal is a change too.
  for (std::string& path : watched) {
    const bool user = path == options_.public_fault_config_path;
    config_file_changes_.push_back(
        std::make_unique<FileChange>(std::move(path), clock_, absl::ZeroDuration(), user));
    config_file_changes_.back()->Changed();  // the first look: read below
  }
  LoadConfigFiles();
  const int64_t now = NowMs();
  // Durable state first (§1.8, §7.4: before the pipeline starts).
  if (auto stat = store_.Get({std::string(store::kConfigMaps), std::string(kStatisticNamespace),
                              std::string(kStatisticName)});
      stat.ok()) {
    auto data = StringData(*stat);
    absl::MutexLock lock(&mu_);
    if (absl::Status s = public_faults_.LoadStatistic(data["PublicFaults"], now); !s.ok()) {
      LogWarn(kComponent, "statistic-fault-info not loaded", {{"error", s}});
    }
  }
  if (auto manual = store_.Get({std::string(store::kConfigMaps), std::string(kManualNamespace),
                                std::string(kManualInfoName)});
      manual.ok()) {
    std::vector<std::string> problems;
    ManualCache cache = ParseManualInfo(StringData(*manual), &problems);
    for (const auto& p : problems) LogWarn(kComponent, "clusterd-manual-info-cm", {{"problem", p}});
    absl::MutexLock lock(&mu_);
    manual_.Load(std::move(cache));
  }
  RunManualConfig();

  auto list = [&](std::string_view resource, const std::string& ns,
                  const std::string& selector) -> absl::StatusOr<store::ObjectList> {
    store::ListOptions options;
    options.ns = ns;
    if (!selector.empty()) options.selector = *store::LabelSelector::Parse(selector);
    auto l = store_.List(resource, options);
    if (!l.ok()) return Annotate(l.status(), absl::StrCat("fault centre: listing ", Sv(resource)));
    return l;
  };
  const std::string cim = absl::StrCat(Sv(model::kConsumerCimLabel), "=true");
  const std::string pf = absl::StrCat(Sv(kPublicFaultLabel), "=true");
  CLUSTERD_ASSIGN_OR_RETURN(store::ObjectList nodes, list(store::kNodes, "", ""));
  CLUSTERD_ASSIGN_OR_RETURN(store::ObjectList devices,
                            list(store::kConfigMaps, std::string(model::kDeviceInfoNamespace), cim));
  CLUSTERD_ASSIGN_OR_RETURN(store::ObjectList node_infos,
                            list(store::kConfigMaps, std::string(model::kNodeInfoNamespace), cim));
  CLUSTERD_ASSIGN_OR_RETURN(store::ObjectList public_cms, list(store::kConfigMaps, "", pf));

  auto stash = [this](std::string key, std::optional<store::Object> object) {
    {
      absl::MutexLock lock(&pending_mu_);
      pending_[key] = std::move(object);
    }
    controller_.Enqueue(key);
  };
  auto device_key = [](const store::Object& o) -> std::string {
    const std::string node = NodeOfConfigMap(store::NameOf(o), model::kDeviceInfoPrefix);
    return node.empty() ? "" : Key(kDevKey, node);
  };
  auto node_key = [](const store::Object& o) -> std::string {
    const std::string node = NodeOfConfigMap(store::NameOf(o), model::kNodeInfoPrefix);
    return node.empty() ? "" : Key(kNodKey, node);
  };
  auto pf_key = [](const store::Object& o) {
    return absl::StrCat(Sv(kPfKey), store::NamespaceOf(o), "/", store::NameOf(o));
  };
  for (auto& n : nodes.items) {
    std::string k = Key(kK8sKey, store::NameOf(n));
    stash(std::move(k), std::move(n));
  }
  for (auto& d : devices.items) {
    if (std::string k = device_key(d); !k.empty()) stash(k, std::move(d));
  }
  for (auto& d : node_infos.items) {
    if (std::string k = node_key(d); !k.empty()) stash(k, std::move(d));
  }
  for (auto& p : public_cms.items) {
    std::string k = pf_key(p);
    stash(std::move(k), std::move(p));
  }
  {
    std::vector<std::string> gone;
    RefreshIndex(&gone);
    absl::MutexLock lock(&mu_);
    node_shard_dirty_ = true;  // cluster-info-node-cm is written even when empty
  }
  writer_.Enqueue(kWriteKey);
  // The initial view, on this thread.
  const absl::Time begin = absl::Now();
  const size_t handled = controller_.DrainOnCallingThread();
  LogInfo(kComponent, "initial view built",
          {{"device_nodes", devices.items.size()}, {"node_infos", node_infos.items.size()},
           {"public_fault_cms", public_cms.items.size()}, {"k8s_nodes", nodes.items.size()},
           {"keys", handled}, {"ms", absl::ToInt64Milliseconds(absl::Now() - begin)}});

  if (options_.watch_store) {
    auto watch = [&](std::string_view resource, const std::string& ns, const std::string& selector,
                     const std::string& version) -> absl::Status {
      store::WatchOptions options;
      options.ns = ns;
      if (!selector.empty()) options.selector = *store::LabelSelector::Parse(selector);
      options.resource_version = version;
      std::string r(resource);
      auto handle = store_.Watch(resource, options,
                                 [this, r](const store::WatchEvent& e) { Observe(r, e); });
      if (!handle.ok()) {
        return Annotate(handle.status(), absl::StrCat("fault centre: watching ", Sv(resource)));
      }
      watches_.push_back(*std::move(handle));
      return absl::OkStatus();
    };
    CLUSTERD_RETURN_IF_ERROR(watch(store::kNodes, "", "", nodes.resource_version));
    CLUSTERD_RETURN_IF_ERROR(watch(store::kConfigMaps, std::string(model::kDeviceInfoNamespace), cim,
                                   devices.resource_version));
    CLUSTERD_RETURN_IF_ERROR(watch(store::kConfigMaps, std::string(model::kNodeInfoNamespace), cim,
                                   node_infos.resource_version));
    CLUSTERD_RETURN_IF_ERROR(watch(store::kConfigMaps, "", pf, public_cms.resource_version));
    // clusterd-config-cm: an operator's policy change takes effect when it is written.
    CLUSTERD_RETURN_IF_ERROR(watch(store::kConfigMaps, std::string(kManualNamespace), "",
                                   public_cms.resource_version));
    controller_.Enqueue(kManualConfigChangedKey);  // a change between the first read and the watch
  }

  controller_.EnqueueAfter(kIndexKey, options_.job_index_period);
  controller_.EnqueueAfter(kManualSyncKey, options_.manual_sync_period);
  controller_.EnqueueAfter(kManualConfigKey, options_.manual_config_period);
  controller_.EnqueueAfter(kConfigPollKey, options_.config_poll_period);
  return absl::OkStatus();
}

void FaultCentre::Stop() {
  watches_.clear();
  controller_.Stop();
  writer_.Stop();
}

void FaultCentre::JobsChanged() { controller_.Enqueue(kIndexKey); }

void FaultCentre::Observe(std::string_view resource, const store::WatchEvent& e) {
  const std::string name = store::NameOf(e.object);
  if (name.empty()) return;
  std::string key;
  if (resource == store::kNodes) {
    key = Key(kK8sKey, name);
  } else if (resource == store::kConfigMaps) {
    const std::string ns = store::NamespaceOf(e.object);
    if (ns == kManualNamespace) {
      if (name == kManualConfigName) controller_.Enqueue(kManualConfigChangedKey);
      return;  // the rest of cluster-system is clusterd's own output
    }
    std::string node;
    auto labels = e.object.find("metadata");
    std::string cim, pf;
    if (labels != e.object.end() && labels->is_object()) {
      if (auto l = labels->find("labels"); l != labels->end() && l->is_object()) {
        cim = StringOr(*l, std::string(model::kConsumerCimLabel), "");
        pf = StringOr(*l, std::string(kPublicFaultLabel), "");
      }
    }
    const bool deleted = e.type == store::WatchEventType::kDeleted;
    if (ns == model::kDeviceInfoNamespace && (cim == "true" || deleted) &&
        !(node = NodeOfConfigMap(name, model::kDeviceInfoPrefix)).empty()) {
      key = Key(kDevKey, node);
    } else if (ns == model::kNodeInfoNamespace && (cim == "true" || deleted) &&
               !(node = NodeOfConfigMap(name, model::kNodeInfoPrefix)).empty()) {
      key = Key(kNodKey, node);
    } else if (pf == "true" || deleted) {
      key = absl::StrCat(Sv(kPfKey), ns, "/", name);
    }
  }
  if (key.empty()) return;
  {
    absl::MutexLock lock(&pending_mu_);
    if (e.type == store::WatchEventType::kDeleted) {
      pending_[key] = std::nullopt;
    } else {
      pending_[key] = e.object;
    }
  }
  controller_.Enqueue(key);
}

// ---- the worker ----

void FaultCentre::Handle(const std::string& key) {
  const absl::Time begin = absl::Now();
  std::vector<JobFaultRanks> deliveries;
  std::vector<std::string> gone;
  std::vector<PodLabelPatch> patches;
  bool manual_sync = false, manual_config = false, statistic = false, poll = false, index = false;
  bool manual_config_changed = false;
  {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> jobs;
    std::string rest;
    if (HasPrefix(key, kDevKey, &rest)) {
      HandleDevice(rest, &jobs);
    } else if (HasPrefix(key, kNodKey, &rest)) {
      HandleNodeInfo(rest, &jobs);
    } else if (HasPrefix(key, kK8sKey, &rest)) {
      HandleK8sNode(rest, &jobs);
    } else if (HasPrefix(key, kPfKey, &rest)) {
      HandlePublicFaultCm(rest);
    } else if (HasPrefix(key, kJobKey, &rest)) {
      HandleJob(rest, &deliveries, &patches);
    } else if (key == kIndexKey) {
      index = true;
    } else if (key == kPfExpireKey) {
      for (const std::string& node : public_faults_.Expire(NowMs())) controller_.Enqueue(Key(kDevKey, node));
      if (auto due = public_faults_.NextDue()) ScheduleAt(kPfExpireKey, *due);
      statistic_dirty_ = true;
      controller_.Enqueue(kStatisticKey);
      public_faults_gauge_.Set(static_cast<double>(public_faults_.Size()));
    } else if (key == kManualTriageKey) {
      RunManualTriage();
    } else if (key == kManualSyncKey) {
      manual_sync = true;
    } else if (key == kManualConfigKey) {
      manual_config = true;
    } else if (key == kManualConfigChangedKey) {
      manual_config_changed = true;
    } else if (key == kStatisticKey) {
      statistic = true;
    } else if (key == kConfigPollKey) {
      poll = true;
    }
    for (const std::string& j : jobs) controller_.Enqueue(Key(kJobKey, j));
  }
  if (index) {
    RefreshIndex(&gone);
    controller_.EnqueueAfter(kIndexKey, options_.job_index_period);
  }
  for (const JobFaultRanks& d : deliveries) {
    snapshots_.Increment();
    for (JobFaultSink* sink : sinks_) sink->OnJobFaults(d);
  }
  for (const std::string& id : gone) {
    for (JobFaultSink* sink : sinks_) sink->OnJobGone(id);
  }
  if (!patches.empty()) PatchPodLabels(patches);
  if (manual_sync) RunManualSync();
  if (manual_config_changed && !manual_config) RunManualConfig();
  if (manual_config) {
    RunManualConfig();
    controller_.EnqueueAfter(kManualConfigKey, options_.manual_config_period);
  }
  if (statistic) WriteStatistic();
  if (poll) PollConfigFiles();
  process_seconds_.Observe(absl::ToDoubleSeconds(absl::Now() - begin));
}

void FaultCentre::MarkDirty(Kind kind) {
  writer_.Enqueue(kWriteKey);
  switch (kind) {
    case Kind::kDevice:
      for (size_t i : device_shards_.TakeDirty()) device_dirty_.insert(i);
      break;
    case Kind::kSwitch:
      for (size_t i : switch_shards_.TakeDirty()) switch_dirty_.insert(i);
      break;
    case Kind::kNode:
      node_shard_.TakeDirty();
      node_shard_dirty_ = true;
      break;
  }
}

bool FaultCentre::NodeReady(const NodeState* ns) const {
  if (ns != nullptr && ns->k8s_exists) return ns->k8s_ready;
  switch (options_.missing_node) {
    case Options::MissingNode::kNotReady:
      return false;
    case Options::MissingNode::kReady:
      return true;
    case Options::MissingNode::kAuto:
      return k8s_nodes_ == 0;
  }
  return true;
}

void FaultCentre::QueueJobsOn(const std::string& node, std::vector<std::string>* jobs) const {
  for (const std::string& id : index_.JobsOn(node)) jobs->push_back(id);
}

std::set<std::string> FaultCentre::UsedNpus(const std::string& node,
                                            const std::string& device_type) const {
  std::set<std::string> out;
  if (auto it = index_.npus_by_node.find(node); it != index_.npus_by_node.end()) {
    for (const auto& [id, use] : it->second) out.insert(absl::StrCat(device_type, "-", id));
  }
  return out;
}

void FaultCentre::HandleDevice(const std::string& node, std::vector<std::string>* jobs) {
  std::optional<std::optional<store::Object>> pending;
  {
    absl::MutexLock lock(&pending_mu_);
    if (auto it = pending_.find(Key(kDevKey, node)); it != pending_.end()) {
      pending = std::move(it->second);
      pending_.erase(it);
    }
  }
  NodeState& ns = nodes_[node];
  const int64_t now = NowMs();
  if (pending.has_value()) {
    if (!pending->has_value()) {  // deleted
      if (ns.device_original.has_value()) --device_records_;
      if (ns.device_original.has_value()) device_shards_.Remove(ns.device_original->cm_name);
      if (ns.switch_original.has_value()) switch_shards_.Remove(ns.switch_original->cm_name);
      ns.device_original.reset();
      ns.device_out.reset();
      ns.switch_original.reset();
      ns.switch_out.reset();
      ns.device_state = DeviceCycleState{};
      MarkDirty(Kind::kDevice);
      MarkDirty(Kind::kSwitch);
      device_nodes_gauge_.Set(static_cast<double>(device_records_));
      QueueJobsOn(node, jobs);
      return;
    }
    absl::StatusOr<DeviceIntake> intake = DeviceIntakeFromConfigMap(**pending, options_.intake);
    if (!intake.ok()) {
      Reject("device-info", IntakeRejectionReason(intake.status()),
             absl::StrCat("device-info ConfigMap ignored, last good state kept: ",
                          intake.status().message()));
      return;
    }
    for (const std::string& d : intake->dropped) {
      Reject("device-info", "invalid_entry",
             absl::StrCat("configmap ", intake->device.cm_name, ": dropped ", d));
    }
    if (!ns.device_original.has_value() && device_records_ >= options_.max_device_records) {
      Reject("device-info", "too_many_records",
             absl::StrCat("configmap ", intake->device.cm_name, " ignored: the centre holds ",
                          device_records_, " device records"));
      return;
    }
    CarryReceiveTimes(ns.device_original ? &*ns.device_original : nullptr, intake->device, now);
    if (intake->switch_record.has_value()) {
      CarryReceiveTimes(ns.switch_original ? &*ns.switch_original : nullptr, *intake->switch_record,
                        now);
    } else if (ns.switch_original.has_value()) {
      switch_shards_.Remove(ns.switch_original->cm_name);
      ns.switch_out.reset();
      MarkDirty(Kind::kSwitch);
    }
    if (!ns.device_original.has_value()) ++device_records_;
    // A node whose rank-0 pod runs a recover-in-place job decides for the job's other nodes.
    for (const std::string& id : index_.JobsOn(node)) {
      const FaultJob* job = index_.Job(id);
      if (job == nullptr || !job->policy.recover_in_place) continue;
      for (const FaultJobPod& p : job->pods) {
        if (p.rank == 0 && p.node == node) {
          for (const std::string& other : index_.NodesOf(*job)) {
            if (other != node) controller_.Enqueue(Key(kDevKey, other));
          }
        }
      }
    }
    ns.device_original = std::move(intake->device);
    ns.switch_original = std::move(intake->switch_record);
    device_nodes_gauge_.Set(static_cast<double>(device_records_));
  }
  ProcessSwitch(node, ns);
  ProcessDevice(node, ns, jobs);
}

DeviceCycleInput FaultCentre::DeviceInputFor(const std::string& node, const DeviceRecord& record,
                                             int64_t now) {
  DeviceCycleInput in;
  in.now_ms = now;
  in.public_faults = public_faults_.OnNode(node);
  in.stress_test = stress_nodes_.count(node) != 0;
  in.manual_separation_enabled = manual_.enabled();
  if (in.manual_separation_enabled) in.manual_npus = manual_.NpusOn(node);
  if (const NodeState* ns = nodes_.count(node) ? &nodes_.at(node) : nullptr) {
    in.retry.switch_link_down_ms = ns->switch_state.link_down_ms;
  }
  auto uses = index_.npus_by_node.find(node);
  if (uses == index_.npus_by_node.end()) return in;
  for (const auto& [id, use] : uses->second) {
    const std::string npu = record.NpuName(id);
    in.used_npus.insert(npu);
    in.job_of_npu[npu] = use.job_id;
    const FaultJob* job = index_.Job(use.job_id);
    if (job == nullptr) continue;
    const FaultJobPolicy& policy = job->policy;
    bool mindie_filter = policy.mindie_server && fault_subscribed_ &&
                         !job->multi_instance_job_id.empty() &&
                         fault_subscribed_(job->multi_instance_job_id);
    if (!policy.code_rules.empty() || !policy.level_rules.empty() || mindie_filter) {
      if (mindie_filter) {
        FaultJobPolicy& effective = mindie_policies_[job->job_id];
        effective = policy;
        effective.level_rules.push_back(CustomFilterRule{"RestartRequest", kCustomFilterDefaultSeconds});
        in.custom_filter.rules_by_npu[npu] = &effective;
      } else {
        in.custom_filter.rules_by_npu[npu] = &policy;
      }
    }
    if (policy.retry) {
      in.retry.retry_npus.insert(npu);
      if (auto jr = retry_.find(job->job_id); jr != retry_.end()) {
        if (auto r = jr->second.find({node, id}); r != jr->second.end()) {
          in.retry.reports[npu] = r->second;
          if (r->second.type == 0) in.business_uce_ms[npu] = r->second.report_ms;
        }
      }
    }
    if (policy.recover_in_place && use.pod_rank.has_value()) {
      RecoverInPlaceNpu rip;
      rip.job_id = job->job_id;
      rip.pod_rank = *use.pod_rank;
      rip.pod_uid = use.pod_uid;
      rip.allow_sub_health = policy.sub_healthy_strategy == "ignore";
      for (const FaultJobPod& p : job->pods) {
        if (p.rank != 0 || p.uid == use.pod_uid || p.node.empty()) continue;
        auto n0 = nodes_.find(p.node);
        if (n0 == nodes_.end() || !n0->second.device_original.has_value()) continue;
        std::set<std::string> names;
        for (int64_t pid : p.npus) names.insert(n0->second.device_original->NpuName(pid));
        rip.rank0_eligible = PodEligibleForRecoverInPlace(*n0->second.device_original, names,
                                                          rip.allow_sub_health, now);
      }
      in.recover_in_place.npus[npu] = rip;
    }
  }
  return in;
}

void FaultCentre::ProcessDevice(const std::string& node, NodeState& ns,
                                std::vector<std::string>* jobs) {
  if (!ns.device_original.has_value()) return;
  const int64_t now = NowMs();
  // Forget business reports older than 60 s (recovery-protocol.md §8.3).
  for (auto& [job, reports] : retry_) {
    for (auto it = reports.begin(); it != reports.end();) {
      it = now - it->second.report_ms > kRetryReportForgetMs ? reports.erase(it) : std::next(it);
    }
  }
  DeviceCycleInput input = DeviceInputFor(node, *ns.device_original, now);
  DeviceCycleOutput out = RunDeviceCycle(*ns.device_original, ns.device_state, input);
  // A re-run that changes nothing keeps the UpdateTime of the previous result, so that a
  // node is not republished just because it was looked at again.
  if (ns.device_out.has_value() && out.record.update_time_s != ns.device_original->update_time_s) {
    DeviceRecord same = out.record;
    same.update_time_s = ns.device_out->record.update_time_s;
    if (same == ns.device_out->record) out.record.update_time_s = same.update_time_s;
  }
  const bool changed = !ns.device_out.has_value() || ns.device_out->record != out.record ||
                       ns.device_out->custom_hidden != out.custom_hidden ||
                       ns.device_out->in_place_hidden != out.in_place_hidden ||
                       ns.device_out->force_added != out.force_added;
  if (!out.occurrences.empty()) {
    manual_.Submit(out.occurrences);
    if (auto due = manual_.NextTriageDue()) ScheduleAt(kManualTriageKey, *due);
  }
  if (out.next_due_ms.has_value()) ScheduleAt(Key(kDevKey, node), *out.next_due_ms);
  device_shards_.Upsert(out.record.cm_name, RenderDeviceEntry(out.record));
  MarkDirty(Kind::kDevice);
  ns.device_out = std::move(out);
  if (changed) QueueJobsOn(node, jobs);
}

void FaultCentre::ProcessSwitch(const std::string& node, NodeState& ns) {
  if (!ns.switch_original.has_value()) return;
  SwitchCycleInput in;
  in.now_ms = NowMs();
  for (const std::string& id : index_.JobsOn(node)) {
    if (const FaultJob* job = index_.Job(id);
        job != nullptr && (!job->policy.code_rules.empty() || !job->policy.level_rules.empty())) {
      in.policies.push_back(&job->policy);
    }
  }
  in.any_npu_used = index_.npus_by_node.count(node) != 0 && !index_.npus_by_node.at(node).empty();
  SwitchCycleOutput out = RunSwitchCycle(*ns.switch_original, ns.switch_state, in);
  if (out.next_due_ms.has_value()) ScheduleAt(Key(kDevKey, node), *out.next_due_ms);
  switch_shards_.Upsert(out.record.cm_name, RenderSwitchEntry(out.record));
  MarkDirty(Kind::kSwitch);
  ns.switch_out = std::move(out.record);
}

void FaultCentre::HandleNodeInfo(const std::string& node, std::vector<std::string>* jobs) {
  std::optional<std::optional<store::Object>> pending;
  {
    absl::MutexLock lock(&pending_mu_);
    if (auto it = pending_.find(Key(kNodKey, node)); it != pending_.end()) {
      pending = std::move(it->second);
      pending_.erase(it);
    }
  }
  NodeState& ns = nodes_[node];
  if (pending.has_value()) {
    if (!pending->has_value()) {
      if (ns.node_original.has_value()) node_shard_.Remove(ns.node_original->cm_name);
      ns.node_original.reset();
      ns.node_out.reset();
      MarkDirty(Kind::kNode);
      QueueJobsOn(node, jobs);
      return;
    }
    absl::StatusOr<NodeRecord> record = NodeRecordFromConfigMap(**pending, options_.intake);
    if (!record.ok()) {
      Reject("node-info", IntakeRejectionReason(record.status()),
             absl::StrCat("node-info ConfigMap ignored, last good state kept: ",
                          record.status().message()));
      return;
    }
    ns.node_original = *std::move(record);
  }
  if (!ns.node_original.has_value()) return;
  const bool used = index_.npus_by_node.count(node) != 0 && !index_.npus_by_node.at(node).empty();
  NodeRecord out = RunNodeCycle(*ns.node_original, used);
  const bool changed = !ns.node_out.has_value() || *ns.node_out != out;
  node_shard_.Upsert(out.cm_name, RenderNodeEntry(out));
  ns.node_out = std::move(out);
  if (changed) {
    MarkDirty(Kind::kNode);
    QueueJobsOn(node, jobs);
  }
}

void FaultCentre::HandleK8sNode(const std::string& node, std::vector<std::string>* jobs) {
  std::optional<std::optional<store::Object>> pending;
  {
    absl::MutexLock lock(&pending_mu_);
    if (auto it = pending_.find(Key(kK8sKey, node)); it != pending_.end()) {
      pending = std::move(it->second);
      pending_.erase(it);
    }
  }
  if (!pending.has_value()) return;
  NodeState& ns = nodes_[node];
  const bool was_ready = NodeReady(&ns);
  if (!ns.sn.empty()) node_by_sn_.erase(ns.sn);
  if (!pending->has_value()) {
    if (ns.k8s_exists) --k8s_nodes_;
    ns.k8s_exists = false;
    ns.k8s_ready = false;
    ns.sn.clear();
  } else {
    if (!ns.k8s_exists) ++k8s_nodes_;
    ns.k8s_exists = true;
    ns.k8s_ready = NodeIsReady(**pending);
    ns.ip = NodeInternalIp(**pending);
    ns.sn = NodeSerial(**pending);
    if (!ns.sn.empty()) node_by_sn_[ns.sn] = node;
  }
  if (NodeReady(&ns) != was_ready) QueueJobsOn(node, jobs);
}

// ---- public faults ----

void FaultCentre::ApplyPublicFaults(const std::string& resource, const PublicFaultRequest& request,
                                    std::string_view source, PublicFaultVerdict* verdict) {
  const int64_t now = NowMs();
  if (!public_faults_.Admit(resource, now)) {
    verdict->code = kPubFaultRateLimited;
    verdict->info = std::string(kPubFaultRateLimitedInfo);
    PublicFaultRequests(source, verdict->code).Increment();
    RejectedCounter("public-fault", "rate_limited").Increment();
    LogWarn(kComponent, "public fault request rate limited",
            {{"source", source}, {"resource", resource}, {"id", request.id}});
    return;
  }
  auto by_sn = [this](const std::string& sn) -> std::optional<std::string> {
    mu_.AssertHeld();
    auto it = node_by_sn_.find(sn);
    if (it == node_by_sn_.end()) return std::nullopt;
    return it->second;
  };
  *verdict = ValidatePublicFaultRequest(request, public_config_, by_sn);
  PublicFaultRequests(source, verdict->code).Increment();
  for (const std::string& d : verdict->dropped) {
    RejectedCounter("public-fault", "invalid_entry").Increment();
    LogWarn(kComponent, "public fault dropped", {{"source", source}, {"id", request.id}, {"reason", d}});
  }
  if (verdict->code != kPubFaultOk) {
    RejectedCounter("public-fault", "invalid").Increment();
    LogWarn(kComponent, "public fault request rejected",
            {{"source", source}, {"id", request.id}, {"info", verdict->info}});
    return;
  }
  size_t full = 0;
  for (const std::string& node : public_faults_.Apply(resource, verdict->accepted, now, &full)) {
    controller_.Enqueue(Key(kDevKey, node));
  }
  if (full > 0) {
    RejectedCounter("public-fault", "cache_full").Increment(full);
    LogWarn(kComponent, "public fault cache full", {{"dropped", full}});
  }
  if (auto due = public_faults_.NextDue()) ScheduleAt(kPfExpireKey, *due);
  statistic_dirty_ = true;
  const int64_t next =
      std::max(now, absl::ToUnixMillis(last_statistic_write_ + options_.statistic_min_interval));
  ScheduleAt(kStatisticKey, next);
  public_faults_gauge_.Set(static_cast<double>(public_faults_.Size()));
}

PublicFaultVerdict FaultCentre::SendPublicFault(const PublicFaultRequest& request) {
  PublicFaultVerdict verdict;
  absl::MutexLock lock(&mu_);
  ApplyPublicFaults(request.resource, request, "grpc", &verdict);
  return verdict;
}

void FaultCentre::HandlePublicFaultCm(const std::string& ns_name) {
  std::optional<std::optional<store::Object>> pending;
  {
    absl::MutexLock lock(&pending_mu_);
    if (auto it = pending_.find(Key(kPfKey, ns_name)); it != pending_.end()) {
      pending = std::move(it->second);
      pending_.erase(it);
    }
  }
  // Deleting the CM does nothing: faults must be recovered explicitly (§1.8).
  if (!pending.has_value() || !pending->has_value()) return;
  auto data = StringData(**pending);
  auto it = data.find(std::string(kPublicFaultKey));
  if (it == data.end()) {
    Reject("public-fault", "malformed", absl::StrCat("configmap ", ns_name, ": no PublicFault key"));
    return;
  }
  absl::StatusOr<PublicFaultRequest> request = ParsePublicFaultRequest(it->second);
  if (!request.ok()) {
    PublicFaultRequests("configmap", kPubFaultInvalid).Increment();
    Reject("public-fault", "malformed",
           absl::StrCat("configmap ", ns_name, ": ", request.status().message()));
    return;
  }
  PublicFaultVerdict verdict;
  ApplyPublicFaults(request->resource, *request, "configmap", &verdict);
}

// ---- manual separation ----

void FaultCentre::RunManualTriage() {
  auto exists = [this](const std::string& job_id) {
    mu_.AssertHeld();
    const FaultJob* job = index_.Job(job_id);
    return job != nullptr && job->pod_group_exists;
  };
  for (const std::string& node : manual_.Triage(NowMs(), exists)) controller_.Enqueue(Key(kDevKey, node));
  if (auto due = manual_.NextTriageDue()) ScheduleAt(kManualTriageKey, *due);
}

void FaultCentre::RunManualSync() {
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(kManualNamespace),
                             std::string(kManualInfoName)};
  std::optional<ManualCache> now_cm;
  absl::StatusOr<store::Object> read = store_.Get(key);
  if (read.ok()) {
    now_cm = ParseManualInfo(StringData(*read), nullptr);
  } else if (absl::IsNotFound(read.status())) {
    now_cm = ManualCache{};
  }
  ManualSeparationEngine::SyncPlan plan;
  {
    absl::MutexLock lock(&mu_);
    plan = manual_.Sync(now_cm, NowMs());
    for (const std::string& node : plan.changed_nodes) controller_.Enqueue(Key(kDevKey, node));
  }
  if (plan.delete_cm) {
    if (read.ok()) {
      if (absl::Status s = store_.Delete(key); !s.ok() && !absl::IsNotFound(s)) {
        LogWarn(kComponent, "deleting clusterd-manual-info-cm failed", {{"error", s}});
      }
    }
  } else if (plan.write.has_value()) {
    absl::Status s = WriteConfigMap(kManualNamespace, std::string(kManualInfoName),
                                    RenderManualInfo(*plan.write), {});
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      manual_.Written(*plan.write);
    } else {
      LogWarn(kComponent, "writing clusterd-manual-info-cm failed", {{"error", s}});
    }
  }
  controller_.EnqueueAfter(kManualSyncKey, options_.manual_sync_period);
}

void FaultCentre::RunManualConfig() {
  absl::StatusOr<store::Object> cm =
      store_.Get({std::string(store::kConfigMaps), std::string(kManualNamespace),
                  std::string(kManualConfigName)});
  if (!cm.ok()) return;  // a missing CM or key keeps the previous configuration
  auto data = StringData(*cm);
  auto it = data.find(std::string(kManualPolicyKey));
  if (it == data.end()) return;
  absl::StatusOr<ManualSeparationPolicy> policy = ParseManualSeparationPolicy(it->second);
  if (!policy.ok()) {
    Reject("manual-separation-config", "invalid",
           absl::StrCat("manual separation policy rejected, previous kept: ", policy.status().message()));
    return;
  }
  absl::MutexLock lock(&mu_);
  if (manual_policy_applied_ms_ == 0) manual_policy_applied_ms_ = NowMs();
  if (manual_.policy() == *policy) return;
  manual_policy_applied_ms_ = NowMs();
  const bool was = manual_.enabled();
  manual_.SetPolicy(*policy);
  LogInfo(kComponent, "manual separation policy applied from cluster-system/clusterd-config-cm",
          {{"enabled", policy->enabled}, {"threshold", policy->fault_threshold},
           {"window_hours", policy->fault_window_hours}, {"free_hours", policy->fault_free_hours}});
  if (was != policy->enabled) {
    for (const auto& [node, ns] : nodes_) {
      if (ns.device_original.has_value()) controller_.Enqueue(Key(kDevKey, node));
    }
  }
}

// ---- statistic-fault-info ----

void FaultCentre::WriteStatistic() {
  std::map<std::string, std::string> data;
  {
    absl::MutexLock lock(&mu_);
    if (!statistic_dirty_) return;
    const absl::Time earliest = last_statistic_write_ + options_.statistic_min_interval;
    if (clock_.Now() < earliest) {
      controller_.EnqueueAfter(kStatisticKey, earliest - clock_.Now());
      return;
    }
    data = public_faults_.StatisticData();
    statistic_dirty_ = false;
    last_statistic_write_ = clock_.Now();
  }
  const std::map<std::string, std::string> labels = {{std::string(kStatisticLabel), "true"}};
  absl::Status s;
  if (data.count("PublicFaults") == 0) {
    // More than 4500 faults: only FaultNum and Description change (§1.8).
    store::Object patch;
    patch["data"]["FaultNum"] = data["FaultNum"];
    patch["data"]["Description"] = data["Description"];
    auto patched = store_.Patch({std::string(store::kConfigMaps), std::string(kStatisticNamespace),
                                 std::string(kStatisticName)},
                                patch);
    s = patched.ok() || !absl::IsNotFound(patched.status())
            ? patched.status()
            : WriteConfigMap(kStatisticNamespace, std::string(kStatisticName), data, labels);
  } else {
    s = WriteConfigMap(kStatisticNamespace, std::string(kStatisticName), data, labels);
  }
  if (!s.ok()) {
    LogWarn(kComponent, "writing statistic-fault-info failed", {{"error", s}});
    absl::MutexLock lock(&mu_);
    statistic_dirty_ = true;
    controller_.EnqueueAfter(kStatisticKey, absl::Seconds(1));
  }
}

// ---- jobs ----

JobNodeView FaultCentre::ViewOf(const std::string& node) const {
  JobNodeView v;
  auto it = nodes_.find(node);
  v.node_ready = NodeReady(it == nodes_.end() ? nullptr : &it->second);
  if (it == nodes_.end()) return v;
  const NodeState& ns = it->second;
  if (ns.device_out.has_value()) {
    v.device = &ns.device_out->record;
    v.custom_hidden = &ns.device_out->custom_hidden;
    v.in_place_hidden = &ns.device_out->in_place_hidden;
    v.force_added = &ns.device_out->force_added;
  }
  if (ns.switch_out.has_value()) v.switch_record = &*ns.switch_out;
  if (ns.node_out.has_value()) v.node_record = &*ns.node_out;
  return v;
}

void FaultCentre::HandleJob(const std::string& job_id, std::vector<JobFaultRanks>* deliveries,
                            std::vector<PodLabelPatch>* patches) {
  const FaultJob* job = index_.Job(job_id);
  if (job == nullptr) return;
  const int64_t now = NowMs();
  JobState& st = jobs_[job_id];
  NodeViewFn view = [this](const std::string& node) {
    mu_.AssertHeld();
    return ViewOf(node);
  };
  RelationOutput relation;
  if (!job->servers.empty()) {
    relation = RunRelationFault(*job, relation_config_, view, st.relation, now);
  }
  for (const PodLabelPatch& p : relation.patches) patches->push_back(p);
  RetryBook book;
  if (auto r = retry_.find(job_id); r != retry_.end()) book = r->second;
  JobFaultRankResult result = ComputeJobFaultRanks(*job, view, relation, book, now);
  std::optional<int64_t> due = result.next_due_ms;
  if (relation.next_due_ms.has_value() && (!due.has_value() || *relation.next_due_ms < *due)) {
    due = relation.next_due_ms;
  }
  if (due.has_value()) ScheduleAt(Key(kJobKey, job_id), *due);
  const bool deliver = st.delivered ? result.faults != st.last : !result.faults.Empty();
  if (!deliver) return;
  for (const FaultCodeEvent& e : FaultCodeEvents(result.faults, &st.digest, now)) {
    LogInfo(kComponent, "Job Event",
            {{"job", job_id}, {"faultCode", e.fault_code}, {"timestamp", e.timestamp_ms},
             {"nodeName", e.node_name}, {"deviceId", e.device_id}, {"faultLevel", e.fault_level}});
  }
  st.last = result.faults;
  st.delivered = true;
  deliveries->push_back(std::move(result.faults));
}

void FaultCentre::RefreshIndex(std::vector<std::string>* gone) {
  if (registry_ == nullptr) return;
  std::vector<JobRegistry::FaultSnapshotEntry> snapshot = registry_->FaultSnapshot();
  auto same = [](const JobRegistry::FaultSnapshotEntry& a, const JobRegistry::FaultSnapshotEntry& b) {
    return a.record == b.record && a.pod_group == b.pod_group && a.pods == b.pods;
  };
  if (snapshot.size() == index_source_.size() &&
      std::equal(snapshot.begin(), snapshot.end(), index_source_.begin(), same)) {
    return;  // nothing the index is built from changed
  }
  std::vector<FaultJobSource> sources;
  sources.reserve(snapshot.size());
  for (const auto& e : snapshot) {
    FaultJobSource src;
    src.record = e.record.get();
    src.pod_group = e.pod_group.get();
    for (const auto& p : e.pods) src.pods.push_back(p.get());
    sources.push_back(std::move(src));
  }
  FaultJobIndex fresh = BuildFaultJobIndex(sources);
  index_source_ = std::move(snapshot);
  absl::MutexLock lock(&mu_);
  SwapIndex(std::move(fresh), gone);
}

void FaultCentre::SwapIndex(FaultJobIndex fresh, std::vector<std::string>* gone) {
  std::set<std::string> nodes_to_redo;
  for (const auto& [id, job] : fresh.jobs) {
    const FaultJob* old = index_.Job(id);
    if (old != nullptr && *old == job) continue;
    controller_.Enqueue(Key(kJobKey, id));
    for (const std::string& n : fresh.NodesOf(job)) nodes_to_redo.insert(n);
    if (old != nullptr) {
      for (const std::string& n : index_.NodesOf(*old)) nodes_to_redo.insert(n);
    }
  }
  for (const auto& [id, job] : index_.jobs) {
    if (fresh.jobs.count(id) != 0) continue;
    gone->push_back(id);
    jobs_.erase(id);
    retry_.erase(id);
    mindie_policies_.erase(id);
    for (const std::string& n : index_.NodesOf(job)) nodes_to_redo.insert(n);
  }
  index_ = std::move(fresh);
  for (const std::string& n : nodes_to_redo) {
    if (auto it = nodes_.find(n); it != nodes_.end()) {
      if (it->second.device_original.has_value()) controller_.Enqueue(Key(kDevKey, n));
      if (it->second.node_original.has_value()) controller_.Enqueue(Key(kNodKey, n));
    }
  }
}

void FaultCentre::PatchPodLabels(const std::vector<PodLabelPatch>& patches) {
  std::vector<std::pair<std::string, std::string>> targets;  // (ns, name), value
  std::vector<std::string> values;
  {
    absl::MutexLock lock(&mu_);
    for (const PodLabelPatch& p : patches) {
      for (const auto& [id, job] : index_.jobs) {
        for (const FaultJobPod& pod : job.pods) {
          if (pod.uid == p.pod_uid) {
            targets.emplace_back(pod.ns, pod.name);
            values.push_back(p.value);
          }
        }
      }
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    store::Object patch;
    patch["metadata"]["labels"][std::string(kLabelFaultType)] = values[i];
    absl::Status last;
    for (int attempt = 0; attempt < 3; ++attempt) {
      last = store_.Patch({std::string(store::kPods), targets[i].first, targets[i].second}, patch)
                 .status();
      if (last.ok() || absl::IsNotFound(last)) break;
    }
    if (!last.ok()) {
      LogWarn(kComponent, "labelling pod failed",
              {{"pod", absl::StrCat(targets[i].first, "/", targets[i].second)}, {"error", last}});
    } else {
      LogInfo(kComponent, "pod labelled",
              {{"pod", absl::StrCat(targets[i].first, "/", targets[i].second)},
               {"fault-type", values[i]}});
    }
  }
}

// ---- business plane ----

void FaultCentre::ReportBusinessRetry(const std::string& job_id, int64_t rank, int type) {
  absl::MutexLock lock(&mu_);
  const FaultJob* job = index_.Job(job_id);
  if (job == nullptr) return;
  for (const FaultJobServer& s : job->servers) {
    for (const FaultJobDevice& d : s.devices) {
      if (d.rank_id != rank) continue;
      retry_[job_id][{s.node, d.device_id}] = RetryReport{NowMs(), type, std::nullopt};
      controller_.Enqueue(Key(kDevKey, s.node));
      controller_.Enqueue(Key(kJobKey, job_id));
    }
  }
}

void FaultCentre::ReportRetryComplete(const std::string& job_id, int64_t rank) {
  absl::MutexLock lock(&mu_);
  const FaultJob* job = index_.Job(job_id);
  auto reports = retry_.find(job_id);
  if (job == nullptr || reports == retry_.end()) return;
  for (const FaultJobServer& s : job->servers) {
    for (const FaultJobDevice& d : s.devices) {
      if (d.rank_id != rank) continue;
      if (auto r = reports->second.find({s.node, d.device_id}); r != reports->second.end()) {
        r->second.complete_ms = NowMs();
        controller_.Enqueue(Key(kDevKey, s.node));
        controller_.Enqueue(Key(kJobKey, job_id));
      }
    }
  }
}

void FaultCentre::SetStressTestNodes(std::set<std::string> nodes) {
  absl::MutexLock lock(&mu_);
  for (const std::string& n : stress_nodes_) controller_.Enqueue(Key(kDevKey, n));
  for (const std::string& n : nodes) controller_.Enqueue(Key(kDevKey, n));
  stress_nodes_ = std::move(nodes);
}

// ---- publication ----

absl::Status FaultCentre::WriteConfigMap(std::string_view ns, const std::string& name,
                                         const std::map<std::string, std::string>& data,
                                         const std::map<std::string, std::string>& labels) {
  store::Object cm;
  cm["apiVersion"] = "v1";
  cm["kind"] = "ConfigMap";
  cm["metadata"]["name"] = name;
  cm["metadata"]["namespace"] = std::string(ns);
  if (!labels.empty()) {
    for (const auto& [k, v] : labels) cm["metadata"]["labels"][k] = v;
  }
  cm["data"] = store::Object::object();
  for (const auto& [k, v] : data) cm["data"][k] = v;
  absl::StatusOr<store::Object> updated = store_.Update(store::kConfigMaps, cm);
  if (updated.ok()) return absl::OkStatus();
  if (!absl::IsNotFound(updated.status())) return updated.status();
  absl::StatusOr<store::Object> created = store_.Create(store::kConfigMaps, cm);
  if (created.ok()) return absl::OkStatus();
  if (absl::IsAlreadyExists(created.status())) return store_.Update(store::kConfigMaps, cm).status();
  return created.status();
}

void FaultCentre::RemarkDirty(const std::string& cm_name) {
  if (absl::StartsWith(cm_name, Sv(kClusterInfoDevicePrefix))) {
    device_dirty_.insert(std::stoul(cm_name.substr(kClusterInfoDevicePrefix.size())));
  } else if (absl::StartsWith(cm_name, Sv(kClusterInfoSwitchPrefix))) {
    switch_dirty_.insert(std::stoul(cm_name.substr(kClusterInfoSwitchPrefix.size())));
  } else {
    node_shard_dirty_ = true;
  }
}

size_t FaultCentre::FlushWrites() {
  const uint64_t before = shard_writes_.load();
  writer_.RunUntilIdleForTest();
  return static_cast<size_t>(shard_writes_.load() - before);
}

// The writer's one key: writes the dirty shards one at a time, each taking a token of the
// bucket (the original's 5 writes/s); out of tokens, it asks to be woken when the next one is
// due. Whatever changes meanwhile coalesces into the shard's next write.
runtime::Result FaultCentre::ReconcileWrites() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (device_dirty_.empty() && switch_dirty_.empty() && !node_shard_dirty_) {
        return runtime::Result::Done();
      }
    }
    if (!write_bucket_.TryAcquire()) {
      return runtime::Result::RequeueAfter(write_bucket_.TimeUntilAvailable());
    }
    std::pair<std::string, std::string> one;
    {
      absl::MutexLock lock(&mu_);
      if (!device_dirty_.empty()) {
        const size_t i = *device_dirty_.begin();
        device_dirty_.erase(device_dirty_.begin());
        one = {device_shards_.Name(i), device_shards_.Render(i)};
      } else if (!switch_dirty_.empty()) {
        const size_t i = *switch_dirty_.begin();
        switch_dirty_.erase(switch_dirty_.begin());
        one = {switch_shards_.Name(i), switch_shards_.Render(i)};
      } else if (node_shard_dirty_) {
        node_shard_dirty_ = false;
        one = {std::string(kClusterInfoNodeName), node_shard_.Render(0)};
      } else {
        return runtime::Result::Done();
      }
    }
    absl::Status s = WriteConfigMap(kClusterInfoNamespace, one.first, {{one.first, one.second}},
                                    {{std::string(kConsumerVolcanoLabel), "true"}});
    if (!s.ok()) {
      writes_failed_.Increment();
      LogWarn(kComponent, "writing cluster-info ConfigMap failed; retrying with back-off",
              {{"name", one.first}, {"error", s}});
      absl::MutexLock lock(&mu_);
      RemarkDirty(one.first);
      return runtime::Result::Retry(s);
    }
    writes_ok_.Increment();
    bytes_written_.Increment(one.second.size());
    shard_writes_.fetch_add(1);
  }
}

// ---- queries ----

std::vector<FaultViewRow> FaultCentre::FaultRows(const std::string& node_filter,
                                                 const std::string& job_filter) const {
  absl::MutexLock lock(&mu_);
  std::vector<FaultViewRow> rows;
  const FaultJob* job = nullptr;
  if (!job_filter.empty()) {
    job = index_.Job(job_filter);
    if (job == nullptr) {
      for (const auto& [id, j] : index_.jobs) {
        if (j.name == job_filter || absl::StrCat(j.ns, "/", j.name) == job_filter) job = &j;
      }
    }
    if (job == nullptr) return rows;
  }
  auto jobs_of = [&](const std::string& node,
                     std::optional<int64_t> npu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<std::string> out;
    if (npu.has_value()) {
      if (const NpuUse* use = index_.Use(node, *npu)) out.push_back(use->job_id);
    } else {
      for (const std::string& id : index_.JobsOn(node)) out.push_back(id);
    }
    return out;
  };
  auto keep = [&](const FaultViewRow& r) {
    if (job == nullptr) return true;
    return std::find(r.jobs.begin(), r.jobs.end(), job->job_id) != r.jobs.end();
  };
  for (const auto& [node, ns] : nodes_) {
    if (!node_filter.empty() && node != node_filter) continue;
    if (ns.device_out.has_value()) {
      for (const NpuFault& f : ns.device_out->record.faults) {
        FaultViewRow r;
        r.node = node;
        r.npu = f.npu_name;
        r.code = f.code == kPseudoCodeManuallySeparate ? "" : f.code;
        r.level = f.level;
        r.source = f.fault_type == model::kFaultTypePublicFault            ? "public"
                   : f.fault_type == model::kFaultTypeCardNetworkUnhealthy ? "network"
                   : f.code.empty() || f.code == kPseudoCodeManuallySeparate ? "manual"
                                                                               : "device";
        r.since_ms = f.received_ms;
        r.jobs = jobs_of(node, PhysicalIdOf(f.npu_name));
        if (keep(r)) rows.push_back(std::move(r));
      }
    }
    if (ns.switch_out.has_value()) {
      const auto& map = ns.switch_out->info.fault_time_and_level_map;
      for (const model::SwitchFaultEvent& e : ns.switch_out->events) {
        FaultViewRow r;
        r.node = node;
        r.npu = "-";
        r.code = e.assembled_fault_code;
        const std::string key = absl::StrCat(e.assembled_fault_code, "_", e.switch_chip_id, "_",
                                             e.switch_port_id);
        r.level = ns.switch_out->info.fault_level;
        if (map.has_value()) {
          if (auto it = map->find(key); it != map->end()) r.level = it->second.fault_level;
        }
        r.source = "switch";
        if (auto t = ns.switch_out->received_ms.find(key); t != ns.switch_out->received_ms.end()) {
          r.since_ms = t->second;
        }
        r.jobs = jobs_of(node, std::nullopt);
        if (keep(r)) rows.push_back(std::move(r));
      }
    }
    if (ns.node_out.has_value()) {
      for (const model::FaultDev& d : ns.node_out->info.fault_dev_list) {
        for (const std::string& code : d.fault_code) {
          FaultViewRow r;
          r.node = node;
          r.npu = absl::StrCat(d.device_type, "-", d.device_id);
          r.code = code;
          r.level = d.fault_level;
          r.source = "node";
          r.since_ms = ns.node_out->update_time_ms;
          r.jobs = jobs_of(node, std::nullopt);
          if (keep(r)) rows.push_back(std::move(r));
        }
      }
    }
  }
  return rows;
}

FaultMsgSignal FaultCentre::ClusterSignal() const {
  absl::MutexLock lock(&mu_);
  std::vector<ClusterNodeFaults> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, ns] : nodes_) {
    ClusterNodeFaults n;
    n.node_name = name;
    n.node_ip = ns.ip;
    n.node_sn = ns.sn;
    if (ns.device_out.has_value()) n.device = &ns.device_out->record;
    if (ns.switch_out.has_value()) n.switch_record = &*ns.switch_out;
    if (ns.node_out.has_value()) n.node_record = &*ns.node_out;
    n.node_ready = NodeReady(&ns);
    nodes.push_back(n);
  }
  return BuildClusterFaultSignal(nodes);
}

std::optional<JobFaultRanks> FaultCentre::JobFaults(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.last;
}

bool FaultCentre::JobExists(const std::string& job_id) const {
  {
    absl::MutexLock lock(&mu_);
    if (index_.Job(job_id) != nullptr) return true;
  }
  return registry_ != nullptr && registry_->FindJob(job_id).has_value();
}

bool FaultCentre::JobKnown(const std::string& job_id, const std::string& role) const {
  if (JobExists(job_id)) return true;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, job] : index_.jobs) {
      if (job.multi_instance_job_id == job_id && job.app_type == role) return true;
    }
  }
  if (registry_ == nullptr) return false;
  for (const JobRecord& r : registry_->Jobs()) {
    if (r.multi_instance_job_id == job_id && r.app_type == role) return true;
  }
  return false;
}

std::string FaultCentre::ShardContent(const std::string& cm_name) const {
  absl::MutexLock lock(&mu_);
  if (cm_name == kClusterInfoNodeName) return node_shard_.Render(0);
  auto index_of = [&](std::string_view prefix) -> std::optional<size_t> {
    if (!absl::StartsWith(cm_name, Sv(prefix))) return std::nullopt;
    return std::stoul(cm_name.substr(prefix.size()));
  };
  if (auto i = index_of(kClusterInfoDevicePrefix)) return device_shards_.Render(*i);
  if (auto i = index_of(kClusterInfoSwitchPrefix)) return switch_shards_.Render(*i);
  return "";
}

std::string FaultCentre::ShardOfNode(const std::string& node) const {
  absl::MutexLock lock(&mu_);
  const long i = device_shards_.ShardOf(model::DeviceInfoConfigMapName(node));
  return i < 0 ? "" : device_shards_.Name(static_cast<size_t>(i));
}

size_t FaultCentre::DeviceShardCount() const {
  absl::MutexLock lock(&mu_);
  return device_shards_.Count();
}

size_t FaultCentre::DeviceNodeCount() const {
  absl::MutexLock lock(&mu_);
  return device_records_;
}

}  // namespace clusterd::cluster
