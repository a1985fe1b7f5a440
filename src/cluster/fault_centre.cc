// The fault centre's intake (store watches -> keys), its dispatch (one reconcile per key), its
// start and stop, and its configuration.
#include "cluster/fault_centre.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "model/config_map_names.h"

namespace clusterd::cluster {
namespace {

constexpr char kFaultCentreLog[] = "fault-centre";
// The longest a changed job waits for the job index after a slow refresh (see kJobIndex).
constexpr absl::Duration kMaxIndexRefreshGap = absl::Seconds(2);

}  // namespace

FaultCentre::FaultCentre(store::ObjectStore& store, Clock& clock, const JobRegistry* registry,
                         Options options)
    : store_(store),
      clock_(clock),
      registry_(registry),
      options_(std::move(options)),
      config_(options_.config),
      own_informers_(options_.watch_store && options_.informers == nullptr
                         ? std::make_unique<store::InformerFactory>(store)
                         : nullptr),
      informers_(options_.informers != nullptr ? options_.informers : own_informers_.get()),
      publisher_(store, clock,
                 {.shard_limit_bytes = options_.shard_limit_bytes,
                  .max_writes_per_second = options_.max_writes_per_second,
                  .write_burst = options_.write_burst}),
      public_faults_(store, clock, {.statistic_min_interval = options_.statistic_min_interval}),
      manual_(store, clock),
      snapshots_(MetricsRegistry::Default().GetCounter(
          "clusterd_fault_centre_job_snapshots_total",
          "Job fault snapshots handed to the sinks (recovery controller, Fault service).")),
      process_seconds_(MetricsRegistry::Default().GetHistogram(
          "clusterd_fault_centre_process_seconds", "Time to handle one fault-centre key.",
          MetricsRegistry::LatencyBounds())),
      device_nodes_gauge_(MetricsRegistry::Default().GetGauge("clusterd_fault_centre_device_nodes",
                                                              "Nodes with a device-info record.")),
      refused_nodes_gauge_(MetricsRegistry::Default().GetGauge(
          "clusterd_fault_centre_refused_nodes",
          "Nodes whose device-info the fault centre refused for its record limit (--max-nodes).")),
      controller_({.name = "fault_centre", .thread_name = "fault-centre", .background = true},
                  clock, [this](const FaultCentreKey& key, int) { return Reconcile(key); }) {}

FaultCentre::~FaultCentre() { Stop(); }

void FaultCentre::AddJobFaultSink(JobFaultSink* sink) { sinks_.push_back(sink); }

int64_t FaultCentre::NowMs() const { return absl::ToUnixMillis(clock_.Now()); }

void FaultCentre::ScheduleAt(const FaultCentreKey& key, int64_t due_ms) {
  controller_.EnqueueAfter(key, absl::Milliseconds(due_ms - NowMs()));
}

runtime::Result FaultCentre::WakeAt(std::optional<int64_t> due_ms) const {
  if (!due_ms.has_value()) return runtime::Result::Done();
  return runtime::Result::RequeueAfter(absl::Milliseconds(*due_ms - NowMs()));
}

// ---- configuration ----

void FaultCentre::LoadConfig() {
  FaultConfigRead read;
  if (config_ != nullptr) {
    read = config_->Read();
  } else {
    read.public_faults = absl::NotFoundError("no fault configuration source");
  }
  absl::MutexLock lock(&mu_);
  ApplyConfig(std::move(read));
}

void FaultCentre::ApplyConfig(FaultConfigRead read) {
  const std::string location = config_ != nullptr ? config_->Location() : "";
  if (!read.relation.ok()) {
    LogError(kFaultCentreLog, "relation fault configuration not reloaded; the previous one is kept",
             {{"error", read.relation.status()}});
  } else if (*read.relation != relation_config_) {
    relation_config_ = *std::move(read.relation);
    LogInfo(kFaultCentreLog, "relation fault configuration applied",
            {{"rules", relation_config_.rules.size()},
             {"durations", relation_config_.timeout_s.size()},
             {"dir", location}});
  }
  // Without the user's configuration (or when it is wrong) the shipped defaults apply, and
  // /readyz says why (one warning per change of the problem).
  if (read.note != configuration_note_) {
    if (!read.note.empty()) {
      LogWarn(kFaultCentreLog, "public fault user configuration", {{"problem", read.note}});
    }
    configuration_note_ = read.note;
  }
  if (read.public_faults.ok()) {
    public_faults_.SetConfig(*std::move(read.public_faults), std::move(read.public_text),
                             std::move(read.public_source));
  } else if (!public_faults_.Configured()) {
    LogError(kFaultCentreLog, "no public fault configuration; public faults are refused",
             {{"error", read.public_faults.status()}});
  } else {
    LogError(kFaultCentreLog, "public fault configuration not reloaded; the previous one is kept",
             {{"error", read.public_faults.status()}});
  }
}

FaultConfigurationView FaultCentre::Configuration() const {
  const ManualSeparation::View manual = manual_.Configuration();
  absl::MutexLock lock(&mu_);
  FaultConfigurationView v;
  v.manual_separation = manual.policy;
  v.manual_separation_source = manual.applied_ms > 0
                                   ? absl::StrCat(Sv(kManualNamespace), "/", Sv(kManualConfigName))
                                   : absl::StrCat("default (no valid ", Sv(kManualNamespace), "/",
                                                  Sv(kManualConfigName), " read)");
  v.manual_separation_applied_ms = manual.applied_ms;
  v.public_fault_source = public_faults_.ConfigSource();
  v.public_fault_resources = public_faults_.ConfigResources();
  v.public_fault_codes = public_faults_.ConfigCodes();
  v.relation_rules = relation_config_.rules.size();
  v.fault_durations = relation_config_.timeout_s.size();
  v.data_dir = config_ != nullptr ? config_->Location() : "";
  if (!configuration_note_.empty()) v.notes.push_back(configuration_note_);
  return v;
}

std::vector<std::string> FaultCentre::ConfigurationNotes() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> notes;
  if (!configuration_note_.empty()) notes.push_back(configuration_note_);
  if (!refused_device_nodes_.empty()) {
    notes.push_back(absl::StrCat(refused_device_nodes_.size(),
                                 " nodes' device-info refused: the fault centre holds at most ",
                                 options_.max_device_records, " nodes (--max-nodes), e.g. ",
                                 *refused_device_nodes_.begin()));
  }
  return notes;
}

