#include "client/scripted_training_agent.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recovery/vocabulary.h"

namespace clusterd::client {
namespace {

namespace v = recovery;

std::vector<::FaultRank> Ranks(const ::ProcessManageSignal& signal) {
  return {signal.faultranks().begin(), signal.faultranks().end()};
}

bool HasAction(const ::ProcessManageSignal& signal, std::string_view action) {
  for (const std::string& a : signal.actions()) {
    if (a == action) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 5> kPhaseNames = {"training", "stopped", "recovering",
                                                         "scaledIn", "exiting"};

}  // namespace

std::string DescribeReply(const AgentReply& reply) {
  struct Visitor {
    std::string operator()(const StopCompleteReply& r) const {
      return absl::StrCat("ReportStopComplete{code=", r.code, "}");
    }
    std::string operator()(const RecoverStrategyReply& r) const {
      return absl::StrCat("ReportRecoverStrategy{", absl::StrJoin(r.strategies, ","), "}");
    }
    std::string operator()(const RecoverStatusReply& r) const {
      return absl::StrCat("ReportRecoverStatus{code=", r.code, ", strategy=", r.strategy,
                          ", isolate=[", absl::StrJoin(r.isolate_rank_ids, ","), "]}");
    }
    std::string operator()(const ProcessFaultReply& r) const {
      std::vector<std::string> ranks;
      for (const auto& f : r.fault_ranks)
        ranks.push_back(absl::StrCat(f.rankid(), ":", f.faulttype()));
      return absl::StrCat("ReportProcessFault{", absl::StrJoin(ranks, ","), "}");
    }
  };
  return std::visit(Visitor{}, reply);
}

std::string_view TrainingPhaseName(TrainingPhase phase) {
  return kPhaseNames[static_cast<size_t>(phase)];
}

int32_t ScriptedTrainingAgent::NextStatusCode(const std::string& strategy) {
  const size_t attempt = attempts_[strategy]++;
  auto it = behaviour_.status_codes.find(strategy);
  if (it == behaviour_.status_codes.end() || it->second.empty()) return v::kCodeOk;
  return it->second[std::min(attempt, it->second.size() - 1)];
}

bool ScriptedTrainingAgent::Silent(const ::ProcessManageSignal& signal) const {
  if (behaviour_.never_answer.count(signal.signaltype()) > 0) return true;
  return signal.signaltype() == v::kSignalChangeStrategy &&
         behaviour_.never_answer.count(absl::StrCat("changeStrategy:", signal.changestrategy())) >
             0;
}

void ScriptedTrainingAgent::Resume() {
  phase_ = TrainingPhase::kTraining;
  ++resumed_count_;
}

std::vector<AgentReply> ScriptedTrainingAgent::OnSignal(const ::ProcessManageSignal& signal) {
  // The Python toolkit drops signals for other jobs; keep-alives carry nothing to act on.
  if (!signal.jobid().empty() && signal.jobid() != job_id_) return {};
  const std::string& type = signal.signaltype();
  if (type == v::kSignalKeepAlive) return {};
  if (!signal.uuid().empty()) uuid_ = signal.uuid();
  const bool silent = Silent(signal);
  std::vector<AgentReply> replies;

  if (type == v::kSignalStopTrain) {
    phase_ = TrainingPhase::kStopped;
    replies.push_back(StopCompleteReply{behaviour_.stop_complete_code, Ranks(signal)});
  } else if (type == v::kSignalGlobalFault) {
    phase_ = TrainingPhase::kStopped;
    replies.push_back(RecoverStrategyReply{behaviour_.supported_strategies, Ranks(signal)});
  } else if (type == v::kSignalChangeStrategy) {
    const std::string& strategy = signal.changestrategy();
    strategies_run_.push_back(strategy);
    if (strategy == v::kStrategyExit) {
      // Nobody waits for a status after exit (§7.4 A_EXIT_DECIDED); the pods are restarted.
      phase_ = TrainingPhase::kExiting;
    } else if (strategy == v::kStrategyDowngrade) {
      phase_ = TrainingPhase::kRecovering;
      awaiting_isolation_ = true;
      RecoverStatusReply reply{v::kCodeExitIsolateRanks, strategy, {}};
      for (const auto& f : signal.faultranks()) reply.isolate_rank_ids.push_back(f.rankid());
      replies.push_back(std::move(reply));
    } else {
      phase_ = TrainingPhase::kRecovering;
      const int32_t code = NextStatusCode(strategy);
      replies.push_back(RecoverStatusReply{code, strategy, {}});
      if (code == v::kCodeOk && !silent) Resume();
    }
  } else if (type == v::kSignalSaveAndExit) {
    strategies_run_.push_back(std::string(v::kStrategyDump));
    phase_ = TrainingPhase::kExiting;
    replies.push_back(RecoverStatusReply{
        NextStatusCode(std::string(v::kStrategyDump)), std::string(v::kStrategyDump), {}});
  } else if (type == v::kSignalFaultNodesExit) {
    if (awaiting_isolation_) {
      awaiting_isolation_ = false;
      const int32_t code = NextStatusCode(std::string(v::kStrategyDowngrade));
      replies.push_back(RecoverStatusReply{code, std::string(v::kStrategyDowngrade), {}});
      if (code == v::kCodeOk && !silent) {
        phase_ = TrainingPhase::kScaledIn;
        ++resumed_count_;
      }
    }
  } else if (type == v::kSignalKillMaster) {
    ++kill_count_;
    phase_ = TrainingPhase::kExiting;
  } else if (type == v::kSignalPreExitProcess) {
    phase_ = TrainingPhase::kStopped;
    if (behaviour_.report_fault_on_pre_exit) replies.push_back(ProcessFaultReply{Ranks(signal)});
  } else if (type == v::kSignalHotSwitch && HasAction(signal, v::kActionNewPodRunning)) {
    replies.push_back(RecoverStrategyReply{behaviour_.pause_result_strategies, {}});
  }
  if (silent) return {};
  return replies;
}

void ScriptedTrainingAgent::OnStreamEnd() {
  // Exit, dump and killMaster end with the pods or the job restarted by the scheduler.
  if (phase_ == TrainingPhase::kExiting) Resume();
}

}  // namespace clusterd::client
