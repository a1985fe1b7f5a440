#include "diagnosis/slow_node_controller.h"

#include <algorithm>
#include <deque>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/metrics.h"
#include "diagnosis/file_profiling_data_source.h"
#include "model/pod_group_info.h"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kComponent = "diagnosis";
constexpr std::string_view kCmKeyPrefix = "cm/";
constexpr std::string_view kJobKeyPrefix = "job/";
constexpr std::string_view kDataTracePrefix = "data-trace-";
constexpr std::string_view kProfilingSwitchKey = "profilingSwitch";
constexpr std::string_view kOn = "on";
constexpr std::string_view kOff = "off";

absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

Counter& BadInput(std::string_view kind) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_diagnosis_bad_input_total",
      "Slow-node inputs rejected or skipped (FeatConf, profiling files).",
      {{"kind", std::string(kind)}});
}

Counter& Rounds() {
  return MetricsRegistry::Default().GetCounter("clusterd_diagnosis_rounds_total",
                                               "Cluster-level slow-node detection rounds.");
}

Counter& FaultsReported(std::string_view code, std::string_view outcome) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_diagnosis_public_faults_total", "Slow-node public-fault reports.",
      {{"code", std::string(code)}, {"outcome", std::string(outcome)}});
}

Counter& SwitchFailures() {
  return MetricsRegistry::Default().GetCounter("clusterd_diagnosis_profiling_switch_failures_total",
                                               "Failed profiling switch writes.");
}

std::string JobKey(const std::string& ns, const std::string& name) { return ns + "/" + name; }

// §6.2: job ids outside [A-Za-z0-9-]+ are ignored (they also name a directory).
bool ValidJobId(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
  });
}

}  // namespace

std::string GoIntSlice(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
}

model::ProfilingSwitch HeavyProfiling() {
  const std::string on(kOn);
  return {on, on, on, on, on};
}
model::ProfilingSwitch LightProfiling() {
  const std::string on(kOn);
  return {std::string(kOff), on, on, on, on};
}
model::ProfilingSwitch NoProfiling() {
  const std::string off(kOff);
  return {off, off, off, off, off};
}

absl::Status StoreProfilingSwitchWriter::SetProfiling(const SlowNodeJob& job,
                                                      const model::ProfilingSwitch& value) {
  const std::string name = absl::StrCat(Sv(kDataTracePrefix), job.name);
  const store::ObjectKey key{std::string(store::kConfigMaps), job.ns, name};
  const std::string serialized = model::SerializeProfilingSwitch(value);
  auto existing = store_.Get(key);
  if (existing.ok()) {
    store::Object cm = *existing;
    cm["data"][std::string(kProfilingSwitchKey)] = serialized;
    auto updated = store_.Update(store::kConfigMaps, cm);
    return updated.status();
  }
  if (existing.status().code() != absl::StatusCode::kNotFound) return existing.status();
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", name}, {"namespace", job.ns}, {"labels", {{"reset", "true"}}}}}};
  if (!job.job_id.empty()) {
    cm["metadata"]["ownerReferences"] = Json::array({Json{{"apiVersion", "mindxdl.gitee.com/v1"},
                                                          {"kind", "AscendJob"},
                                                          {"name", job.name},
                                                          {"uid", job.job_id},
                                                          {"controller", true}}});
  }
  cm["data"] = {{std::string(kProfilingSwitchKey), serialized}};
  auto created = store_.Create(store::kConfigMaps, cm);
  return created.status();
}

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

struct SlowNodeController::Context {
  std::string cm_key;
  std::string key;  // ns/job
  FeatConf conf;
  SlowNodeJob job;
  bool running = false;
  int step = 0;
  std::string state = "waiting-for-job";
  std::string reason;
  absl::Time started_at = absl::InfinitePast();
  absl::Time first_ready_at = absl::InfinitePast();
  absl::Time next_round = absl::InfinitePast();
  // Layout: node -> ranks (ascending).
  std::map<std::string, std::vector<int64_t>> nodes;
  bool layout_from_directories = false;
  std::set<std::string> ready_nodes;
  ParallelGroups global_groups;
  std::map<std::string, RankSeriesState> node_state;
  std::map<int64_t, std::unique_ptr<RankProfileReader>> readers;
  std::map<int64_t, SlowNodeRankView> rank_views;
  std::optional<ClusterResult> last_result;
  DegradationState degradation;
  int64_t rounds = 0;
  struct PendingReport {
    PublicFaultReport report;
    int attempts = 0;
  };
  std::deque<PendingReport> reports;

