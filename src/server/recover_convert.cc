#include "server/recover_convert.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/time_format.h"
#include "recovery/vocabulary.h"
#include "model/fault_level.h"

namespace clusterd::server {
namespace {

nlohmann::ordered_json FaultRanksJson(const std::vector<recovery::FaultRank>& faults) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const recovery::FaultRank& f : faults) out.push_back({{"rank", f.rank}, {"type", f.type}});
  return out;
}

}  // namespace

::ProcessManageSignal SignalToProto(const recovery::Signal& signal) {
  ::ProcessManageSignal p;
  p.set_uuid(signal.uuid);
  p.set_jobid(signal.job_id);
  p.set_signaltype(signal.signal_type);
  for (const std::string& a : signal.actions) p.add_actions(a);
  for (const recovery::FaultRank& f : signal.fault_ranks) {
    ::FaultRank* r = p.add_faultranks();
    r->set_rankid(std::to_string(f.rank));
    r->set_faulttype(std::to_string(f.type));
  }
  p.set_changestrategy(signal.change_strategy);
  p.set_timeout(signal.timeout);
  for (int64_t n : signal.node_rank_ids) p.add_noderankids(std::to_string(n));
  p.set_extraparams(signal.extra_params);
  return p;
}

std::optional<int64_t> WorldSizeOf(const recovery::JobView& view, int64_t replicas) {
  if (replicas <= 0 || view.pods.empty()) return std::nullopt;
  const int64_t pods = std::min(std::max(replicas, view.pods.rbegin()->first + 1), kMaxWorldSize);
  const int64_t npus_per_pod = std::max(view.npus_per_pod, 1);
  return std::min(pods * npus_per_pod, kMaxWorldSize);
}

absl::StatusOr<std::vector<recovery::FaultRank>> ParseFaultRanks(
    const google::protobuf::RepeatedPtrField<::FaultRank>& ranks,
    std::optional<int64_t> world_size) {
  if (ranks.size() > kMaxWorldSize) {
    return absl::ResourceExhaustedError(
        absl::StrCat(ranks.size(), " entries, over the limit of ", kMaxWorldSize));
  }
  const int64_t bound = world_size.value_or(kMaxWorldSize);
  std::vector<recovery::FaultRank> out;
  out.reserve(ranks.size());
  for (const ::FaultRank& r : ranks) {
    absl::StatusOr<recovery::FaultRank> f = recovery::ParseFaultRank(r.rankid(), r.faulttype());
    if (!f.ok()) return f.status();
    if (f->rank >= bound) {
      return absl::OutOfRangeError(
          world_size.has_value()
              ? absl::StrCat("rankId ", f->rank, " is outside the job's world size ", bound)
              : absl::StrCat("rankId ", f->rank, " is over the limit of ", bound,
                             " (the job's world size is not known yet)"));
    }
    out.push_back(*f);
  }
  return out;
}

std::vector<int64_t> ParseIsolateRanks(const google::protobuf::RepeatedPtrField<std::string>& ids,
                                       int* dropped) {
  std::vector<int64_t> out;
  for (const std::string& id : ids) {
    int64_t rank = 0;
    if (absl::SimpleAtoi(id, &rank) && rank >= 0) {
      out.push_back(rank);
    } else if (dropped != nullptr) {
      ++*dropped;
    }
  }
  return out;
}

std::map<std::string, recovery::NicOps> NicOpsOf(const ::SwitchNics& request) {
  std::map<std::string, recovery::NicOps> out;
  for (const auto& [node, list] : request.nicops()) {
    recovery::NicOps& ops = out[node];
    ops.devices.assign(list.dev().begin(), list.dev().end());
    ops.ops.assign(list.op().begin(), list.op().end());
  }
  return out;
}

std::map<std::string, std::vector<int64_t>> StressParamOf(const ::StressTestParam& request) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [node, list] : request.stressparam()) {
    out[node].assign(list.ops().begin(), list.ops().end());
  }
  return out;
}

