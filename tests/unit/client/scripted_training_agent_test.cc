#include "client/scripted_training_agent.h"

#include "client/recover_client.h"
#include "gtest/gtest.h"

namespace clusterd::client {
namespace scripted_training_agent_test {

::ProcessManageSignal Signal(const std::string& type, const std::string& strategy = "",
                             std::vector<std::pair<int, int>> ranks = {}) {
  ::ProcessManageSignal s;
  s.set_uuid("U1");
  s.set_jobid("J");
  s.set_signaltype(type);
  s.set_changestrategy(strategy);
  for (auto [rank, type] : ranks) *s.add_faultranks() = RecoverClient::Fault(rank, type);
  return s;
}

// The single reply of type T (by value: callers pass a temporary vector).
template <typename T>
T Only(const std::vector<AgentReply>& replies) {
  EXPECT_EQ(replies.size(), 1u);
  if (replies.size() != 1 || !std::holds_alternative<T>(replies[0])) {
    ADD_FAILURE() << "unexpected replies";
    return T{};
  }
  return std::get<T>(replies[0]);
}

TEST(ScriptedTrainingAgent, StopIsAnsweredWithStopComplete) {
  ScriptedTrainingAgent agent("J");
  auto replies = agent.OnSignal(Signal("stopTrain", "", {{10, 1}}));
  const auto& stop = Only<StopCompleteReply>(replies);
  EXPECT_EQ(stop.code, 0);
  ASSERT_EQ(stop.fault_ranks.size(), 1u);
  EXPECT_EQ(stop.fault_ranks[0].rankid(), "10");
  EXPECT_EQ(agent.phase(), TrainingPhase::kStopped);
  EXPECT_FALSE(agent.training());
  EXPECT_EQ(agent.current_uuid(), "U1");
}

TEST(ScriptedTrainingAgent, GlobalFaultIsAnsweredWithTheSupportedStrategies) {
  ScriptedTrainingAgent agent("J", {.supported_strategies = {"recover", "exit"}});
  const auto& s = Only<RecoverStrategyReply>(agent.OnSignal(Signal("globalFault")));
  EXPECT_EQ(s.strategies, (std::vector<std::string>{"recover", "exit"}));
}

TEST(ScriptedTrainingAgent, AStrategyIsRunAndItsStatusEchoesTheStrategy) {
  ScriptedTrainingAgent agent("J");
  agent.OnSignal(Signal("stopTrain"));
  const auto& st = Only<RecoverStatusReply>(agent.OnSignal(Signal("changeStrategy", "recover")));
  EXPECT_EQ(st.code, 0);
  EXPECT_EQ(st.strategy, "recover");
  EXPECT_TRUE(agent.training());
  EXPECT_EQ(agent.resumed_count(), 1);
  EXPECT_EQ(agent.strategies_run(), (std::vector<std::string>{"recover"}));
}

TEST(ScriptedTrainingAgent, ScriptedCodesAreUsedPerAttemptAndTheLastRepeats) {
  ScriptedTrainingAgent agent("J", {.status_codes = {{"retry", {405, 0}}, {"recover", {1}}}});
  EXPECT_EQ(Only<RecoverStatusReply>(agent.OnSignal(Signal("changeStrategy", "retry"))).code, 405);
  EXPECT_FALSE(agent.training());
  EXPECT_EQ(Only<RecoverStatusReply>(agent.OnSignal(Signal("changeStrategy", "retry"))).code, 0);
  EXPECT_TRUE(agent.training());
  EXPECT_EQ(Only<RecoverStatusReply>(agent.OnSignal(Signal("changeStrategy", "recover"))).code, 1);
  EXPECT_EQ(Only<RecoverStatusReply>(agent.OnSignal(Signal("changeStrategy", "recover"))).code, 1);
}

TEST(ScriptedTrainingAgent, ExitIsNotAnsweredAndTrainingRestartsAfterTheStreamEnds) {
  ScriptedTrainingAgent agent("J");
  EXPECT_TRUE(agent.OnSignal(Signal("changeStrategy", "exit")).empty());
  EXPECT_EQ(agent.phase(), TrainingPhase::kExiting);
  agent.OnStreamEnd();
  EXPECT_TRUE(agent.training());
}

TEST(ScriptedTrainingAgent, SaveAndExitReportsTheDumpResult) {
  ScriptedTrainingAgent agent("J", {.status_codes = {{"dump", {407}}}});
  const auto& st = Only<RecoverStatusReply>(agent.OnSignal(Signal("saveAndExit")));
  EXPECT_EQ(st.code, 407);
  EXPECT_EQ(st.strategy, "dump");
  EXPECT_EQ(agent.phase(), TrainingPhase::kExiting);
}

TEST(ScriptedTrainingAgent, DowngradeReportsIsolateRanksThenTheScaleInResult) {
  ScriptedTrainingAgent agent("J");
  const auto first = Only<RecoverStatusReply>(
      agent.OnSignal(Signal("changeStrategy", "downgrade", {{8, 1}, {9, 1}})));
  EXPECT_EQ(first.code, 201);
  EXPECT_EQ(first.strategy, "downgrade");
  EXPECT_EQ(first.isolate_rank_ids, (std::vector<std::string>{"8", "9"}));
  const auto& second = Only<RecoverStatusReply>(agent.OnSignal(Signal("faultNodesExit")));
  EXPECT_EQ(second.code, 0);
  EXPECT_EQ(second.strategy, "downgrade");
  EXPECT_EQ(agent.phase(), TrainingPhase::kScaledIn);
  EXPECT_TRUE(agent.training());
  // A second faultNodesExit is not a scale-in answer.
  EXPECT_TRUE(agent.OnSignal(Signal("faultNodesExit")).empty());
}

TEST(ScriptedTrainingAgent, PreExitReportsTheLostRanksAsAProcessFault) {
  ScriptedTrainingAgent agent("J");
  const auto& f = Only<ProcessFaultReply>(agent.OnSignal(Signal("preExitProcess", "", {{10, 1}})));
  ASSERT_EQ(f.fault_ranks.size(), 1u);
  EXPECT_EQ(f.fault_ranks[0].faulttype(), "1");
  ScriptedTrainingAgent quiet("J", {.report_fault_on_pre_exit = false});
  EXPECT_TRUE(quiet.OnSignal(Signal("preExitProcess", "", {{10, 1}})).empty());
}

TEST(ScriptedTrainingAgent, KillMasterCountsAndIsNotAnswered) {
  ScriptedTrainingAgent agent("J");
  EXPECT_TRUE(agent.OnSignal(Signal("killMaster")).empty());
  EXPECT_EQ(agent.kill_count(), 1);
  EXPECT_EQ(agent.phase(), TrainingPhase::kExiting);
}

TEST(ScriptedTrainingAgent, NeverAnswerSilencesASignalTypeOrOneStrategy) {
  ScriptedTrainingAgent agent("J", {.never_answer = {"stopTrain", "changeStrategy:recover"}});
  EXPECT_TRUE(agent.OnSignal(Signal("stopTrain")).empty());
  EXPECT_EQ(agent.phase(), TrainingPhase::kStopped);
  EXPECT_TRUE(agent.OnSignal(Signal("changeStrategy", "recover")).empty());
  EXPECT_FALSE(agent.training());
  EXPECT_EQ(agent.OnSignal(Signal("changeStrategy", "dump")).size(), 1u);
}

TEST(ScriptedTrainingAgent, ARefusingJobReportsProcessNotReady) {
  ScriptedTrainingAgent agent("J", {.stop_complete_code = 404});
  EXPECT_EQ(Only<StopCompleteReply>(agent.OnSignal(Signal("stopTrain"))).code, 404);
}

TEST(ScriptedTrainingAgent, KeepAlivesAndOtherJobsSignalsAreIgnored) {
  ScriptedTrainingAgent agent("J");
  EXPECT_TRUE(agent.OnSignal(Signal("keep-alive")).empty());
  ::ProcessManageSignal other = Signal("stopTrain");
  other.set_jobid("K");
  EXPECT_TRUE(agent.OnSignal(other).empty());
  EXPECT_TRUE(agent.training());
}

TEST(ScriptedTrainingAgent, NewPodRunningIsAnsweredWithThePauseResult) {
  ScriptedTrainingAgent agent("J");
  ::ProcessManageSignal s = Signal("hot-switch");
  s.set_uuid("");
  s.add_actions("new pod running");
  const auto& r = Only<RecoverStrategyReply>(agent.OnSignal(s));
  EXPECT_EQ(r.strategies, (std::vector<std::string>{"migration"}));
  ::ProcessManageSignal prepare = Signal("hot-switch");
  prepare.add_actions("hot switch");
  EXPECT_TRUE(agent.OnSignal(prepare).empty());
}

TEST(ScriptedTrainingAgent, RepliesAreDescribedForLogs) {
  EXPECT_EQ(DescribeReply(RecoverStatusReply{201, "downgrade", {"8"}}),
            "ReportRecoverStatus{code=201, strategy=downgrade, isolate=[8]}");
  EXPECT_EQ(DescribeReply(StopCompleteReply{0, {}}), "ReportStopComplete{code=0}");
}

TEST(BackoffDelay, GrowsExponentiallyUpToTheMaximum) {
  BackoffPolicy p;
  p.jitter = 0;
  EXPECT_EQ(BackoffDelay(p, 0, 0.5), absl::Seconds(1));
  EXPECT_EQ(BackoffDelay(p, 1, 0.5), absl::Seconds(2));
  EXPECT_EQ(BackoffDelay(p, 3, 0.5), absl::Seconds(8));
  EXPECT_EQ(BackoffDelay(p, 10, 0.5), absl::Seconds(10));
}

TEST(BackoffDelay, JitterStaysWithinItsFraction) {
  BackoffPolicy p;  // 20 %
  EXPECT_EQ(BackoffDelay(p, 0, 0.0), absl::Milliseconds(800));
  EXPECT_EQ(BackoffDelay(p, 0, 0.5), absl::Seconds(1));
  EXPECT_LE(BackoffDelay(p, 0, 0.999999), absl::Milliseconds(1200));
}

}  // namespace scripted_training_agent_test
}  // namespace clusterd::client
