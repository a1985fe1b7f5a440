#include "recovery/states.h"

#include <array>

namespace clusterd::recovery {
namespace {

constexpr std::array<std::string_view, kStateCount> kStateNames = {
    "INIT",
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
    "WaitReportRestartTrainResultState",
};

constexpr std::array<std::string_view, kMachineEventCount> kEventNames = {
    "faultOccur",
    "notifyFinish",
    "notifySuccess",
    "notifyFail",
    "notifyRetryStrategySuccess",
    "notifyRecoverStrategySuccess",
    "notifyDumpStrategySuccess",
    "notifyExitStrategySuccess",
    "notifyContinueSuccessEvent",
    "receiveReport",
    "receiveTimeout",
    "processNotReadyEvent",
    "flushFinished",
    "dumpForFault",
    "scheduleTimeout",
    "scheduleSuccess",
    "clearFail",
    "clearSuccess",
    "recoverSuccess",
    "recoverFail",
    "recoverableRetryError",
    "unRecoverableRetryError",
    "finishKillPod",
    "checkFinish",
    "restartFinish",
    "changeSwitchPauseError",
    "changeSwitchEnableError",
    "finish",
    "waitPlatStrategyTimeout",
    "writeConfirmFaultOrWaitResultFaultTimeout",
    "waitRankTableTimeout",
    "waitHCCLRoutingConvergenceFail",
    "processPauseFail",
    "continueTrainFail",
    "startSwitchNic",
    "waitSwitchNicRecvFault",
    "switchNicFail",
    "startStressTest",
    "stressTestRecvPause",
    "stressTestFail",
    "stressTestRecvContinue",
    "switchNicRecvPause",
    "switchNicRecvContinue",
    "notifyScaleInStrategySuccessEvent",
    "scaleInSuccessEvent",
    "scaleOutSuccessEvent",
    "needTryScaleStrategyInEvent",
    "notifyScaleOutStrategySuccessEvent",
    "notifyFaultNodesExitSuccessEvent",
    "BeginHotSwitchEvent",
    "NewPodTimeoutEvent",
    "NewPodRunningEvent",
    "MigrationEvent",
    "ExitEvent",
    "OldPodDeletedEvent",
    "RestartSuccessEvent",
    "RestartFaildEvent",
};

}  // namespace

std::string_view StateName(State state) { return kStateNames[static_cast<int>(state)]; }

std::optional<State> ParseState(std::string_view name) {
  for (int i = 0; i < kStateCount; ++i) {
    if (kStateNames[i] == name) return static_cast<State>(i);
  }
  return std::nullopt;
}

std::string_view MachineEventName(MachineEvent event) {
  return kEventNames[static_cast<int>(event)];
}

std::optional<MachineEvent> ParseMachineEvent(std::string_view name) {
  for (int i = 0; i < kMachineEventCount; ++i) {
    if (kEventNames[i] == name) return static_cast<MachineEvent>(i);
  }
  return std::nullopt;
}

}  // namespace clusterd::recovery