// ---- start / stop ----

absl::Status FaultCentre::Prepare() {
  if (prepared_) return absl::OkStatus();
  if (config_ != nullptr) CLUSTERD_RETURN_IF_ERROR(config_->CheckRequired());
  LoadConfig();
  // Durable state first (§1.8, §7.4: before the pipeline starts).
  public_faults_.LoadStatistic();
  manual_.Load();
  RunManualConfig();
  CLUSTERD_RETURN_IF_ERROR(options_.watch_store ? RegisterOnInformers() : ListOnce());
  // What the initial view needs of no job: every node's device-info, decoded.
  const absl::Time begin = clock_.Now();
  PrepareDeviceIntakes();
  prepare_time_ = clock_.Now() - begin;
  prepared_ = true;
  return absl::OkStatus();
}

absl::Status FaultCentre::Start() {
  CLUSTERD_RETURN_IF_ERROR(Prepare());
  // The initial view, on this thread: the job index from the registry (built once), then
  // every key.
  const absl::Time begin = clock_.Now();
  {
    std::vector<std::string> gone;
    RefreshIndex(&gone);
  }
  publisher_.PublishNodeShard();  // cluster-info-node-cm is written even when empty
  {
    absl::MutexLock lock(&mu_);
    building_initial_view_ = true;
  }
  size_t handled = controller_.DrainOnCallingThread();
  RunDeferredNodePipelines();  // every node's pipelines, side by side; then the jobs
  handled += controller_.DrainOnCallingThread();
  {
    absl::MutexLock lock(&mu_);
    prepared_intakes_.clear();  // those of nodes changed again meanwhile
    LogInfo(kFaultCentreLog, "initial view built",
            {{"device_nodes", device_records_},
             {"k8s_nodes", k8s_nodes_},
             {"public_faults", public_faults_.Size()},
             {"keys", handled},
             {"ms", absl::ToInt64Milliseconds(clock_.Now() - begin + prepare_time_)}});
  }
  // A change of clusterd-config-cm between its first read and the registration.
  if (options_.watch_store) controller_.Enqueue(FaultCentreKey::Of(Kind::kManualConfigChanged));

  // The periodic keys' first delays; from then on each asks for its next pass (RequeueAfter).
  controller_.EnqueueAfter(FaultCentreKey::Of(Kind::kJobIndex), options_.job_index_period);
  controller_.EnqueueAfter(FaultCentreKey::Of(Kind::kManualSync), options_.manual_sync_period);
  controller_.EnqueueAfter(FaultCentreKey::Of(Kind::kManualConfig), options_.manual_config_period);
  controller_.EnqueueAfter(FaultCentreKey::Of(Kind::kConfigPoll), options_.config_poll_period);
  return absl::OkStatus();
}

