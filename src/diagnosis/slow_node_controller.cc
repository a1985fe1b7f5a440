#include "diagnosis/slow_node_controller.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "diagnosis/file_profiling_data_source.h"
#include "diagnosis/slow_node_context.h"
#include "model/pod_group_info.h"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kSlowNodeControllerLog = kSlowNodeLogComponent;
constexpr std::string_view kCmKeyPrefix = "cm/";
constexpr std::string_view kJobKeyPrefix = kSlowNodeJobKeyPrefix;

std::string JobKey(const std::string& ns, const std::string& name) {
  return SlowNodeJobKey(ns, name);
}

// §6.2: job ids outside [A-Za-z0-9-]+ are ignored (they also name a directory).
bool ValidJobId(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
  });
}

}  // namespace

SlowNodeJobLookup PodGroupJobLookup(store::ObjectStore& store) {
  return [&store](const std::string& ns, const std::string& name) -> std::optional<SlowNodeJob> {
    store::ListOptions options;
    options.ns = ns;
    auto list = store.List(store::kPodGroups, options);
    if (!list.ok()) return std::nullopt;
    for (const store::Object& pg : list->items) {
      auto info = model::PodGroupInfoFromObject(pg);
      if (!info.ok()) continue;
      const bool owned = info->controller && info->controller->name == name;
      if (!owned && info->name != name) continue;
      SlowNodeJob job;
      job.ns = ns;
      job.name = name;
      job.job_id = info->controller ? info->controller->uid : info->uid;
      std::string phase;
      if (pg.contains("status") && pg["status"].is_object() && pg["status"].contains("phase") &&
          pg["status"]["phase"].is_string()) {
        phase = pg["status"]["phase"].get<std::string>();
      }
      job.status = absl::AsciiStrToLower(phase);
      return job;
    }
    return std::nullopt;
  };
}

SlowNodeController::SlowNodeController(store::ObjectStore& store, Clock& clock,
                                       PublicFaultSink& sink, SlowNodeControllerOptions options,
                                       SlowNodeJobLookup lookup, ProfilingSwitchWriter* switcher)
    : store_(store),
      clock_(clock),
      sink_(sink),
      options_(std::move(options)),
      lookup_(lookup ? std::move(lookup) : PodGroupJobLookup(store)),
      own_source_(options_.source ? nullptr
                                  : std::make_unique<FileProfilingDataSource>(
                                        options_.profiling_root, options_.max_file_bytes)),
      source_(options_.source ? options_.source : own_source_.get()),
      own_switcher_(switcher ? nullptr : std::make_unique<StoreProfilingSwitchWriter>(store)),
      switcher_(switcher ? switcher : own_switcher_.get()),
      controller_({.name = "diagnosis-slownode", .thread_name = "slow-node", .background = true},
                  clock, [this](const std::string& key, int) { return Reconcile(key); }) {}

SlowNodeController::~SlowNodeController() { Stop(); }

absl::Status SlowNodeController::Start() {
  auto selector = store::LabelSelector::Parse(absl::StrCat(Sv(kSlowNodeLabel), "=true"));
  if (!selector.ok()) return selector.status();
  store::InformerFactory* informers = options_.informers;
  if (informers == nullptr) {
    own_informers_ = std::make_unique<store::InformerFactory>(store_);
    informers = own_informers_.get();
  }
  store::SharedInformer& cms = informers->For(store::kConfigMaps);
  CLUSTERD_RETURN_IF_ERROR(cms.Start());
  registration_ =
      cms.AddHandler({.filter = {.selector = *selector},
                      .on_event =
                          [this](const store::WatchEvent& e) {
                            const std::string name = store::NameOf(e.object());
                            if (!absl::StartsWith(name, Sv(kSlowNodeConfigMapPrefix))) return;
                            controller_.Enqueue(absl::StrCat(
                                Sv(kCmKeyPrefix), store::NamespaceOf(e.object()), "/", name));
                          },
                      .on_replay = nullptr});
  controller_.Start();
  return absl::OkStatus();
}

void SlowNodeController::Stop() {
  registration_.reset();
  if (own_informers_ != nullptr) own_informers_->Stop();
  controller_.Stop();
}

absl::Status SlowNodeController::Resync() {
  auto selector = store::LabelSelector::Parse(absl::StrCat(Sv(kSlowNodeLabel), "=true"));
  if (!selector.ok()) return selector.status();
  store::ListOptions options;
  options.selector = *selector;
  auto list = store_.List(store::kConfigMaps, options);
  if (!list.ok()) return list.status();
  std::set<std::string> present;
  for (const store::Object& cm : list->items) {
    const std::string name = store::NameOf(cm);
    if (!absl::StartsWith(name, Sv(kSlowNodeConfigMapPrefix))) continue;
    const std::string cm_key = absl::StrCat(store::NamespaceOf(cm), "/", name);
    present.insert(cm_key);
    controller_.Enqueue(absl::StrCat(Sv(kCmKeyPrefix), cm_key));
  }
  // ConfigMaps deleted while nobody watched.
  absl::MutexLock lock(&mu_);
  for (const auto& [cm_key, job] : job_of_cm_) {
    if (!present.count(cm_key)) controller_.Enqueue(absl::StrCat(Sv(kCmKeyPrefix), cm_key));
  }
  return absl::OkStatus();
}

