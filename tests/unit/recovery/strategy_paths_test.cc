// Whole timelines through each strategy and fallback of §9.10.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace strategy_paths_test {

using ::testing::ElementsAre;
using testing::Harness;
using testing::Hw;
using testing::MakeConfig;
using testing::MakeView;
using testing::Ranks;

std::string RecoverStatusAnnotation(const Harness& h) {
  for (auto it = h.log().rbegin(); it != h.log().rend(); ++it) {
    if (const auto* p = std::get_if<PatchPodGroup>(&*it)) {
      const auto& a = p->patch["metadata"]["annotations"];
      if (a.contains("ProcessRecoverStatus")) return a["ProcessRecoverStatus"];
    }
  }
  return "";
}

// Drives a normal (type 1) fault on rank 10 (pod 1) up to the RecoverStrategy wait.
void ToStrategyWait(Harness& h) {
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  ASSERT_EQ(h.state(), State::kWaitReportRecoverStrategy);
}

// Drives a UCE fault on rank 3 (pod 0) up to the RecoverStrategy wait.
void ToRetryStrategyWait(Harness& h) {
  h.Subscribe();
  h.Hardware({Hw(3, 0, "80E01801", true)});
  h.StopComplete(0);
  ASSERT_EQ(h.state(), State::kWaitReportRecoverStrategy);
}

// Finishes A_FAULT_RETRY: the label goes to pause, then on once the job runs.
void FinishFaultRetry(Harness& h) {
  ASSERT_EQ(h.state(), State::kFaultRetry);
  h.Elapse(absl::Seconds(5));
}

TEST(StrategyPaths, RetryFailure405RepeatsFlushAndGlobalWithEscalatedFaults) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  ToRetryStrategyWait(h);
  h.Strategies({"retry", "recover", "dump", "exit"});
  h.Status(405, "retry");
  EXPECT_EQ(RecoverStatusAnnotation(h), "retry-failed");
  // Back to the flush wait; the retry faults move to the normal class.
  EXPECT_EQ(h.state(), State::kWaitFaultFlushFinished);
  EXPECT_EQ(h.job().caches.normal, (std::vector<FaultRank>{{3, 0}}));
  h.Elapse(absl::Seconds(11));
  ASSERT_EQ(h.state(), State::kWaitReportRecoverStrategy);
  const Signal global = h.Signals().back();
  EXPECT_THAT(global.actions, ElementsAre("on_global_rank", "fault_nodes_exit"));
  EXPECT_EQ(global.fault_ranks, Ranks(0, 7));
  EXPECT_THAT(global.node_rank_ids, ElementsAre(0));
  h.Strategies({"retry", "recover", "dump", "exit"});
  // Re-decision after retry: recover (not retry again).
  EXPECT_EQ(h.Signals().back().change_strategy, "recover");
}

TEST(StrategyPaths, RetryFailure406KillsPodsAndRedecidesWithoutRecover) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  ToRetryStrategyWait(h);
  h.Strategies({"retry", "recover", "dump", "exit"});
  h.Status(406, "retry");
  // A_KILL_POD: reset ConfigMap `fault` with the whole pod, then re-decide: dump.
  EXPECT_EQ(h.ResetOps().back(), "fault");
  EXPECT_EQ(h.All<WriteResetConfig>().back().ranks, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_FALSE(h.All<WriteResetConfig>().back().restart_fault_process);
  EXPECT_EQ(h.job().agent_strategies, (std::vector<std::string>{"retry", "dump", "exit"}));
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
  EXPECT_EQ(h.state(), State::kWaitReportDumpStatus);
}

TEST(StrategyPaths, RetryFailure499RemovesRecoverAndDumpSoExitFollows) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  ToRetryStrategyWait(h);
  h.Strategies({"retry", "recover", "dump", "exit"});
  h.Status(499, "retry");
  EXPECT_EQ(h.Signals().back().change_strategy, "exit");
  // Exit: straight to the schedule check.
  EXPECT_EQ(h.state(), State::kListenScheduleResult);
}