absl::StatusOr<recovery::StressResults> ParseStressResults(const ::StressTestResult& request) {
  recovery::StressResults out;
  for (const auto& [rank_text, rank_result] : request.stressresult()) {
    int64_t rank = 0;
    if (!absl::SimpleAtoi(rank_text, &rank) || rank < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("stressResult key \"", rank_text, "\" is not a global rank"));
    }
    auto& ops = out[rank];
    for (const auto& [op, result] : rank_result.rankresult()) {
      ops[op] = recovery::StressOpResult{result.code(), result.result()};
    }
  }
  return out;
}

::SwitchRankList SwitchRankListToProto(const std::string& job_id,
                                       const recovery::NicSwitchParams& params) {
  ::SwitchRankList p;
  for (int64_t r : params.ranks) p.add_rankid(std::to_string(r));
  for (bool op : params.ops) p.add_op(op);
  p.set_jobid(job_id);
  return p;
}

::StressTestRankParams StressParamsToProto(const std::string& job_id,
                                           const std::map<int64_t, std::vector<int64_t>>& params) {
  ::StressTestRankParams p;
  for (const auto& [rank, ops] : params) {
    ::StressOpList& list = (*p.mutable_stressparam())[std::to_string(rank)];
    for (int64_t op : ops) list.add_ops(op);
  }
  p.set_jobid(job_id);
  return p;
}

recovery::JobTopology TopologyOf(const std::optional<cluster::JobRecord>& record, bool registered) {
  recovery::JobTopology t;
  t.registered = registered;
  if (!record.has_value()) return t;
  t.job_known = true;
  t.running = record->status == model::JobStatus::kRunning;
  if (record->rank_table.server_list.has_value()) {
    for (const model::RankTableServer& s : *record->rank_table.server_list) {
      recovery::NodeTopology& n = t.nodes[s.server_name];
      n.super_pod_id = s.super_pod_id;
      n.known_to_fault_centre = true;
      for (const model::RankTableDevice& d : s.devices) {
        int64_t rank = 0;
        if (absl::SimpleAtoi(d.rank_id, &rank)) n.device_ranks[d.device_id] = rank;
      }
    }
  }
  return t;
}

bool RecoveryIgnoresLevel(std::string_view level) {
  return level == model::kLevelNotHandleFault || level == model::kLevelPreSeparateNPU ||
         level == "PreSeparate";  // the switch vocabulary's spelling
}

recovery::HardwareFaultsPublished HardwareFaultsOf(const cluster::JobFaultRanks& faults) {
  recovery::HardwareFaultsPublished out;
  out.health = faults.health;
  for (const cluster::FaultRankEntry& e : faults.ranks) {
    if (RecoveryIgnoresLevel(e.level)) continue;
    if (e.code.empty() && e.device_id.empty()) continue;  // node-not-ready pseudo rank
    recovery::HardwareFault f;
    f.rank = e.rank_id;
    f.pod_uid = e.pod_uid;
    f.pod_rank = e.pod_rank;
    f.fault_code = e.code;
    f.fault_level = e.level;
    f.do_step_retry = e.do_step_retry;
    f.do_restart_in_place = e.do_restart_in_place;
    out.faults.push_back(std::move(f));
  }
  return out;
}