  RankProfileReader& Reader(ProfilingDataSource& source, int64_t rank, size_t max_samples) {
    auto& r = readers[rank];
    if (!r) r = source.OpenRank(job.job_id, rank, max_samples);
    return *r;
  }
};

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
      controller_({.name = "diagnosis-slownode", .thread_name = "slow-node"}, clock,
                  [this](const std::string& key, int) { return Reconcile(key); }) {}

SlowNodeController::~SlowNodeController() { Stop(); }

absl::Status SlowNodeController::Start() {
  auto selector = store::LabelSelector::Parse(absl::StrCat(Sv(kSlowNodeLabel), "=true"));
  if (!selector.ok()) return selector.status();
  store::WatchOptions options;
  options.selector = *selector;
  auto watch = store_.Watch(store::kConfigMaps, options, [this](const store::WatchEvent& e) {
    const std::string name = store::NameOf(e.object);
    if (!absl::StartsWith(name, Sv(kSlowNodeConfigMapPrefix))) return;
    controller_.Enqueue(absl::StrCat(Sv(kCmKeyPrefix), store::NamespaceOf(e.object), "/", name));
  });
  if (!watch.ok()) return watch.status();
  watch_ = std::move(*watch);
  controller_.Start();
  return absl::OkStatus();
}

void SlowNodeController::Stop() {
  watch_.reset();
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
    BadInput("job-id").Increment();
    LogWarn(kComponent, "job summary with an invalid job id ignored",
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
      LogWarn(kComponent, "cannot read slow-node ConfigMap",
              {{"configmap", cm_key}, {"error", cm.status()}});
      return runtime::Result::Retry(cm.status());
    }
    invalid_cms_.erase(cm_key);
    PublishView(cm_key, nullptr);
    drop_context("ConfigMap deleted");
    LogInfo(kComponent, "slow-node ConfigMap deleted, detection stopped", {{"configmap", cm_key}});
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
    BadInput("featconf").Increment();
    LogWarn(kComponent, "invalid slow-node FeatConf, detection not started",
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
    LogWarn(kComponent, "a slow-node ConfigMap for this job already exists; ignored",
            {{"configmap", cm_key}, {"job", job_key}, {"owner", cit->second->cm_key}});
    return runtime::Result::Done();
  }
  if (cit != contexts_.end()) {
    Context& ctx = *cit->second;
    if (!ctx.conf.SameThresholds(c)) {
      // Thresholds apply at once (the original waits for the CM to be re-created).
      if (ctx.running) StopDetection(ctx, false, "thresholds changed");
      LogInfo(kComponent, "slow-node thresholds changed, detection restarts", {{"job", job_key}});
    }
    ctx.conf = c;
  } else {
    auto ctx = std::make_unique<Context>();
    ctx->cm_key = cm_key;
    ctx->key = job_key;
    ctx->conf = c;
    contexts_[job_key] = std::move(ctx);
    job_of_cm_[cm_key] = job_key;
    LogInfo(kComponent, "slow-node detection configured",
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

std::optional<absl::Duration> SlowNodeController::ReconcileJob(const std::string& job_key) {
  auto cit = contexts_.find(job_key);
  if (cit == contexts_.end()) return std::nullopt;
  Context& ctx = *cit->second;
  const absl::Time now = clock_.Now();

  std::optional<SlowNodeJob> job = CurrentJob(ctx);
  const bool job_running = job && job->status == kJobStatusRunning && !job->job_id.empty();
  const bool want = ctx.conf.Enabled() && job_running;
  if (ctx.running && !want) {
    const bool completed = job && job->status == kJobStatusComplete;
    StopDetection(ctx, completed,
                  !ctx.conf.Enabled() ? "slowNode disabled"
                                      : absl::StrCat("job is ", job ? job->status : "gone"));
  }
  if (ctx.running && want &&
      (job->job_id != ctx.job.job_id || job->servers != ctx.job.servers ||
       job->reschedule_count != ctx.job.reschedule_count)) {
    StopDetection(ctx, false, "job restarted or rescheduled");
  }
  if (!ctx.running) {
    ctx.state = !ctx.conf.Enabled() ? "disabled" : "waiting-for-job";
    if (job) ctx.job = *job;
  }
  if (!ctx.running && want) StartDetection(ctx, *job);

  if (ctx.running && now >= ctx.next_round) {
    if (ctx.step == 0) {
      // The first switch failed: retried every second (§6.2 step 2).
      if (SwitchProfiling(ctx, HeavyProfiling())) {
        ctx.step = 1;
        ctx.degradation.heavy_profiling = true;
        ctx.state = "profiling";
      }
      ctx.next_round = now + absl::Seconds(1);
    } else if (ctx.step == 1) {
      CheckInitialProfiling(ctx);
    } else {
      DetectionRound(ctx);
      ctx.next_round =
          now + std::max(absl::Seconds(ctx.conf.n_seconds_do_one_detection), absl::Seconds(1));
    }
  }
  FlushReports(ctx);

  absl::Duration wait = options_.readiness_poll;  // poll the job while not running
  if (ctx.running) wait = std::max(ctx.next_round - now, absl::ZeroDuration());
  if (!ctx.reports.empty()) wait = std::min(wait, options_.retry_delay);
  PublishView(job_key, &ctx);
  if (ctx.conf.Enabled() || !ctx.reports.empty()) return wait;
  return std::nullopt;
}

void SlowNodeController::ComputeLayout(Context& ctx) {
  // The servers of the FeatConf, else of the job, else rankIds (or the rank directories found)
  // grouped by cardOneNode.
  ctx.nodes.clear();
  ctx.layout_from_directories = false;
  const auto& servers = !ctx.conf.servers.empty() ? ctx.conf.servers : ctx.job.servers;
  for (const ServerRanks& s : servers) {
    const std::string node = !s.ip.empty() ? s.ip : s.sn;
    auto& ranks = ctx.nodes[node];
    ranks.insert(ranks.end(), s.rank_ids.begin(), s.rank_ids.end());
  }
  if (ctx.nodes.empty()) {
    std::vector<int64_t> ranks = ctx.conf.rank_ids;
    if (ranks.empty()) {
      ctx.layout_from_directories = true;
      ranks = source_->Ranks(ctx.job.job_id);
    }
    for (int64_t r : ranks) {
      ctx.nodes[absl::StrCat("node-", r / ctx.conf.card_one_node)].push_back(r);
    }
  }
  for (auto& [node, ranks] : ctx.nodes) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    for (int64_t r : ranks) {
      if (!ctx.rank_views.count(r)) ctx.rank_views[r] = {r, node, 0, 0, 0, 0, false, 0, "waiting"};
    }
  }
}

void SlowNodeController::StartDetection(Context& ctx, const SlowNodeJob& job) {
  const absl::Time now = clock_.Now();
  ctx.job = job;
  ctx.running = true;
  ctx.step = 0;
  ctx.reason.clear();
  ctx.started_at = now;
  ctx.first_ready_at = absl::InfinitePast();
  ctx.next_round = absl::InfinitePast();
  ctx.node_state.clear();
  ctx.readers.clear();
  ctx.rank_views.clear();
  ctx.ready_nodes.clear();
  ctx.global_groups = {};
  ctx.last_result.reset();
  ctx.rounds = 0;
  ctx.degradation = {};

  ComputeLayout(ctx);
  LogInfo(kComponent, "slow-node detection starts",
          {{"job", ctx.key},
           {"jobId", job.job_id},
           {"ranks", static_cast<int64_t>(ctx.rank_views.size())}});
  if (SwitchProfiling(ctx, HeavyProfiling())) {
    ctx.step = 1;
    ctx.degradation.heavy_profiling = true;
    ctx.state = "profiling";
  } else {
    ctx.state = "switching-profiling";
  }
}

void SlowNodeController::StopDetection(Context& ctx, bool job_completed,
                                       const std::string& reason) {
  if (!ctx.running) return;
  if (!job_completed) SwitchProfiling(ctx, NoProfiling());
  LogInfo(kComponent, "slow-node detection stops", {{"job", ctx.key}, {"reason", reason}});
  ctx.running = false;
  ctx.step = 0;
  ctx.reason = reason;
  ctx.state = "stopped";
  ctx.node_state.clear();
  ctx.readers.clear();
  ctx.degradation = {};
  ctx.next_round = absl::InfinitePast();
}

size_t SlowNodeController::MaxSamples(const Context& ctx) const {
  const int64_t need = 2 * (ctx.conf.normal_number + ctx.conf.n_consec_anomalies);
  return static_cast<size_t>(
      std::max<int64_t>(need, static_cast<int64_t>(options_.max_samples_per_series)));
}

void SlowNodeController::CheckInitialProfiling(Context& ctx) {
  const absl::Time now = clock_.Now();
  // Rank directories appear when the job's ranks start writing.
  if (ctx.layout_from_directories) ComputeLayout(ctx);
  for (const auto& [node, ranks] : ctx.nodes) {
    if (ctx.ready_nodes.count(node)) continue;
    bool ready = !ranks.empty();
    for (int64_t r : ranks) {
      if (!source_->HasParallelGroups(ctx.job.job_id, r)) {
        ready = false;
        break;
      }
      const RankProfile& p = ctx.Reader(*source_, r, MaxSamples(ctx)).Refresh(nullptr);
      if (p.step_time.empty() ||
          p.step_time.back().step - p.step_time.front().step < options_.initial_steps) {
        ready = false;
        break;
      }
    }
    if (ready) {
      ctx.ready_nodes.insert(node);
      if (ctx.first_ready_at == absl::InfinitePast()) ctx.first_ready_at = now;
    }
  }
  const bool all = ctx.ready_nodes.size() == ctx.nodes.size() && !ctx.nodes.empty();
  const bool waited =
      !ctx.ready_nodes.empty() && now - ctx.first_ready_at >= options_.all_nodes_report_timeout;
  if (all || waited) {
    // Merge the parallel groups of the reported nodes (parallel_group_global.json).
    for (const std::string& node : ctx.ready_nodes) {
      for (int64_t r : ctx.nodes[node]) {
        absl::StatusOr<ProfilingText> file = source_->ParallelGroups(ctx.job.job_id, r);
        if (!file.ok()) continue;
        auto groups = ParseParallelGroups(file->text, file->name);
        if (groups.ok()) ctx.global_groups.Merge(*groups);
      }
    }
    if (SwitchProfiling(ctx, LightProfiling())) ctx.degradation.heavy_profiling = false;
    ctx.step = 2;
    ctx.state = "detecting";
    ctx.next_round = now;  // first detection at once
    LogInfo(kComponent, "initial profiling finished, cluster detection starts",
            {{"job", ctx.key},
             {"nodes", static_cast<int64_t>(ctx.ready_nodes.size())},
             {"of", static_cast<int64_t>(ctx.nodes.size())}});
    DetectionRound(ctx);
    ctx.next_round =
        now + std::max(absl::Seconds(ctx.conf.n_seconds_do_one_detection), absl::Seconds(1));
    return;
  }
  if (ctx.ready_nodes.empty() && now - ctx.started_at >= options_.node_report_timeout) {
    StopDetection(ctx, false, "no node finished initial profiling within node_report_timeout");
    return;
  }
  ctx.next_round = now + options_.readiness_poll;
}

void SlowNodeController::DetectionRound(Context& ctx) {
  DetectorParams params = DetectorParams::FromFeatConf(ctx.conf);
  params.mode = options_.mode;
  std::vector<NodeResult> results;
  std::vector<std::string> problems;
  for (const std::string& node : ctx.ready_nodes) {
    NodeInput input;
    input.node_ip = node;
    for (int64_t r : ctx.nodes[node]) {
      absl::StatusOr<ProfilingText> file = source_->ParallelGroups(ctx.job.job_id, r);
      if (!file.ok()) {
        ctx.rank_views[r].result = "no data";
        continue;  // a rank that disappeared
      }
      auto groups = ParseParallelGroups(file->text, file->name);
      if (!groups.ok()) {
        problems.push_back(std::string(groups.status().message()));
        BadInput("parallel-group").Increment();
        ctx.rank_views[r].result = "no data";
        continue;
      }
      input.groups.Merge(*groups);
      input.ranks.push_back(ctx.Reader(*source_, r, MaxSamples(ctx)).Refresh(&problems));
    }
    NodeRound round =
        RunNodeRound(ctx.node_state[node], input, params, ctx.conf.cluster_mean_distance);
    ctx.node_state[node] = std::move(round.next);
    for (const auto& [rank, det] : round.step_detections) {
      SlowNodeRankView& v = ctx.rank_views[rank];
      const SeriesState& st = ctx.node_state[node][rank][SeriesKind::kStepTime];
      v.mean = st.mean;
      v.sigma = st.sigma;
      v.count = st.count;
      v.last_step = st.last_step;
      if (det.outcome == DetectOutcome::kDetected) {
        v.slow = det.slow;
        v.degradation = det.degradation;
        v.result = det.slow ? "slow" : "normal";
      } else if (det.outcome == DetectOutcome::kTooFewSamples) {
        v.result = "waiting";
      }
      if (det.stalled) {
        LogError(kComponent,
                 absl::StrCat("rank ", rank, " is not update or training complete or blocked!"),
                 {{"job", ctx.key}});
      }
    }
    if (round.outcome != NodeRoundOutcome::kRan) continue;
    if (round.result.is_slow) {
      LogInfo(kComponent,
              absl::StrCat("detected node: ", node, " is degradation, slow rank ids: ",
                           GoIntSlice(round.result.slow_calculate_ranks)),
              {{"job", ctx.key}});
    }
    results.push_back(std::move(round.result));
  }
  if (!problems.empty()) {
    ctx.reason = problems.front();
    LogWarn(kComponent, "slow-node input problems",
            {{"job", ctx.key},
             {"count", static_cast<int64_t>(problems.size())},
             {"first", problems.front()}});
  }
  if (results.empty()) return;  // no node produced a new result: the cluster round is skipped
  ++ctx.rounds;
  Rounds().Increment();
  ClusterResult result = MergeNodeResults(results, ctx.global_groups);
  const std::string rendered = result.ToJson(ctx.job.job_id, options_.reporter_ip).dump();
  if (result.is_slow) {
    LogInfo(kComponent, absl::StrCat("[SLOWNODE ALGO]Cluster detection result:", rendered));
  } else {
    LogDebug(kComponent, absl::StrCat("[SLOWNODE ALGO]Cluster detection result:", rendered));
  }
  ctx.last_result = result;
  const DegradationState before = ctx.degradation;
  DegradationStep step = AdvanceDegradation(ctx.degradation, result);
  ctx.degradation = step.next;
  for (const DegradationAction& a : step.actions) Execute(ctx, a, before);
  ctx.state = ctx.degradation.degraded ? "degraded" : "detecting";
}

void SlowNodeController::Execute(Context& ctx, const DegradationAction& action,
                                 const DegradationState& before) {
  const absl::Time now = clock_.Now();
  switch (action.kind) {
    case DegradationActionKind::kHeavyProfilingOn:
      if (!SwitchProfiling(ctx, HeavyProfiling())) {
        ctx.degradation.heavy_profiling = before.heavy_profiling;
      }
      break;
    case DegradationActionKind::kHeavyProfilingOff:
      if (!SwitchProfiling(ctx, LightProfiling())) ctx.degradation.heavy_profiling = true;
      break;
    case DegradationActionKind::kLogConfirmed:
      LogInfo(kComponent,
              absl::StrCat("jobId=", ctx.job.job_id, " in cluster got degradation, slow rank ids: ",
                           GoIntSlice(action.ranks)),
              {{"job", ctx.key}});
      break;
    case DegradationActionKind::kLogAlreadyDegraded:
      LogInfo(kComponent, absl::StrCat("jobId=", ctx.job.job_id,
                                       " in cluster got degradation, no need to start heavy "
                                       "profiling"));
      break;
    case DegradationActionKind::kReportSlow:
    case DegradationActionKind::kReportRecovery: {
      const std::string_view code = action.kind == DegradationActionKind::kReportSlow
                                        ? kSlowNodeFaultCode
                                        : kSlowNodeRecoveredFaultCode;
      ctx.reports.push_back({SlowNodeReport(ctx.job.job_id, code, action.ranks,
                                            options_.reporter_node, now, NewUuid()),
                             0});
      break;
    }
  }
}

bool SlowNodeController::SwitchProfiling(Context& ctx, const model::ProfilingSwitch& value) {
  absl::Status st = switcher_->SetProfiling(ctx.job, value);
  if (st.ok()) return true;
  SwitchFailures().Increment();
  LogWarn(kComponent, "profiling switch failed", {{"job", ctx.key}, {"error", st}});
  return false;
}

void SlowNodeController::FlushReports(Context& ctx) {
  while (!ctx.reports.empty()) {
    Context::PendingReport& p = ctx.reports.front();
    const std::string code = p.report.faults.empty() ? "" : p.report.faults.front().fault_code;
    absl::Status st = sink_.SendPublicFault(p.report);
    if (st.ok()) {
      FaultsReported(code, "sent").Increment();
      LogInfo(kComponent, "slow-node public fault sent",
              {{"job", ctx.key}, {"code", code}, {"request", p.report.ToJson().dump()}});
      ctx.reports.pop_front();
      continue;
    }
    if (++p.attempts >= options_.max_retries) {
      FaultsReported(code, "dropped").Increment();
      LogError(kComponent, "slow-node public fault dropped after retries",
               {{"job", ctx.key}, {"code", code}, {"error", st}});
      ctx.reports.pop_front();
      continue;
    }
    FaultsReported(code, "retry").Increment();
    break;  // retried after retry_delay, in order
  }
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