absl::Status FaultCentre::RegisterOnInformers() {
  const std::string cim = absl::StrCat(Sv(model::kConsumerCimLabel), "=true");
  const std::string pf = absl::StrCat(Sv(kPublicFaultLabel), "=true");
  // The filters of the watches the centre needs: the device-info and node-info ConfigMaps that
  // are for it (the consumer label), public-fault ConfigMaps anywhere, clusterd-config-cm's
  // namespace (an operator's policy change takes effect when it is written), every Node.
  const std::pair<std::string_view, store::InformerFilter> feeds[] = {
      {store::kNodes, {}},
      {store::kConfigMaps,
       {.ns = std::string(model::kDeviceInfoNamespace),
        .selector = *store::LabelSelector::Parse(cim)}},
      {store::kConfigMaps,
       {.ns = std::string(model::kNodeInfoNamespace),
        .selector = *store::LabelSelector::Parse(cim)}},
      {store::kConfigMaps, {.selector = *store::LabelSelector::Parse(pf)}},
      {store::kConfigMaps, {.ns = std::string(kManualNamespace)}},
  };
  for (const auto& [resource, filter] : feeds) {
    store::SharedInformer& informer = informers_->For(resource);
    if (absl::Status s = informer.Start(); !s.ok()) {
      return Annotate(s, absl::StrCat("fault centre: watching ", Sv(resource)));
    }
    // Registered on a started informer: the objects cached now come first, as ADDED.
    std::string r(resource);
    registrations_.push_back(
        informer.AddHandler({.filter = filter,
                             .on_event = [this, r](const store::WatchEvent& e) { Observe(r, e); },
                             .on_replay = nullptr}));
  }
  return absl::OkStatus();
}

absl::Status FaultCentre::ListOnce() {
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
  CLUSTERD_ASSIGN_OR_RETURN(
      store::ObjectList devices,
      list(store::kConfigMaps, std::string(model::kDeviceInfoNamespace), cim));
  CLUSTERD_ASSIGN_OR_RETURN(store::ObjectList node_infos,
                            list(store::kConfigMaps, std::string(model::kNodeInfoNamespace), cim));
  CLUSTERD_ASSIGN_OR_RETURN(store::ObjectList public_cms, list(store::kConfigMaps, "", pf));
  for (store::ObjectList* l : {&nodes, &devices, &node_infos, &public_cms}) {
    const std::string_view resource = l == &nodes ? store::kNodes : store::kConfigMaps;
    for (const store::Object& o : l->items) {
      Observe(resource, store::WatchEvent{store::WatchEventType::kAdded, o});
    }
  }
  return absl::OkStatus();
}

void FaultCentre::Stop() {
  registrations_.clear();
  controller_.Stop();
  publisher_.Stop();
  if (own_informers_ != nullptr) own_informers_->Stop();
}

void FaultCentre::JobsChanged() { controller_.Enqueue(FaultCentreKey::Of(Kind::kJobIndex)); }

// ---- intake ----

void FaultCentre::Observe(std::string_view resource, const store::WatchEvent& e) {
  const std::string name = store::NameOf(e.object());
  if (name.empty()) return;
  std::optional<FaultCentreKey> key;
  if (resource == store::kNodes) {
    key = FaultCentreKey::K8sNode(name);
  } else if (resource == store::kConfigMaps) {
    const std::string ns = store::NamespaceOf(e.object());
    if (ns == kManualNamespace) {
      if (name == kManualConfigName) {
        controller_.Enqueue(FaultCentreKey::Of(Kind::kManualConfigChanged));
      }
      return;  // the rest of cluster-system is clusterd's own output
    }
    std::string node;
    auto labels = e.object().find("metadata");
    std::string cim, pf;
    if (labels != e.object().end() && labels->is_object()) {
      if (auto l = labels->find("labels"); l != labels->end() && l->is_object()) {
        cim = StringOr(*l, std::string(model::kConsumerCimLabel), "");
        pf = StringOr(*l, std::string(kPublicFaultLabel), "");
      }
    }
    const bool deleted = e.type == store::WatchEventType::kDeleted;
    if (ns == model::kDeviceInfoNamespace && (cim == "true" || deleted) &&
        !(node = NodeOfConfigMap(name, model::kDeviceInfoPrefix)).empty()) {
      key = FaultCentreKey::Device(node);
    } else if (ns == model::kNodeInfoNamespace && (cim == "true" || deleted) &&
               !(node = NodeOfConfigMap(name, model::kNodeInfoPrefix)).empty()) {
      key = FaultCentreKey::NodeInfo(node);
    } else if (pf == "true" || deleted) {
      key = FaultCentreKey::PublicFaultCm(absl::StrCat(ns, "/", name));
    }
  }
  if (!key.has_value()) return;
  {
    absl::MutexLock lock(&pending_mu_);
    pending_[FaultCentreKeyCodec::Encode(*key)] =
        e.type == store::WatchEventType::kDeleted ? nullptr : e.shared_object();
  }
  controller_.Enqueue(*key);
}