TEST(StrategyPaths, RetryTimeoutHandsTheJobToTheScheduler) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  ToRetryStrategyWait(h);
  h.Strategies({"retry", "recover", "dump", "exit"});
  h.Elapse(absl::Minutes(15));
  EXPECT_EQ(h.state(), State::kFaultRetry);
  const auto patches = h.All<PatchPodGroup>();
  EXPECT_EQ(patches.back().patch["metadata"]["labels"]["process-recover-enable"], "pause");
  FinishFaultRetry(h);
  EXPECT_EQ(h.All<PatchPodGroup>().back().patch["metadata"]["labels"]["process-recover-enable"],
            "on");
  EXPECT_EQ(h.state(), State::kInit);
  // The clean-up exit went out between the two label patches.
  EXPECT_EQ(h.Signals().back().extra_params, "dump_exit");
}

TEST(StrategyPaths, RecoverFailureFallsBackToDumpThenCleanUpExit) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  ToStrategyWait(h);
  h.Strategies({"retry", "recover", "dump", "exit"});
  EXPECT_EQ(h.Signals().back().change_strategy, "recover");
  h.Status(1, "recover");
  EXPECT_EQ(RecoverStatusAnnotation(h), "recover-failed");
  const Signal dump = h.Signals().back();
  EXPECT_EQ(dump.change_strategy, "dump");
  EXPECT_EQ(dump.fault_ranks, Ranks(8, 15));
  EXPECT_THAT(dump.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(h.state(), State::kWaitReportDumpStatus);
  h.Status(0, "dump");
  EXPECT_EQ(RecoverStatusAnnotation(h), "dump-success");
  const Signal exit = h.Signals().back();
  EXPECT_EQ(exit.change_strategy, "exit");
  EXPECT_EQ(exit.extra_params, "dump_exit");
  EXPECT_THAT(exit.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(h.state(), State::kListenScheduleResult);
  // ListenSchedule: the pod of rank 1 is replaced and the job runs.
  JobView replaced = MakeView(2, 8);
  replaced.pods[1].uid = "uid-p1-new";
  h.View(replaced);
  EXPECT_EQ(h.state(), State::kWaitRestartAllProcess);
  EXPECT_EQ(h.ResetOps().back(), "restartAllProcess");
  EXPECT_NE(h.reset_json().find("\"RetryTime\":1"), std::string::npos);
  h.Elapse(absl::Seconds(60));
  // FaultClear, then FaultRetry.
  EXPECT_EQ(h.state(), State::kFaultRetry);
  FinishFaultRetry(h);
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_THAT(h.SignalSummary(),
              ElementsAre("stopTrain", "globalFault", "changeStrategy:recover",
                          "changeStrategy:dump", "changeStrategy:exit", "changeStrategy:exit"));
}

TEST(StrategyPaths, RecoverWithoutDumpFallsBackToExit) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  ToStrategyWait(h);
  h.Strategies({"recover", "exit"});
  h.Status(1, "recover");
  EXPECT_EQ(h.Signals().back().change_strategy, "exit");
  EXPECT_EQ(h.Signals().back().extra_params, "");
  EXPECT_EQ(h.state(), State::kListenScheduleResult);
}

TEST(StrategyPaths, RecoverStatusTimeoutClearsThenFaultRetry) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  ToStrategyWait(h);
  h.Strategies({"recover", "exit"});
  JobView replaced = MakeView(2, 8);
  replaced.pods[1].uid = "uid-p1-new";
  h.View(replaced);
  h.Elapse(absl::Seconds(5));  // the watcher's first check: scheduled, reset CM cleared
  EXPECT_EQ(h.state(), State::kWaitReportProcessRecoverStatus);
  h.Elapse(absl::Minutes(15) - absl::Seconds(5));
  EXPECT_EQ(h.ResetOps().back(), "clear");
  EXPECT_EQ(h.state(), State::kFaultRetry);
}

TEST(StrategyPaths, ScheduleWatchTimeoutWithoutElasticGoesToFaultClear) {
  Harness h(MakeConfig("recover"), MakeView(2, 8, {}, {{"wait-reschedule-timeout", "60"}}));
  ToStrategyWait(h);
  h.Strategies({"recover", "exit"});
  h.Elapse(absl::Seconds(59));
  EXPECT_EQ(h.state(), State::kWaitReportProcessRecoverStatus);
  h.Elapse(absl::Seconds(1));
  EXPECT_EQ(h.state(), State::kFaultRetry);
}