void SlowNodeController::ObserveJob(const SlowNodeJob& job) {
  if (!ValidJobId(job.job_id)) {
    SlowNodeBadInput("job-id").Increment();
    LogWarn(kSlowNodeControllerLog, "job summary with an invalid job id ignored",
            {{"job", JobKey(job.ns, job.name)}, {"jobId", job.job_id}});
    return;
  }
  const std::string key = JobKey(job.ns, job.name);
  {
    absl::MutexLock lock(&mu_);
    observed_jobs_[key] = job;
  }
  controller_.Enqueue(absl::StrCat(Sv(kJobKeyPrefix), key));
}

void SlowNodeController::NodeRestarted(const std::string& node_ip) {
  absl::MutexLock lock(&mu_);
  for (auto& [key, ctx] : contexts_) {
    if (!ctx->running || !ctx->nodes.count(node_ip)) continue;
    StopDetection(*ctx, false, absl::StrCat("node ", node_ip, " restarted"));
    controller_.Enqueue(absl::StrCat(Sv(kJobKeyPrefix), key));
  }
}

runtime::Result SlowNodeController::Reconcile(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (absl::StartsWith(key, Sv(kCmKeyPrefix))) {
    const std::string rest = key.substr(kCmKeyPrefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) return runtime::Result::Done();
    return ReconcileConfigMap(rest.substr(0, slash), rest.substr(slash + 1));
  }
  if (absl::StartsWith(key, Sv(kJobKeyPrefix))) {
    if (std::optional<absl::Duration> wake = ReconcileJob(key.substr(kJobKeyPrefix.size()))) {
      return runtime::Result::RequeueAfter(*wake);
    }
  }
  return runtime::Result::Done();
}

runtime::Result SlowNodeController::ReconcileConfigMap(const std::string& ns,
                                                       const std::string& name) {
  const std::string cm_key = absl::StrCat(ns, "/", name);
  auto drop_context = [&](const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = job_of_cm_.find(cm_key);
    if (it == job_of_cm_.end()) return;
    const std::string job_key = it->second;
    job_of_cm_.erase(it);
    auto cit = contexts_.find(job_key);
    if (cit != contexts_.end()) {
      if (cit->second->running) StopDetection(*cit->second, false, why);
      contexts_.erase(cit);
    }
    PublishView(job_key, nullptr);
  };

  auto cm = store_.Get({std::string(store::kConfigMaps), ns, name});
  if (!cm.ok()) {
    if (cm.status().code() != absl::StatusCode::kNotFound) {
      LogWarn(kSlowNodeControllerLog, "cannot read slow-node ConfigMap",
              {{"configmap", cm_key}, {"error", cm.status()}});
      return runtime::Result::Retry(cm.status());
    }
    invalid_cms_.erase(cm_key);
    PublishView(cm_key, nullptr);
    drop_context("ConfigMap deleted");
    LogInfo(kSlowNodeControllerLog, "slow-node ConfigMap deleted, detection stopped",
            {{"configmap", cm_key}});
    return runtime::Result::Done();
  }
  std::string text;
  if ((*cm).contains("data") && (*cm)["data"].is_object() &&
      (*cm)["data"].contains(std::string(kFeatConfKey)) &&
      (*cm)["data"][std::string(kFeatConfKey)].is_string()) {
    text = (*cm)["data"][std::string(kFeatConfKey)].get<std::string>();
  }
  auto conf = text.empty() ? absl::StatusOr<FeatConf>(absl::InvalidArgumentError(absl::StrCat(
                                 "configmap ", cm_key, ": no ", Sv(kFeatConfKey), " key")))
                           : ParseAndValidateFeatConf(
                                 text, absl::StrCat("configmap ", cm_key, " ", Sv(kFeatConfKey)));
  if (!conf.ok()) {
    const std::string reason(conf.status().message());
    SlowNodeBadInput("featconf").Increment();
    LogWarn(kSlowNodeControllerLog, "invalid slow-node FeatConf, detection not started",
            {{"configmap", cm_key}, {"reason", reason}});
    invalid_cms_[cm_key] = reason;
    drop_context("FeatConf became invalid");
    PublishView(cm_key, nullptr);
    return runtime::Result::Done();
  }
  if (invalid_cms_.erase(cm_key)) PublishView(cm_key, nullptr);
  FeatConf c = *conf;
  if (c.job_namespace.empty()) c.job_namespace = ns;
  const std::string job_key = JobKey(c.job_namespace, c.job_name);

  auto existing = job_of_cm_.find(cm_key);
  if (existing != job_of_cm_.end() && existing->second != job_key) drop_context("job changed");
  auto cit = contexts_.find(job_key);
  if (cit != contexts_.end() && cit->second->cm_key != cm_key) {
    LogWarn(kSlowNodeControllerLog, "a slow-node ConfigMap for this job already exists; ignored",
            {{"configmap", cm_key}, {"job", job_key}, {"owner", cit->second->cm_key}});
    return runtime::Result::Done();
  }
  if (cit != contexts_.end()) {
    Context& ctx = *cit->second;
    if (!ctx.conf.SameThresholds(c)) {
      // Thresholds apply at once (the original waits for the CM to be re-created).
      if (ctx.running) StopDetection(ctx, false, "thresholds changed");
      LogInfo(kSlowNodeControllerLog, "slow-node thresholds changed, detection restarts",
              {{"job", job_key}});
    }
    ctx.conf = c;
  } else {
    auto ctx = std::make_unique<Context>();
    ctx->cm_key = cm_key;
    ctx->key = job_key;
    ctx->conf = c;
    contexts_[job_key] = std::move(ctx);
    job_of_cm_[cm_key] = job_key;
    LogInfo(kSlowNodeControllerLog, "slow-node detection configured",
            {{"configmap", cm_key}, {"job", job_key}, {"slowNode", c.slow_node}});
  }
  // The job's own timer (its next round, its readiness poll) belongs to the job's key: its
  // reconcile applies the new configuration now and asks for its wake-up itself.
  controller_.Enqueue(absl::StrCat(Sv(kJobKeyPrefix), job_key));
  return runtime::Result::Done();
}

