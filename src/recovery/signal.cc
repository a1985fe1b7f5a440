#include "recovery/signal.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

Signal Base(const std::string& job_id, const std::string& uuid, std::string_view type) {
  Signal s;
  s.job_id = job_id;
  s.uuid = uuid;
  s.signal_type = std::string(type);
  return s;
}

std::vector<FaultRank> Sorted(const std::vector<FaultRank>& faults) { return DedupByRank(faults); }

std::vector<int64_t> SortedUnique(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

}  // namespace

std::optional<MachineEvent> SendResultEvent(const Signal& signal, bool ok) {
  const std::string& type = signal.signal_type;
  if (type == kSignalKeepAlive || type == kSignalPauseStartAgent ||
      type == kSignalContinueStartAgent || type == kSignalPreExitProcess ||
      signal.extra_params == kExtraDumpExit) {
    return std::nullopt;
  }
  if (type == kSignalKillMaster) return MachineEvent::kFinish;
  if (!ok) return MachineEvent::kNotifyFail;
  if (type == kSignalFaultNodesExit) return MachineEvent::kNotifyFaultNodesExitSuccess;
  if (type != kSignalChangeStrategy) return MachineEvent::kNotifySuccess;
  const std::string& s = signal.change_strategy;
  if (s == kStrategyRetry) return MachineEvent::kNotifyRetryStrategySuccess;
  if (s == kStrategyRecover) return MachineEvent::kNotifyRecoverStrategySuccess;
  if (s == kStrategyDump) return MachineEvent::kNotifyDumpStrategySuccess;
  if (s == kStrategyExit) return MachineEvent::kNotifyExitStrategySuccess;
  if (s == kStrategyContinue) return MachineEvent::kNotifyContinueSuccess;
  if (s == kStrategyDowngrade) return MachineEvent::kNotifyScaleInStrategySuccess;
  if (s == kStrategyUpgrade) return MachineEvent::kNotifyScaleOutStrategySuccess;
  return MachineEvent::kNotifySuccess;  // migration
}

Signal KeepAliveSignal(const std::string& job_id, const std::string& uuid) {
  return Base(job_id, uuid, kSignalKeepAlive);
}

Signal StopSignal(const std::string& job_id, const std::string& uuid,
                  const std::vector<FaultRank>& faults) {
  Signal s = Base(job_id, uuid, kSignalStopTrain);
  s.actions = {std::string(kActionStopTrain)};
  // Retry cache first, then the normal cache (§5.6); callers pass them in that order.
  s.fault_ranks = faults;
  return s;
}

Signal PauseSignal(const std::string& job_id, const std::string& uuid, int64_t timeout) {
  Signal s = Base(job_id, uuid, kSignalStopTrain);
  s.actions = {std::string(kActionPauseTrain)};
  s.timeout = timeout;
  return s;
}

Signal GlobalFaultSignal(const std::string& job_id, const std::string& uuid,
                         const std::vector<FaultRank>& faults, bool fault_nodes_exit,
                         bool fault_nodes_restart, const std::vector<int64_t>& node_ranks) {
  Signal s = Base(job_id, uuid, kSignalGlobalFault);
  s.actions = {std::string(kActionOnGlobalRank)};
  if (fault_nodes_exit) s.actions.emplace_back(kActionFaultNodesExit);
  if (fault_nodes_restart) s.actions.emplace_back(kActionFaultNodesRestart);
  s.fault_ranks = Sorted(faults);
  s.node_rank_ids = SortedUnique(node_ranks);
  return s;
}

Signal ChangeStrategySignal(const std::string& job_id, const std::string& uuid,
                            const std::string& strategy, const std::vector<FaultRank>& faults,
                            const std::vector<int64_t>& node_ranks) {
  Signal s = Base(job_id, uuid, kSignalChangeStrategy);
  s.actions = {std::string(kActionChangeStrategy)};
  s.change_strategy = strategy;
  s.fault_ranks = Sorted(faults);
  s.node_rank_ids = SortedUnique(node_ranks);
  if (strategy == kStrategyDowngrade) s.extra_params = std::string(kExtraScaleIn);
  if (strategy == kStrategyUpgrade) s.extra_params = std::string(kExtraScaleOut);
  return s;
}

Signal SaveAndExitSignal(const std::string& job_id, const std::string& uuid,
                         const std::vector<int64_t>& node_ranks) {
  Signal s = Base(job_id, uuid, kSignalSaveAndExit);
  s.actions = {std::string(kActionSaveAndExit)};
  s.node_rank_ids = SortedUnique(node_ranks);
  return s;
}

Signal CleanUpExitSignal(const std::string& job_id, const std::string& uuid,
                         const std::vector<int64_t>& node_ranks) {
  Signal s = Base(job_id, uuid, kSignalChangeStrategy);
  s.actions = {std::string(kActionChangeStrategy)};
  s.change_strategy = std::string(kStrategyExit);
  s.node_rank_ids = SortedUnique(node_ranks);
  s.extra_params = std::string(kExtraDumpExit);
  return s;
}

Signal KillMasterSignal(const std::string& job_id, const std::string& uuid) {
  return Base(job_id, uuid, kSignalKillMaster);
}

Signal FaultNodesExitSignal(const std::string& job_id, const std::string& uuid,
                            const std::vector<int64_t>& node_ranks) {
  Signal s = Base(job_id, uuid, kSignalFaultNodesExit);
  s.actions = {std::string(kActionFaultNodesExit)};
  s.node_rank_ids = SortedUnique(node_ranks);
  return s;
}

Signal PreExitSignal(const std::string& job_id, const std::string& uuid,
                     const std::vector<FaultRank>& faults, const std::vector<int64_t>& node_ranks) {
  Signal s = Base(job_id, uuid, kSignalPreExitProcess);
  s.actions = {std::string(kActionPreExitProcess)};
  for (const FaultRank& f : Sorted(faults)) s.fault_ranks.push_back({f.rank, kFaultTypeNormal});
  s.node_rank_ids = SortedUnique(node_ranks);
  return s;
}

Signal HotSwitchSignal(const std::string& job_id, const std::string& uuid, std::string_view action,
                       const std::vector<FaultRank>& faults) {
  Signal s = Base(job_id, uuid, kSignalHotSwitch);
  s.actions = {std::string(action)};
  s.fault_ranks = Sorted(faults);
  return s;
}

Signal StartAgentSignal(const std::string& job_id, const std::string& uuid, bool pause) {
  Signal s = Base(job_id, uuid, pause ? kSignalPauseStartAgent : kSignalContinueStartAgent);
  s.actions = {std::string(pause ? kActionPauseStartAgent : kActionContinueStartAgent)};
  return s;
}

std::string DebugString(const Signal& s) {
  return absl::StrCat(
      "{uuid:\"", s.uuid, "\" jobId:\"", s.job_id, "\" signalType:\"", s.signal_type,
      "\" actions:[", absl::StrJoin(s.actions, ","), "] faultRanks:[",
      absl::StrJoin(
          s.fault_ranks, ",",
          [](std::string* out, const FaultRank& f) { absl::StrAppend(out, f.rank, ":", f.type); }),
      "] changeStrategy:\"", s.change_strategy, "\" timeout:", s.timeout, " nodeRankIds:[",
      absl::StrJoin(s.node_rank_ids, ","), "] extraParams:\"", s.extra_params, "\"}");
}

}  // namespace clusterd::recovery