// What the controller waits for in `phase`, in the words the demo and docs use.
std::string_view WaitingFor(recovery::Phase phase) {
  using recovery::Phase;
  switch (phase) {
    case Phase::kWaitReport:
      return "the ranks' reports";
    case Phase::kWaitPlatStrategy:
      return "the platform's strategy";
    case Phase::kFlushDelay:
      return "the flush delay";
    case Phase::kRaBlockWait:
      return "the PodGroup to run again";
    case Phase::kForceRelease:
      return "the processes to release their NPUs";
    case Phase::kInPlaceWait:
      return "the in-place faults to clear";
    case Phase::kPlatResultWait:
      return "the platform's fault result";
    case Phase::kResourceWait:
      return "resources for the scale-in";
    case Phase::kRankTableWait:
      return "the new rank table";
    case Phase::kHcclDelay:
      return "the network routes to converge";
    case Phase::kRecoverWait:
      return "the processes to recover";
    case Phase::kInPlaceClearDelay:
      return "the in-place restart to settle";
    case Phase::kListenSchedule:
      return "the pods to be rescheduled";
    case Phase::kRestartAllDelay:
      return "all processes to restart";
    case Phase::kFaultRetryRunning:
      return "the job to run again";
    case Phase::kScaleRunning:
      return "the replaced pod";
    case Phase::kScaleOutBackoff:
      return "the scale-out retry";
    case Phase::kNewPodWait:
      return "the backup pod to run";
    case Phase::kOldPodDeleteWait:
      return "the old pod to go";
    case Phase::kStressWait:
      return "the stress test's result";
    default:
      return "";
  }
}

// The armed timers: what the controller waits for and until when (the demo's progress line,
// clusterctl get recovery). The pre-exit grace is its own timer, whatever the phase.
nlohmann::ordered_json WaitingJson(const recovery::JobRecovery& job, absl::Time now) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [kind, deadline] : job.timers) {
    if (deadline == absl::InfinitePast() || deadline == absl::InfiniteFuture()) continue;
    if (deadline <= now) continue;  // fired, or stale (timers are never cancelled)
    std::string what;
    if (kind == recovery::TimerKind::kPreExitGrace) {
      what = "the pre-exit grace";
    } else if (kind == recovery::TimerKind::kStep || kind == recovery::TimerKind::kStepDeadline) {
      what = std::string(WaitingFor(job.phase));
    }
    if (what.empty()) continue;
    nlohmann::ordered_json w = {{"for", what},
                                {"timer", std::string(recovery::TimerKindName(kind))},
                                {"until", Rfc3339Millis(deadline)}};
    if (now != absl::InfinitePast()) {
      w["secondsLeft"] = std::ceil(absl::ToDoubleSeconds(deadline - now));
    }
    out.push_back(std::move(w));
  }
  return out;
}

nlohmann::ordered_json RecoveryJson(const recovery::JobIdentity& id,
                                    const recovery::JobRecovery& job, bool stream_open,
                                    std::optional<int64_t> world_size, absl::Time now) {
  std::string strategy = job.decided;
  if (strategy.empty() && !job.strategy_history.empty()) strategy = job.strategy_history.back();
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const recovery::HistoryEntry& h : job.history) {
    history.push_back(
        {{"at", Rfc3339Millis(h.at)}, {"from", h.from}, {"event", h.event}, {"to", h.to}});
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const recovery::StatusReport& r : job.result_history) {
    results.push_back({{"strategy", r.strategy}, {"code", r.code}});
  }
  std::vector<recovery::FaultRank> faults = job.caches.All();
  return nlohmann::ordered_json{
      {"jobId", job.job_id},
      {"namespace", id.ns},
      {"name", id.job_name},
      {"podGroup", id.pod_group_name},
      {"state", std::string(recovery::StateName(job.state))},
      {"phase", std::string(recovery::PhaseName(job.phase))},
      {"strategy", strategy},
      {"configuredStrategies", job.config.strategies},
      {"platformMode", job.config.platform_mode},
      {"uuid", job.uuid},
      {"health", job.health},
      {"worldSize", world_size.has_value() ? nlohmann::ordered_json(*world_size) : nullptr},
      {"faultRanks", FaultRanksJson(faults)},
      {"faultPods",
       [&] {
         nlohmann::ordered_json pods = nlohmann::ordered_json::array();
         for (const auto& [rank, _] : job.fault_pods) pods.push_back(rank);
         return pods;
       }()},
      {"strategyHistory", job.strategy_history},
      {"resultHistory", results},
      {"subscribed", stream_open},
      {"cycles", job.cycles},
      {"waiting", WaitingJson(job, now)},
      {"history", history},
  };
}

}  // namespace clusterd::server