std::optional<SlowNodeJob> SlowNodeController::CurrentJob(const Context& ctx) {
  auto it = observed_jobs_.find(ctx.key);
  if (it != observed_jobs_.end()) return it->second;
  std::optional<SlowNodeJob> job = lookup_(ctx.conf.job_namespace, ctx.conf.job_name);
  if (job && !ValidJobId(job->job_id)) return std::nullopt;
  return job;
}

void SlowNodeController::PublishView(const std::string& key, const Context* ctx) {
  std::optional<SlowNodeJobView> view;
  if (ctx != nullptr) {
    SlowNodeJobView v;
    v.config_map = ctx->cm_key;
    v.ns = ctx->conf.job_namespace;
    v.job_name = ctx->conf.job_name;
    v.job_id = ctx->job.job_id;
    v.state = ctx->state;
    v.reason = ctx->reason;
    v.step = ctx->step;
    v.heavy_profiling = ctx->degradation.heavy_profiling;
    v.degraded = ctx->degradation.degraded;
    v.rounds = ctx->rounds;
    for (const auto& [rank, rv] : ctx->rank_views) v.ranks.push_back(rv);
    v.last_result = ctx->last_result;
    view = std::move(v);
  } else if (auto it = invalid_cms_.find(key); it != invalid_cms_.end()) {
    SlowNodeJobView v;
    v.config_map = key;
    v.state = "invalid";
    v.reason = it->second;
    view = std::move(v);
  }
  absl::MutexLock lock(&view_mu_);
  if (view) {
    views_[key] = std::move(*view);
  } else {
    views_.erase(key);
  }
}

std::vector<SlowNodeJobView> SlowNodeController::Views() const {
  absl::MutexLock lock(&view_mu_);
  std::vector<SlowNodeJobView> out;
  for (const auto& [key, v] : views_) out.push_back(v);
  return out;
}

std::optional<SlowNodeJobView> SlowNodeController::View(const std::string& ns,
                                                        const std::string& job_name) const {
  absl::MutexLock lock(&view_mu_);
  auto it = views_.find(JobKey(ns, job_name));
  if (it == views_.end()) return std::nullopt;
  return it->second;
}

nlohmann::ordered_json SlowNodeJobView::ToJson() const {
  Json ranks_json = Json::array();
  for (const SlowNodeRankView& r : ranks) {
    ranks_json.push_back(Json{{"rank", r.rank},
                              {"node", r.node},
                              {"baselineMean", r.mean},
                              {"baselineSigma", r.sigma},
                              {"baselineSamples", r.count},
                              {"lastStep", r.last_step},
                              {"result", r.result},
                              {"degradationLevel", DegradationLevel(r.slow ? r.degradation : 0)}});
  }
  Json j = Json{{"configMap", config_map},
                {"namespace", ns},
                {"jobName", job_name},
                {"jobId", job_id},
                {"state", state},
                {"reason", reason},
                {"step", step},
                {"heavyProfiling", heavy_profiling},
                {"degraded", degraded},
                {"rounds", rounds},
                {"ranks", ranks_json}};
  j["lastResult"] = last_result
                        ? last_result->ToJson(job_id, "cluster")["slownode_" + job_id]["cluster"]
                        : Json(nullptr);
  return j;
}

}  // namespace clusterd::diagnosis