FaultCentre::PendingObject FaultCentre::TakePending(const FaultCentreKey& key) {
  absl::MutexLock lock(&pending_mu_);
  auto it = pending_.find(FaultCentreKeyCodec::Encode(key));
  if (it == pending_.end()) return std::nullopt;
  PendingObject out = std::move(it->second);
  pending_.erase(it);
  return out;
}

// ---- dispatch ----

runtime::Result FaultCentre::Reconcile(const FaultCentreKey& key) {
  const absl::Time begin = clock_.Now();
  runtime::Result result = runtime::Result::Done();
  std::vector<JobFaultRanks> deliveries;
  std::vector<std::string> gone;
  std::vector<PodLabelPatch> patches;
  {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> jobs;
    switch (key.kind) {
      case Kind::kDeviceInfo:
        result = WakeAt(HandleDevice(key.name, &jobs));
        break;
      case Kind::kNodeInfo:
        HandleNodeInfo(key.name, &jobs);
        break;
      case Kind::kK8sNode:
        HandleK8sNode(key.name, &jobs);
        break;
      case Kind::kPublicFaultCm:
        HandlePublicFaultCm(key.name);
        break;
      case Kind::kJob:
        result = WakeAt(HandleJob(key.name, &deliveries, &patches));
        break;
      case Kind::kPublicFaultExpiry:
        result = WakeAt(ExpirePublicFaults());
        break;
      case Kind::kManualTriage:
        result = WakeAt(RunManualTriage());
        break;
      default:
        break;  // the work below, outside mu_
    }
    for (std::string& j : jobs) controller_.Enqueue(FaultCentreKey::Job(std::move(j)));
  }
  switch (key.kind) {
    case Kind::kJobIndex: {
      const absl::Time now = clock_.Now();
      const absl::Time allowed =
          last_index_refresh_ + std::max(options_.job_index_min_interval, index_refresh_gap_);
      if (now < allowed) {  // the changes of a burst wait for one rebuild
        result = runtime::Result::RequeueAfter(allowed - now);
        break;
      }
      last_index_refresh_ = now;
      RefreshIndex(&gone);
      // A refresh reads the jobs changed since the last one; a start, or a reader so far
      // behind that the registry forgot jobs gone since, reads every job. While 20,000 jobs
      // registered (each Register changes its PodGroup), refreshing every job at the minimum
      // interval took half of clusterd's CPU. The next refresh waits ten times as long as
      // this one took (at most kMaxIndexRefreshGap): refreshes take about a tenth of a core at
      // most, and a changed job waits at most that long to be indexed.
      index_refresh_gap_ = std::min((clock_.Now() - now) * 10, kMaxIndexRefreshGap);
      result = runtime::Result::RequeueAfter(options_.job_index_period);
      break;
    }
    case Kind::kManualSync:
      for (const std::string& node : manual_.Sync()) {
        controller_.Enqueue(FaultCentreKey::Device(node));
      }
      result = runtime::Result::RequeueAfter(options_.manual_sync_period);
      break;
    case Kind::kManualConfig:
      RunManualConfig();
      result = runtime::Result::RequeueAfter(options_.manual_config_period);
      break;
    case Kind::kManualConfigChanged:
      RunManualConfig();
      break;
    case Kind::kStatistic:
      if (std::optional<absl::Duration> again = public_faults_.WriteStatistic()) {
        result = runtime::Result::RequeueAfter(*again);
      }
      break;
    case Kind::kConfigPoll:
      if (config_ != nullptr && config_->Changed()) LoadConfig();
      result = runtime::Result::RequeueAfter(options_.config_poll_period);
      break;
    default:
      break;
  }
  for (const JobFaultRanks& d : deliveries) {
    snapshots_.Increment();
    for (JobFaultSink* sink : sinks_) sink->OnJobFaults(d);
  }
  for (const std::string& id : gone) {
    for (JobFaultSink* sink : sinks_) sink->OnJobGone(id);
  }
  if (!patches.empty()) PatchPodLabels(patches);
  process_seconds_.Observe(absl::ToDoubleSeconds(clock_.Now() - begin));
  return result;
}

}  // namespace clusterd::cluster