TEST(StrategyPaths, ExitOnlyConfigurationGoesStraightToScheduleCheck) {
  Harness h(MakeConfig(""), MakeView(2, 8));
  ToStrategyWait(h);
  h.Strategies({"exit"});
  const Signal exit = h.Signals().back();
  EXPECT_EQ(exit.change_strategy, "exit");
  EXPECT_EQ(exit.fault_ranks, Ranks(8, 15));
  EXPECT_THAT(exit.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(h.job().strategy_history.back(), "exit");
  EXPECT_EQ(h.state(), State::kListenScheduleResult);
  // Nobody replaces the pod: after 20 s, the job still runs, so scheduleSuccess anyway.
  h.Elapse(absl::Seconds(20));
  EXPECT_EQ(h.state(), State::kWaitRestartAllProcess);
}

TEST(StrategyPaths, ListenScheduleTimeoutWhenTheJobIsNotRunning) {
  Harness h(MakeConfig(""), MakeView(2, 8));
  ToStrategyWait(h);
  JobView stopped = MakeView(2, 8);
  stopped.pod_group_running = false;
  h.View(stopped);
  h.Strategies({"exit"});
  h.Elapse(absl::Seconds(20));
  EXPECT_EQ(h.state(), State::kFaultRetry);
  // The job never runs again within 135 s: killMaster, then INIT.
  h.Elapse(absl::Seconds(135));
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, DumpOnlyConfigurationDumpsAtOnce) {
  Harness h(MakeConfig("dump"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  // dump-only + UnHealthy: dumpForFault, no flush write, saveAndExit with a new uuid.
  EXPECT_EQ(h.state(), State::kWaitReportDumpStatus);
  const Signal save = h.Signals().back();
  EXPECT_EQ(save.signal_type, "saveAndExit");
  EXPECT_THAT(save.actions, ElementsAre("save_and_exit"));
  EXPECT_TRUE(save.fault_ranks.empty());
  EXPECT_THAT(save.node_rank_ids, ElementsAre(1));
  EXPECT_FALSE(save.uuid.empty());
  EXPECT_EQ(h.ResetOps(), (std::vector<std::string>{"clear", "fault"}));
  EXPECT_EQ(h.job().agent_strategies, (std::vector<std::string>{"dump"}));
  h.Status(407, "dump");
  EXPECT_EQ(RecoverStatusAnnotation(h), "dump-failed");
  EXPECT_EQ(h.Signals().back().extra_params, "dump_exit");
  EXPECT_EQ(h.state(), State::kListenScheduleResult);
}

TEST(StrategyPaths, ProcessNotReadyKillsTheJob) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(404);
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
  EXPECT_EQ(h.Signals().back().uuid, h.Signals()[0].uuid);
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, OtherNonZeroStopCodeCountsAsStopped) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(1);
  EXPECT_EQ(h.state(), State::kWaitFaultFlushFinished);
}

TEST(StrategyPaths, MissingStatusIsCodeZero) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  ToStrategyWait(h);
  h.Strategies({"recover", "exit"});
  h.Status(std::nullopt, "recover");
  EXPECT_EQ(RecoverStatusAnnotation(h), "recover-success");
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, MissingStopCompleteStatusIsCodeZero) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(std::nullopt);
  EXPECT_EQ(h.state(), State::kWaitFaultFlushFinished);
}

TEST(StrategyPaths, StopCompleteTimeoutClearsAndHandsToScheduler) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.Elapse(absl::Minutes(15));
  EXPECT_EQ(h.state(), State::kFaultRetry);
  EXPECT_EQ(h.ResetOps().back(), "clear");
}

TEST(StrategyPaths, FlushWriteFailureKillsTheJob) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.writes_ok = false;
  h.ProcessFault({{10, 1}});
  EXPECT_THAT(h.SignalSummary(), ElementsAre("killMaster"));
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, StopSendFailureClearsThenFaultRetry) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.signals_ok = false;
  h.ProcessFault({{10, 1}});
  EXPECT_EQ(h.state(), State::kFaultRetry);
}

