// A job's detection (§6.2): start and stop, the profiling switches, initial profiling, the
// rounds every nSecondsDoOneDetection and the public-fault reports they raise. The intake
// (slow_node_controller.cc) decides which jobs run; everything here runs under mu_.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/metrics.h"
#include "diagnosis/slow_node_context.h"
#include "diagnosis/slow_node_controller.h"

namespace clusterd::diagnosis {
namespace {

constexpr std::string_view kSlowNodeRoundsLog = kSlowNodeLogComponent;

Counter& SlowNodeRounds() {
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

}  // namespace

std::string GoIntSlice(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
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
  LogInfo(kSlowNodeRoundsLog, "slow-node detection starts",
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
  LogInfo(kSlowNodeRoundsLog, "slow-node detection stops", {{"job", ctx.key}, {"reason", reason}});
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
    LogInfo(kSlowNodeRoundsLog, "initial profiling finished, cluster detection starts",
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
        SlowNodeBadInput("parallel-group").Increment();
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
        LogError(kSlowNodeRoundsLog,
                 absl::StrCat("rank ", rank, " is not update or training complete or blocked!"),
                 {{"job", ctx.key}});
      }
    }
    if (round.outcome != NodeRoundOutcome::kRan) continue;
    if (round.result.is_slow) {
      LogInfo(kSlowNodeRoundsLog,
              absl::StrCat("detected node: ", node, " is degradation, slow rank ids: ",
                           GoIntSlice(round.result.slow_calculate_ranks)),
              {{"job", ctx.key}});
    }
    results.push_back(std::move(round.result));
  }
  if (!problems.empty()) {
    ctx.reason = problems.front();
    LogWarn(kSlowNodeRoundsLog, "slow-node input problems",
            {{"job", ctx.key},
             {"count", static_cast<int64_t>(problems.size())},
             {"first", problems.front()}});
  }
  if (results.empty()) return;  // no node produced a new result: the cluster round is skipped
  ++ctx.rounds;
  SlowNodeRounds().Increment();
  ClusterResult result = MergeNodeResults(results, ctx.global_groups);
  const std::string rendered = result.ToJson(ctx.job.job_id, options_.reporter_ip).dump();
  if (result.is_slow) {
    LogInfo(kSlowNodeRoundsLog, absl::StrCat("[SLOWNODE ALGO]Cluster detection result:", rendered));
  } else {
    LogDebug(kSlowNodeRoundsLog,
             absl::StrCat("[SLOWNODE ALGO]Cluster detection result:", rendered));
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
      LogInfo(kSlowNodeRoundsLog,
              absl::StrCat("jobId=", ctx.job.job_id, " in cluster got degradation, slow rank ids: ",
                           GoIntSlice(action.ranks)),
              {{"job", ctx.key}});
      break;
    case DegradationActionKind::kLogAlreadyDegraded:
      LogInfo(kSlowNodeRoundsLog,
              absl::StrCat("jobId=", ctx.job.job_id,
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
  LogWarn(kSlowNodeRoundsLog, "profiling switch failed", {{"job", ctx.key}, {"error", st}});
  return false;
}

void SlowNodeController::FlushReports(Context& ctx) {
  while (!ctx.reports.empty()) {
    Context::PendingReport& p = ctx.reports.front();
    const std::string code = p.report.faults.empty() ? "" : p.report.faults.front().fault_code;
    absl::Status st = sink_.SendPublicFault(p.report);
    if (st.ok()) {
      FaultsReported(code, "sent").Increment();
      LogInfo(kSlowNodeRoundsLog, "slow-node public fault sent",
              {{"job", ctx.key}, {"code", code}, {"request", p.report.ToJson().dump()}});
      ctx.reports.pop_front();
      continue;
    }
    if (++p.attempts >= options_.max_retries) {
      FaultsReported(code, "dropped").Increment();
      LogError(kSlowNodeRoundsLog, "slow-node public fault dropped after retries",
               {{"job", ctx.key}, {"code", code}, {"error", st}});
      ctx.reports.pop_front();
      continue;
    }
    FaultsReported(code, "retry").Increment();
    break;  // retried after retry_delay, in order
  }
}

}  // namespace clusterd::diagnosis
