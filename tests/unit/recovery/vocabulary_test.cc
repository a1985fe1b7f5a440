// §5 wire strings, §7.1/§7.2 names, the §7.3 transition table, §6.4 send results.

#include "recovery/vocabulary.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/signal.h"
#include "recovery/states.h"
#include "recovery/transitions.h"

namespace clusterd::recovery {
namespace vocabulary_test {

TEST(Vocabulary, ActionsWithSpaces) {
  EXPECT_EQ(kActionPreExitProcess, "pre exit process");
  EXPECT_EQ(kActionHotSwitch, "hot switch");
  EXPECT_EQ(kActionStopSwitch, "stop switch");
  EXPECT_EQ(kActionNewPodRunning, "new pod running");
}

TEST(Vocabulary, ExtraParamsExactText) {
  EXPECT_EQ(kExtraScaleIn, R"({"scale-in-strategy": "DP"})");
  EXPECT_EQ(kExtraScaleOut, R"({"scale-out-strategy": "DP"})");
  EXPECT_EQ(kExtraRecoverInPlace, "recover-in-place");
  EXPECT_EQ(kExtraDumpExit, "dump_exit");
}

TEST(Vocabulary, SignalTypes) {
  const std::set<std::string_view> all = {
      kSignalKeepAlive,   kSignalStopTrain,       kSignalGlobalFault,       kSignalChangeStrategy,
      kSignalSaveAndExit, kSignalKillMaster,      kSignalFaultNodesExit,    kSignalPreExitProcess,
      kSignalHotSwitch,   kSignalPauseStartAgent, kSignalContinueStartAgent};
  EXPECT_EQ(all, (std::set<std::string_view>{"keep-alive", "stopTrain", "globalFault",
                                             "changeStrategy", "saveAndExit", "killMaster",
                                             "faultNodesExit", "preExitProcess", "hot-switch",
                                             "pauseStartAgent", "continueStartAgent"}));
}

TEST(Vocabulary, StatusCodes) {
  EXPECT_EQ(kCodeUnRegistry, 400);
  EXPECT_EQ(kCodeJobNotExist, 402);
  EXPECT_EQ(kCodeProcessRecoverEnableOff, 403);
  EXPECT_EQ(kCodeUnInit, 408);
  EXPECT_EQ(kCodeOmIsRunning, 411);
  EXPECT_EQ(kCodeOmParamInvalid, 413);
  EXPECT_EQ(kCodeOutOfMaxServeJobs, 500);
  EXPECT_EQ(kCodeOperatePodGroupError, 502);
  EXPECT_EQ(kCodeServerInnerError, 599);
  EXPECT_EQ(kCodeExitIsolateRanks, 201);
  EXPECT_EQ(kCodeRecoverableRetryError, 405);
  EXPECT_EQ(kCodeUnRecoverableRetryError, 406);
}

TEST(States, ExactNamesOfSection71) {
  const std::vector<std::string_view> expected = {"INIT",
                                                  "NotifyWaitFaultFlushingState",
                                                  "NotifyStopTrainState",
                                                  "WaitReportStopCompleteState",
                                                  "WaitFaultFlushFinishedState",
                                                  "NotifyGlobalFaultState",
                                                  "WaitReportRecoverStrategyState",
                                                  "NotifyDecidedStrategyState",
                                                  "WaitReportStepRetryStatusState",
                                                  "WaitReportProcessRecoverStatusState",
                                                  "WaitReportDumpStatusState",
                                                  "FaultClearState",
                                                  "FaultRetryState",
                                                  "CheckRecoverResultState",
                                                  "ListenScheduleResultState",
                                                  "NotifyRestartAllProcessState",
                                                  "WaitRestartAllProcessState",
                                                  "NotifyKillJobState",
                                                  "KillPodForUnrecoverableRetryState",
                                                  "NotifyDumpState",
                                                  "WaitContinueTrainState",
                                                  "NotifySwitchNicState",
                                                  "NotifyStressTestState",
                                                  "WaitSwitchNicFinishedState",
                                                  "WaitStressTestFinishedState",
                                                  "NotifyPauseTrainState",
                                                  "WaitReportPauseCompleteState",
                                                  "NotifyContinueTrainState",
                                                  "NotifyScaleInStrategyState",
                                                  "WaitReportScaleInIsolateRanksState",
                                                  "CheckReportScaleInIsolateRanksState",
                                                  "WaitReportScaleInStatusState",
                                                  "WaitReportScaleOutStatusState",
                                                  "ScaleRunningState",
                                                  "notifyPrepareHotSwitchState",
                                                  "WaitNewPodState",
                                                  "WaitNotifyPodFailedResultState",
                                                  "WaitNotifyPodRunningResultState",
                                                  "WaitReportPauseResultState",
                                                  "WaitOldPodDeletedState",
                                                  "WaitNotifyRestartTrainResultState",
                                                  "NotifyStopJobState",
                                                  "WaitReportRestartTrainResultState"};
  ASSERT_EQ(expected.size(), static_cast<size_t>(kStateCount));
  for (int i = 0; i < kStateCount; ++i) {
    EXPECT_EQ(StateName(static_cast<State>(i)), expected[i]);
    EXPECT_EQ(ParseState(expected[i]), static_cast<State>(i));
  }
  EXPECT_EQ(ParseState("WaitProcessRestartResultState"), std::nullopt);
}

TEST(States, EventNamesRoundTrip) {
  std::set<std::string_view> names;
  for (int i = 0; i < kMachineEventCount; ++i) {
    const auto e = static_cast<MachineEvent>(i);
    names.insert(MachineEventName(e));
    EXPECT_EQ(ParseMachineEvent(MachineEventName(e)), e);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kMachineEventCount));
  EXPECT_EQ(MachineEventName(MachineEvent::kNotifyContinueSuccess), "notifyContinueSuccessEvent");
  EXPECT_EQ(MachineEventName(MachineEvent::kRestartFaild), "RestartFaildEvent");
  EXPECT_EQ(MachineEventName(MachineEvent::kWaitHCCLRoutingConvergenceFail),
            "waitHCCLRoutingConvergenceFail");
  EXPECT_EQ(ParseMachineEvent("clearFinish"), std::nullopt);
}

// §7.3 rows as strings: the table in code is the table of the spec.
TEST(Transitions, MainFlowRowsOfSection73) {
  struct Row {
    const char* src;
    const char* event;
    const char* dst;
    const char* entry;
  };
  const std::vector<Row> rows = {
      {"INIT", "faultOccur", "NotifyWaitFaultFlushingState", "A_FLUSH"},
      {"NotifyWaitFaultFlushingState", "notifyFinish", "NotifyStopTrainState", "A_STOP"},
      {"NotifyWaitFaultFlushingState", "waitPlatStrategyTimeout", "FaultRetryState",
       "A_FAULT_RETRY"},
      {"NotifyWaitFaultFlushingState", "dumpForFault", "NotifyDumpState", "A_DUMP"},
      {"NotifyWaitFaultFlushingState", "notifyFail", "NotifyKillJobState", "A_KILL_JOB"},
      {"NotifyStopTrainState", "notifySuccess", "WaitReportStopCompleteState", "A_WAIT_STOP"},
      {"NotifyStopTrainState", "notifyFail", "FaultClearState", "A_CLEAR"},
      {"NotifyDumpState", "notifySuccess", "WaitReportDumpStatusState", "A_WAIT_STATUS(dump)"},
      {"WaitReportStopCompleteState", "receiveReport", "WaitFaultFlushFinishedState",
       "A_WAIT_FLUSH"},
      {"WaitReportStopCompleteState", "processNotReadyEvent", "NotifyKillJobState", "A_KILL_JOB"},
      {"WaitFaultFlushFinishedState", "flushFinished", "NotifyGlobalFaultState", "A_GLOBAL"},
      {"NotifyGlobalFaultState", "writeConfirmFaultOrWaitResultFaultTimeout", "FaultRetryState",
       "A_FAULT_RETRY"},
      {"WaitReportRecoverStrategyState", "receiveReport", "NotifyDecidedStrategyState", "A_DECIDE"},
      {"NotifyDecidedStrategyState", "notifyRecoverStrategySuccess",
       "WaitReportProcessRecoverStatusState", "A_WAIT_RECOVER"},
      {"NotifyDecidedStrategyState", "notifyExitStrategySuccess", "CheckRecoverResultState",
       "A_EXIT_DECIDED"},
      {"WaitReportStepRetryStatusState", "receiveTimeout", "FaultRetryState", "A_FAULT_RETRY"},
      {"WaitReportProcessRecoverStatusState", "clearFail", "FaultRetryState", "A_FAULT_RETRY"},
      {"CheckRecoverResultState", "recoverableRetryError", "WaitFaultFlushFinishedState",
       "A_WAIT_FLUSH"},
      {"CheckRecoverResultState", "unRecoverableRetryError", "KillPodForUnrecoverableRetryState",
       "A_KILL_POD"},
      {"ListenScheduleResultState", "scheduleSuccess", "NotifyRestartAllProcessState",
       "A_RESTART_ALL"},
      {"FaultClearState", "clearFail", "NotifyKillJobState", "A_KILL_JOB"},
      {"FaultRetryState", "scheduleTimeout", "NotifyKillJobState", "A_KILL_JOB"},
      {"NotifyKillJobState", "finish", "INIT", "A_FINISH"},
      {"WaitReportProcessRecoverStatusState", "needTryScaleStrategyInEvent",
       "NotifyScaleInStrategyState", "A_SCALE_IN"},
      {"CheckReportScaleInIsolateRanksState", "notifyFaultNodesExitSuccessEvent",
       "WaitReportScaleInStatusState", "A_WAIT_STATUS(no append)"},
      {"ScaleRunningState", "faultOccur", "NotifyStopTrainState", "A_STOP"},
      {"ScaleRunningState", "notifyFail", "ScaleRunningState", "A_SCALE_RUNNING"},
      {"INIT", "startSwitchNic", "NotifyPauseTrainState", "OM_PAUSE"},
      {"WaitSwitchNicFinishedState", "waitSwitchNicRecvFault", "NotifyStopTrainState", "A_STOP"},
      {"WaitStressTestFinishedState", "stressTestFail", "NotifyStopTrainState",
       "OM_STRESS_FAIL_STOP"},
      {"INIT", "BeginHotSwitchEvent", "notifyPrepareHotSwitchState", "HS_PREPARE"},
      {"WaitReportPauseResultState", "MigrationEvent", "WaitOldPodDeletedState",
       "HS_WAIT_OLD_POD_DELETED"},
      {"NotifyStopJobState", "notifyFail", "INIT", "HS_FAIL_CLEANUP"},
  };
  for (const Row& row : rows) {
    const Transition* t = FindTransition(*ParseState(row.src), *ParseMachineEvent(row.event));
    ASSERT_NE(t, nullptr) << row.src << " + " << row.event;
    EXPECT_EQ(StateName(t->dst), row.dst) << row.src << " + " << row.event;
    EXPECT_EQ(EntryName(t->entry), row.entry) << row.src << " + " << row.event;
  }
}

TEST(Transitions, EventsThatDoNotApplyHaveNoRow) {
  EXPECT_EQ(FindTransition(State::kWaitReportStopComplete, MachineEvent::kFaultOccur), nullptr);
  EXPECT_EQ(FindTransition(State::kCheckReportScaleInIsolateRanks, MachineEvent::kScaleInSuccess),
            nullptr);
  EXPECT_EQ(FindTransition(State::kInit, MachineEvent::kNotifySuccess), nullptr);
}

TEST(Transitions, NoDuplicateRows) {
  std::set<std::pair<int, int>> seen;
  for (const Transition& t : TransitionTable()) {
    EXPECT_TRUE(seen.insert({static_cast<int>(t.src), static_cast<int>(t.event)}).second)
        << StateName(t.src) << " + " << MachineEventName(t.event);
  }
}

TEST(SendResult, MappingOfSection64) {
  auto change = [](const std::string& s) { return ChangeStrategySignal("J", "u", s, {}, {}); };
  EXPECT_EQ(SendResultEvent(KeepAliveSignal("J", ""), true), std::nullopt);
  EXPECT_EQ(SendResultEvent(StartAgentSignal("J", "u", true), true), std::nullopt);
  EXPECT_EQ(SendResultEvent(PreExitSignal("J", "u", {}, {}), false), std::nullopt);
  EXPECT_EQ(SendResultEvent(CleanUpExitSignal("J", "u", {}), true), std::nullopt);
  EXPECT_EQ(SendResultEvent(KillMasterSignal("J", "u"), true), MachineEvent::kFinish);
  EXPECT_EQ(SendResultEvent(KillMasterSignal("J", "u"), false), MachineEvent::kFinish);
  EXPECT_EQ(SendResultEvent(StopSignal("J", "u", {}), false), MachineEvent::kNotifyFail);
  EXPECT_EQ(SendResultEvent(FaultNodesExitSignal("J", "u", {}), true),
            MachineEvent::kNotifyFaultNodesExitSuccess);
  EXPECT_EQ(SendResultEvent(StopSignal("J", "u", {}), true), MachineEvent::kNotifySuccess);
  EXPECT_EQ(SendResultEvent(change("retry"), true), MachineEvent::kNotifyRetryStrategySuccess);
  EXPECT_EQ(SendResultEvent(change("recover"), true), MachineEvent::kNotifyRecoverStrategySuccess);
  EXPECT_EQ(SendResultEvent(change("dump"), true), MachineEvent::kNotifyDumpStrategySuccess);
  EXPECT_EQ(SendResultEvent(change("exit"), true), MachineEvent::kNotifyExitStrategySuccess);
  EXPECT_EQ(SendResultEvent(change("continue"), true), MachineEvent::kNotifyContinueSuccess);
  EXPECT_EQ(SendResultEvent(change("downgrade"), true),
            MachineEvent::kNotifyScaleInStrategySuccess);
  EXPECT_EQ(SendResultEvent(change("upgrade"), true), MachineEvent::kNotifyScaleOutStrategySuccess);
  EXPECT_EQ(SendResultEvent(change("migration"), true), MachineEvent::kNotifySuccess);
}

TEST(Signals, ShapesOfSection56) {
  const Signal pause = PauseSignal("J", "u", 900);
  EXPECT_EQ(pause.signal_type, "stopTrain");
  EXPECT_EQ(pause.actions, std::vector<std::string>{"pause_train"});
  EXPECT_EQ(pause.timeout, 900);
  const Signal pre = PreExitSignal("J", "u", {{5, 0}, {3, 2}}, {0});
  EXPECT_EQ(pre.fault_ranks, (std::vector<FaultRank>{{3, 1}, {5, 1}}));
  const Signal cleanup = CleanUpExitSignal("J", "u", {2, 1, 2});
  EXPECT_EQ(cleanup.change_strategy, "exit");
  EXPECT_EQ(cleanup.node_rank_ids, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(cleanup.fault_ranks.empty());
  const Signal global = GlobalFaultSignal("J", "u", {}, true, true, {});
  EXPECT_EQ(global.actions, (std::vector<std::string>{"on_global_rank", "fault_nodes_exit",
                                                      "fault_nodes_restart"}));
  EXPECT_EQ(StartAgentSignal("J", "u", false).actions,
            std::vector<std::string>{"continue_start_agent"});
}

}  // namespace vocabulary_test
}  // namespace clusterd::recovery
