#pragma once

// The states (§7.1) and internal events (§7.2) of the per-job recovery state machine, with their
// exact strings (they appear in logs, in the durable record and in `clusterctl get recovery`).

#include <optional>
#include <string_view>

namespace clusterd::recovery {

enum class State {
  kInit,                            // INIT
  kNotifyWaitFaultFlushing,         // NotifyWaitFaultFlushingState
  kNotifyStopTrain,                 // NotifyStopTrainState
  kWaitReportStopComplete,          // WaitReportStopCompleteState
  kWaitFaultFlushFinished,          // WaitFaultFlushFinishedState
  kNotifyGlobalFault,               // NotifyGlobalFaultState
  kWaitReportRecoverStrategy,       // WaitReportRecoverStrategyState
  kNotifyDecidedStrategy,           // NotifyDecidedStrategyState
  kWaitReportStepRetryStatus,       // WaitReportStepRetryStatusState
  kWaitReportProcessRecoverStatus,  // WaitReportProcessRecoverStatusState
  kWaitReportDumpStatus,            // WaitReportDumpStatusState
  kFaultClear,                      // FaultClearState
  kFaultRetry,                      // FaultRetryState
  kCheckRecoverResult,              // CheckRecoverResultState
  kListenScheduleResult,            // ListenScheduleResultState
  kNotifyRestartAllProcess,         // NotifyRestartAllProcessState
  kWaitRestartAllProcess,           // WaitRestartAllProcessState
  kNotifyKillJob,                   // NotifyKillJobState
  kKillPodForUnrecoverableRetry,    // KillPodForUnrecoverableRetryState
  kNotifyDump,                      // NotifyDumpState
  kWaitContinueTrain,               // WaitContinueTrainState
  kNotifySwitchNic,                 // NotifySwitchNicState
  kNotifyStressTest,                // NotifyStressTestState
  kWaitSwitchNicFinished,           // WaitSwitchNicFinishedState
  kWaitStressTestFinished,          // WaitStressTestFinishedState
  kNotifyPauseTrain,                // NotifyPauseTrainState
  kWaitReportPauseComplete,         // WaitReportPauseCompleteState
  kNotifyContinueTrain,             // NotifyContinueTrainState
  kNotifyScaleInStrategy,           // NotifyScaleInStrategyState
  kWaitReportScaleInIsolateRanks,   // WaitReportScaleInIsolateRanksState
  kCheckReportScaleInIsolateRanks,  // CheckReportScaleInIsolateRanksState
  kWaitReportScaleInStatus,         // WaitReportScaleInStatusState
  kWaitReportScaleOutStatus,        // WaitReportScaleOutStatusState
  kScaleRunning,                    // ScaleRunningState
  kNotifyPrepareHotSwitch,          // notifyPrepareHotSwitchState
  kWaitNewPod,                      // WaitNewPodState
  kWaitNotifyPodFailedResult,       // WaitNotifyPodFailedResultState
  kWaitNotifyPodRunningResult,      // WaitNotifyPodRunningResultState
  kWaitReportPauseResult,           // WaitReportPauseResultState
  kWaitOldPodDeleted,               // WaitOldPodDeletedState
  kWaitNotifyRestartTrainResult,    // WaitNotifyRestartTrainResultState
  kNotifyStopJob,                   // NotifyStopJobState
  kWaitReportRestartTrainResult,    // WaitReportRestartTrainResultState
};
inline constexpr int kStateCount = 43;

// The internal events of §7.2 (what the transition table is keyed by). Names drop the
// reference's `Event` suffix; MachineEventName gives the exact string.
enum class MachineEvent {
  kFaultOccur,                                 // faultOccur
  kNotifyFinish,                               // notifyFinish
  kNotifySuccess,                              // notifySuccess
  kNotifyFail,                                 // notifyFail
  kNotifyRetryStrategySuccess,                 // notifyRetryStrategySuccess
  kNotifyRecoverStrategySuccess,               // notifyRecoverStrategySuccess
  kNotifyDumpStrategySuccess,                  // notifyDumpStrategySuccess
  kNotifyExitStrategySuccess,                  // notifyExitStrategySuccess
  kNotifyContinueSuccess,                      // notifyContinueSuccessEvent
  kReceiveReport,                              // receiveReport
  kReceiveTimeout,                             // receiveTimeout
  kProcessNotReady,                            // processNotReadyEvent
  kFlushFinished,                              // flushFinished
  kDumpForFault,                               // dumpForFault
  kScheduleTimeout,                            // scheduleTimeout
  kScheduleSuccess,                            // scheduleSuccess
  kClearFail,                                  // clearFail
  kClearSuccess,                               // clearSuccess
  kRecoverSuccess,                             // recoverSuccess
  kRecoverFail,                                // recoverFail
  kRecoverableRetryError,                      // recoverableRetryError
  kUnRecoverableRetryError,                    // unRecoverableRetryError
  kFinishKillPod,                              // finishKillPod
  kCheckFinish,                                // checkFinish
  kRestartFinish,                              // restartFinish
  kChangeSwitchPauseError,                     // changeSwitchPauseError
  kChangeSwitchEnableError,                    // changeSwitchEnableError
  kFinish,                                     // finish
  kWaitPlatStrategyTimeout,                    // waitPlatStrategyTimeout
  kWriteConfirmFaultOrWaitResultFaultTimeout,  // writeConfirmFaultOrWaitResultFaultTimeout
  kWaitRankTableTimeout,                       // waitRankTableTimeout
  kWaitHCCLRoutingConvergenceFail,             // waitHCCLRoutingConvergenceFail
  kProcessPauseFail,                           // processPauseFail
  kContinueTrainFail,                          // continueTrainFail
  kStartSwitchNic,                             // startSwitchNic
  kWaitSwitchNicRecvFault,                     // waitSwitchNicRecvFault
  kSwitchNicFail,                              // switchNicFail
  kStartStressTest,                            // startStressTest
  kStressTestRecvPause,                        // stressTestRecvPause
  kStressTestFail,                             // stressTestFail
  kStressTestRecvContinue,                     // stressTestRecvContinue
  kSwitchNicRecvPause,                         // switchNicRecvPause
  kSwitchNicRecvContinue,                      // switchNicRecvContinue
  kNotifyScaleInStrategySuccess,               // notifyScaleInStrategySuccessEvent
  kScaleInSuccess,                             // scaleInSuccessEvent
  kScaleOutSuccess,                            // scaleOutSuccessEvent
  kNeedTryScaleStrategyIn,                     // needTryScaleStrategyInEvent
  kNotifyScaleOutStrategySuccess,              // notifyScaleOutStrategySuccessEvent
  kNotifyFaultNodesExitSuccess,                // notifyFaultNodesExitSuccessEvent
  kBeginHotSwitch,                             // BeginHotSwitchEvent
  kNewPodTimeout,                              // NewPodTimeoutEvent
  kNewPodRunning,                              // NewPodRunningEvent
  kMigration,                                  // MigrationEvent
  kExit,                                       // ExitEvent
  kOldPodDeleted,                              // OldPodDeletedEvent
  kRestartSuccess,                             // RestartSuccessEvent
  kRestartFaild,                               // RestartFaildEvent
};
inline constexpr int kMachineEventCount = 57;

std::string_view StateName(State state);
std::optional<State> ParseState(std::string_view name);
std::string_view MachineEventName(MachineEvent event);
std::optional<MachineEvent> ParseMachineEvent(std::string_view name);

}  // namespace clusterd::recovery