TEST(StrategyPaths, FaultRetryLabelPatchFailureKillsTheJob) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.pod_group_patches_ok = false;
  h.ProcessFault({{10, 1}});
  h.Elapse(absl::Minutes(15));  // stop report never comes
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, KillMasterWithoutWriteResultFinishesAfter60s) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.ack_signals = false;
  h.StopComplete(404);
  EXPECT_EQ(h.state(), State::kNotifyKillJob);
  h.Elapse(absl::Seconds(60));
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, RecoverInPlaceForSoftwareFaultOnOnePod) {
  Harness h(MakeConfig("recover-in-place,recover"),
            MakeView(2, 8, {{"process-recover-enable", "on"}},
                     {{"recover-strategy", "recover-in-place, recover"}}));
  ToStrategyWait(h);
  EXPECT_TRUE(h.job().restart_fault_process);
  // In-place pods keep their ranks unexpanded; no pod must exit.
  const Signal global = h.Signals()[1];
  EXPECT_EQ(global.fault_ranks, (std::vector<FaultRank>{{10, 1}}));
  EXPECT_TRUE(global.node_rank_ids.empty());
  EXPECT_TRUE(h.All<WriteResetConfig>().back().restart_fault_process);
  h.Strategies({"recover", "dump", "exit"});
  const Signal decided = h.Signals().back();
  EXPECT_EQ(decided.change_strategy, "recover");
  EXPECT_EQ(decided.extra_params, "recover-in-place");
  EXPECT_THAT(decided.actions, ElementsAre("change_strategy", "fault_nodes_restart"));
  EXPECT_THAT(decided.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(h.All<WriteResetConfig>().back().op, ResetOperation::kFault);
  EXPECT_TRUE(h.All<WriteResetConfig>().back().restart_fault_process);
  EXPECT_EQ(h.state(), State::kWaitReportProcessRecoverStatus);
  // Scheduling succeeds at once (no must-exit pod); the ConfigMap is cleared 5 s later.
  h.Elapse(absl::Seconds(5));
  EXPECT_EQ(h.job().phase, Phase::kInPlaceClearDelay);
  h.Elapse(absl::Seconds(5));
  EXPECT_EQ(h.ResetOps().back(), "clear");
  h.Status(0, "recover");
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(StrategyPaths, InPlaceFallsBackToWholePodExitWhenAnotherStrategyIsChosen) {
  Harness h(MakeConfig("recover-in-place,dump"),
            MakeView(2, 8, {{"process-recover-enable", "on"}},
                     {{"recover-strategy", "recover-in-place,dump"}}));
  ToStrategyWait(h);
  // The agent does not offer recover: dump, and every pod must exit.
  h.Strategies({"dump", "exit"});
  const Signal dump = h.Signals().back();
  EXPECT_EQ(dump.change_strategy, "dump");
  EXPECT_THAT(dump.actions, ElementsAre("change_strategy", "fault_nodes_exit"));
  EXPECT_THAT(dump.node_rank_ids, ElementsAre(1));
  EXPECT_FALSE(h.job().restart_fault_process);
  ASSERT_EQ(h.All<ReportNotRetryable>().size(), 1u);
  EXPECT_EQ(h.All<ReportNotRetryable>()[0].pod_ranks, (std::vector<int64_t>{1}));
}

TEST(StrategyPaths, ElasticScaleInThenScaleOut) {
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  ToStrategyWait(h);
  h.Strategies({"downgrade", "dump", "exit"});
  const Signal downgrade = h.Signals().back();
  EXPECT_EQ(downgrade.change_strategy, "downgrade");
  EXPECT_EQ(downgrade.extra_params, "{\"scale-in-strategy\": \"DP\"}");
  EXPECT_EQ(downgrade.fault_ranks, Ranks(8, 15));
  EXPECT_THAT(downgrade.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(h.state(), State::kWaitReportScaleInIsolateRanks);
  // MindIO answers 201 with the ranks to isolate: pod 1 is already exiting, pod 2 is new.
  h.Status(201, "downgrade", {8, 9, 16, 17});
  const Signal exit = h.Signals().back();
  EXPECT_EQ(exit.signal_type, "faultNodesExit");
  EXPECT_THAT(exit.actions, ElementsAre("fault_nodes_exit"));
  EXPECT_THAT(exit.node_rank_ids, ElementsAre(2));
  EXPECT_EQ(h.job().fault_pods.count(2), 1u);
  EXPECT_EQ(h.state(), State::kWaitReportScaleInStatus);
  h.Status(0, "downgrade");
  EXPECT_EQ(h.state(), State::kScaleRunning);
  // A replacement pod for rank 1 with AscendReal, PodGroup running: upgrade.
  JobView replaced = MakeView(3, 8);
  replaced.pods[1].uid = "uid-p1-new";
  h.View(replaced);
  const Signal upgrade = h.Signals().back();
  EXPECT_EQ(upgrade.change_strategy, "upgrade");
  EXPECT_EQ(upgrade.extra_params, "{\"scale-out-strategy\": \"DP\"}");
  EXPECT_EQ(h.state(), State::kWaitReportScaleOutStatus);
  h.Status(0, "upgrade");
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_THAT(h.SignalSummary(), ElementsAre("stopTrain", "globalFault", "changeStrategy:downgrade",
                                             "faultNodesExit", "changeStrategy:upgrade"));
}

TEST(StrategyPaths, ScaleInNeverChosenWhilePodZeroIsFaulty) {
  Harness h(MakeConfig("elastic-training,dump"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{2, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"downgrade", "dump", "exit"});
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
}

TEST(StrategyPaths, ScaleInFailureFallsBackToDump) {
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  ToStrategyWait(h);
  h.Strategies({"downgrade", "dump", "exit"});
  h.Status(201, "downgrade", {16});
  h.Status(1, "downgrade");
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
  EXPECT_EQ(h.state(), State::kWaitReportDumpStatus);
}

TEST(StrategyPaths, ScaleInZeroBeforeIsolateRanksIsTreatedAsFailure) {
  // Quirk 6: the reference stalls; we re-decide.
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  ToStrategyWait(h);
  h.Strategies({"downgrade", "dump", "exit"});
  h.Status(0, "downgrade");
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
  EXPECT_EQ(h.Notes("scale_in_order").size(), 1u);
}

TEST(StrategyPaths, IsolateRanksTimeoutRedecidesAsAFirstDecision) {
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  ToStrategyWait(h);
  h.Strategies({"downgrade", "dump", "exit"});
  h.Elapse(absl::Minutes(15));
  // No RecoverStatus in the cycle: the first decision again, downgrade once more (§9.5).
  EXPECT_EQ(h.Signals().back().change_strategy, "downgrade");
  EXPECT_EQ(h.state(), State::kWaitReportScaleInIsolateRanks);
}

TEST(StrategyPaths, ScheduleWatchFailureDuringRecoverScalesIn) {
  Harness h(MakeConfig("recover,elastic-training"),
            MakeView(2, 8, {}, {{"wait-reschedule-timeout", "30"}}));
  ToStrategyWait(h);
  h.Strategies({"recover", "downgrade", "exit"});
  EXPECT_EQ(h.Signals().back().change_strategy, "recover");
  h.Elapse(absl::Seconds(30));
  EXPECT_EQ(h.Signals().back().change_strategy, "downgrade");
  EXPECT_EQ(h.state(), State::kWaitReportScaleInIsolateRanks);
}

TEST(StrategyPaths, ScaleInWithReschedulingWaitsForResourcesFirst) {
  Harness h(MakeConfig("elastic-training,dump", {{"pod-rescheduling", "on"}}), MakeView(3, 8));
  ToStrategyWait(h);
  h.Strategies({"downgrade", "dump", "exit"});
  // Rescheduling is configured: wait 20 s for a replacement before scaling in.
  EXPECT_EQ(h.job().phase, Phase::kResourceWait);
  h.Elapse(absl::Seconds(20));
  EXPECT_EQ(h.Signals().back().change_strategy, "downgrade");
}

TEST(StrategyPaths, ScaleInSkippedWhenAReplacementArrives) {
  Harness h(MakeConfig("elastic-training,dump", {{"pod-rescheduling", "on"}}), MakeView(3, 8));
  ToStrategyWait(h);
  h.Strategies({"downgrade", "dump", "exit"});
  JobView replaced = MakeView(3, 8);
  replaced.pods[1].uid = "uid-p1-new";
  h.View(replaced);
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
}

TEST(StrategyPaths, RetryChosenButNotReportedKeepsTheFaultsForExit) {
  // Quirk 15, fixed: the faults move to the normal class instead of being discarded.
  Harness h(MakeConfig("retry"), MakeView(2, 8));
  ToRetryStrategyWait(h);
  h.Strategies({"exit"});
  const Signal exit = h.Signals().back();
  EXPECT_EQ(exit.change_strategy, "exit");
  EXPECT_EQ(exit.fault_ranks, Ranks(0, 7));
  EXPECT_THAT(exit.node_rank_ids, ElementsAre(0));
}

}  // namespace strategy_paths_test
}  // namespace clusterd::recovery
