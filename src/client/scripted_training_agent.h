#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "recover.pb.h"

namespace clusterd::client {

// What the training side sends back for a signal. The driver turns each into one Report* RPC.
struct StopCompleteReply {
  int32_t code = 0;
  std::vector<::FaultRank> fault_ranks;
};
struct RecoverStrategyReply {
  std::vector<std::string> strategies;
  std::vector<::FaultRank> fault_ranks;
};
struct RecoverStatusReply {
  int32_t code = 0;
  std::string strategy;
  std::vector<std::string> isolate_rank_ids;
};
struct ProcessFaultReply {
  std::vector<::FaultRank> fault_ranks;
};
using AgentReply =
    std::variant<StopCompleteReply, RecoverStrategyReply, RecoverStatusReply, ProcessFaultReply>;
std::string DescribeReply(const AgentReply& reply);

// Where the training is, as the agent believes.
enum class TrainingPhase {
  kTraining,    // running (at start, and after a successful recovery)
  kStopped,     // stopTrain / pause / preExit: the processes are stopped and wait for a decision
  kRecovering,  // a strategy is being carried out
  kScaledIn,    // running at reduced size after downgrade
  kExiting,     // exit / dump / killMaster: the job is restarted by pod or job rescheduling
};
std::string_view TrainingPhaseName(TrainingPhase phase);

// How a scripted job behaves. Defaults: a well-behaved job that stops, supports
// retry/recover/dump/exit, and whose every strategy succeeds.
struct AgentBehaviour {
  // ReportRecoverStrategy.strategies: what "MindIO" can do now (names of §9.2).
  std::vector<std::string> supported_strategies = {"retry", "recover", "dump", "exit"};
  // ReportStopComplete code (404 = process not ready: the server kills the job).
  int32_t stop_complete_code = 0;
  // RecoverStatus codes per strategy: the i-th attempt of a strategy uses codes[i]; the last one
  // repeats; absent means 0. For "downgrade" the first report is always 201 with the isolate ranks.
  std::map<std::string, std::vector<int32_t>> status_codes = {};
  // Signals left unanswered: a signalType ("stopTrain", "globalFault", "saveAndExit", ...) or
  // "changeStrategy:<strategy>".
  std::set<std::string> never_answer = {};
  // On preExitProcess, report the lost ranks with ReportProcessFault (what MindIO does).
  bool report_fault_on_pre_exit = true;
  // The pause result after "new pod running" (hot switch); empty or ["exit"] means stop the job.
  std::vector<std::string> pause_result_strategies = {"migration"};
};

// A pure policy object that answers ProcessManageSignals like a real job's MindIO would
// (recovery-protocol.md §4.2, §5.6, §9): stop → StopComplete; globalFault → the strategies it
// supports; changeStrategy → RecoverStatus echoing the strategy; saveAndExit → dump status;
// downgrade → 201 with the isolate ranks, then the scale-in result after faultNodesExit. It also
// tracks whether training runs. No I/O and no threads: the driver owns both.
class ScriptedTrainingAgent {
 public:
  explicit ScriptedTrainingAgent(std::string job_id, AgentBehaviour behaviour = {})
      : job_id_(std::move(job_id)), behaviour_(std::move(behaviour)) {}

  // The replies for `signal`, in order. Keep-alives and other jobs' signals yield nothing.
  std::vector<AgentReply> OnSignal(const ::ProcessManageSignal& signal);
  // The end of the stream: the server reset the controller (end of a cycle, success or not).
  void OnStreamEnd();

  TrainingPhase phase() const { return phase_; }
  bool training() const {
    return phase_ == TrainingPhase::kTraining || phase_ == TrainingPhase::kScaledIn;
  }
  // How many times training resumed after a stop (successful recoveries, scale-in included).
  int resumed_count() const { return resumed_count_; }
  int kill_count() const { return kill_count_; }
  const std::vector<std::string>& strategies_run() const { return strategies_run_; }
  const std::string& current_uuid() const { return uuid_; }
  AgentBehaviour& behaviour() { return behaviour_; }

 private:
  int32_t NextStatusCode(const std::string& strategy);
  bool Silent(const ::ProcessManageSignal& signal) const;
  void Resume();

  std::string job_id_;
  AgentBehaviour behaviour_;
  TrainingPhase phase_ = TrainingPhase::kTraining;
  std::string uuid_;
  std::map<std::string, size_t> attempts_;
  std::vector<std::string> strategies_run_;
  bool awaiting_isolation_ = false;
  int resumed_count_ = 0;
  int kill_count_ = 0;
};

}  // namespace clusterd::client
