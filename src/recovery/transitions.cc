#include "recovery/transitions.h"

#include <array>

namespace clusterd::recovery {
namespace {

using E = MachineEvent;
using S = State;
using A = Entry;

constexpr std::array<std::string_view, 47> kEntryNames = {
    "A_FLUSH",
    "A_STOP",
    "A_FAULT_RETRY",
    "A_DUMP",
    "A_KILL_JOB",
    "A_WAIT_STOP",
    "A_CLEAR",
    "A_WAIT_STATUS(retry)",
    "A_WAIT_STATUS(dump)",
    "A_WAIT_STATUS(downgrade)",
    "A_WAIT_STATUS(upgrade)",
    "A_WAIT_STATUS(no append)",
    "A_WAIT_FLUSH",
    "A_GLOBAL",
    "A_WAIT_STRATEGY",
    "A_DECIDE",
    "A_WAIT_RECOVER",
    "A_EXIT_DECIDED",
    "A_CHECK",
    "A_FINISH",
    "A_KILL_POD",
    "A_LISTEN_SCHEDULE",
    "A_RESTART_ALL",
    "A_WAIT_RESTART_ALL",
    "A_SCALE_IN",
    "A_SCALE_RUNNING",
    "OM_PAUSE",
    "OM_WAIT_PAUSE",
    "OM_NOTIFY_SWITCH_NIC",
    "OM_WAIT_SWITCH_NIC",
    "OM_CONTINUE",
    "OM_WAIT_CONTINUE",
    "OM_NOTIFY_STRESS_TEST",
    "OM_WAIT_STRESS_TEST",
    "OM_STRESS_FAIL_STOP",
    "OM_FINISH",
    "HS_PREPARE",
    "HS_WAIT_NEW_POD",
    "HS_NOTIFY_RUNNING",
    "HS_NOTIFY_STOP",
    "HS_WAIT_PAUSE_RESULT",
    "HS_STOP_JOB",
    "HS_WAIT_OLD_POD_DELETED",
    "HS_MIGRATE",
    "HS_WAIT_RESTART_RESULT",
    "HS_FAIL_CLEANUP",
    "HS_SUCCESS_CLEANUP",
};

std::vector<Transition> BuildTable() {
  return {
      // §7.3 main recovery flow.
      {S::kInit, E::kFaultOccur, S::kNotifyWaitFaultFlushing, A::kFlush},
      {S::kNotifyWaitFaultFlushing, E::kNotifyFinish, S::kNotifyStopTrain, A::kStop},
      {S::kNotifyWaitFaultFlushing, E::kWaitPlatStrategyTimeout, S::kFaultRetry, A::kFaultRetry},
      {S::kNotifyWaitFaultFlushing, E::kDumpForFault, S::kNotifyDump, A::kDump},
      {S::kNotifyWaitFaultFlushing, E::kNotifyFail, S::kNotifyKillJob, A::kKillJob},
      {S::kNotifyStopTrain, E::kNotifySuccess, S::kWaitReportStopComplete, A::kWaitStop},
      {S::kNotifyStopTrain, E::kNotifyFail, S::kFaultClear, A::kClear},
      {S::kNotifyDump, E::kNotifySuccess, S::kWaitReportDumpStatus, A::kWaitStatusDump},
      {S::kNotifyDump, E::kNotifyFail, S::kFaultClear, A::kClear},
      {S::kWaitReportStopComplete, E::kReceiveReport, S::kWaitFaultFlushFinished, A::kWaitFlush},
      {S::kWaitReportStopComplete, E::kReceiveTimeout, S::kFaultClear, A::kClear},
      {S::kWaitReportStopComplete, E::kProcessNotReady, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitFaultFlushFinished, E::kFlushFinished, S::kNotifyGlobalFault, A::kGlobal},
      {S::kNotifyGlobalFault, E::kNotifySuccess, S::kWaitReportRecoverStrategy, A::kWaitStrategy},
      {S::kNotifyGlobalFault, E::kNotifyFail, S::kNotifyKillJob, A::kKillJob},
      {S::kNotifyGlobalFault, E::kWriteConfirmFaultOrWaitResultFaultTimeout, S::kFaultRetry,
       A::kFaultRetry},
      {S::kWaitReportRecoverStrategy, E::kReceiveReport, S::kNotifyDecidedStrategy, A::kDecide},
      {S::kWaitReportRecoverStrategy, E::kReceiveTimeout, S::kFaultClear, A::kClear},
      {S::kNotifyDecidedStrategy, E::kWaitRankTableTimeout, S::kFaultClear, A::kClear},
      {S::kNotifyDecidedStrategy, E::kNotifyFail, S::kFaultClear, A::kClear},
      {S::kNotifyDecidedStrategy, E::kNotifyRetryStrategySuccess, S::kWaitReportStepRetryStatus,
       A::kWaitStatusRetry},
      {S::kNotifyDecidedStrategy, E::kNotifyRecoverStrategySuccess,
       S::kWaitReportProcessRecoverStatus, A::kWaitRecover},
      {S::kNotifyDecidedStrategy, E::kNotifyDumpStrategySuccess, S::kWaitReportDumpStatus,
       A::kWaitStatusDump},
      {S::kNotifyDecidedStrategy, E::kNotifyExitStrategySuccess, S::kCheckRecoverResult,
       A::kExitDecided},
      {S::kNotifyDecidedStrategy, E::kWaitHCCLRoutingConvergenceFail, S::kNotifyKillJob,
       A::kKillJob},
      {S::kWaitReportStepRetryStatus, E::kReceiveReport, S::kCheckRecoverResult, A::kCheck},
      {S::kWaitReportStepRetryStatus, E::kReceiveTimeout, S::kFaultRetry, A::kFaultRetry},
      {S::kWaitReportProcessRecoverStatus, E::kReceiveReport, S::kCheckRecoverResult, A::kCheck},
      {S::kWaitReportProcessRecoverStatus, E::kScheduleTimeout, S::kFaultClear, A::kClear},
      {S::kWaitReportProcessRecoverStatus, E::kReceiveTimeout, S::kFaultClear, A::kClear},
      // Quirk 5: the reference runs A_CLEAR here and stalls; we run the fault-retry action.
      {S::kWaitReportProcessRecoverStatus, E::kClearFail, S::kFaultRetry, A::kFaultRetry},
      {S::kWaitReportDumpStatus, E::kReceiveReport, S::kCheckRecoverResult, A::kCheck},
      {S::kWaitReportDumpStatus, E::kReceiveTimeout, S::kFaultClear, A::kClear},
      {S::kCheckRecoverResult, E::kRecoverSuccess, S::kInit, A::kFinish},
      {S::kCheckRecoverResult, E::kRecoverFail, S::kNotifyDecidedStrategy, A::kDecide},
      {S::kCheckRecoverResult, E::kRecoverableRetryError, S::kWaitFaultFlushFinished,
       A::kWaitFlush},
      {S::kCheckRecoverResult, E::kUnRecoverableRetryError, S::kKillPodForUnrecoverableRetry,
       A::kKillPod},
      {S::kCheckRecoverResult, E::kCheckFinish, S::kListenScheduleResult, A::kListenSchedule},
      {S::kKillPodForUnrecoverableRetry, E::kFinishKillPod, S::kNotifyDecidedStrategy, A::kDecide},
      {S::kListenScheduleResult, E::kScheduleTimeout, S::kFaultClear, A::kClear},
      {S::kListenScheduleResult, E::kScheduleSuccess, S::kNotifyRestartAllProcess, A::kRestartAll},
      {S::kNotifyRestartAllProcess, E::kNotifySuccess, S::kWaitRestartAllProcess,
       A::kWaitRestartAll},
      {S::kNotifyRestartAllProcess, E::kNotifyFail, S::kFaultClear, A::kClear},
      {S::kWaitRestartAllProcess, E::kRestartFinish, S::kFaultClear, A::kClear},
      {S::kFaultClear, E::kClearSuccess, S::kFaultRetry, A::kFaultRetry},
      {S::kFaultClear, E::kClearFail, S::kNotifyKillJob, A::kKillJob},
      {S::kFaultRetry, E::kFinish, S::kInit, A::kFinish},
      {S::kFaultRetry, E::kChangeSwitchPauseError, S::kNotifyKillJob, A::kKillJob},
      {S::kFaultRetry, E::kChangeSwitchEnableError, S::kNotifyKillJob, A::kKillJob},
      {S::kFaultRetry, E::kScheduleTimeout, S::kNotifyKillJob, A::kKillJob},
      {S::kNotifyKillJob, E::kFinish, S::kInit, A::kFinish},

      // §7.3 DP scale-in / scale-out.
      {S::kNotifyDecidedStrategy, E::kNotifyScaleInStrategySuccess,
       S::kWaitReportScaleInIsolateRanks, A::kWaitStatusDowngrade},
      {S::kWaitReportProcessRecoverStatus, E::kNeedTryScaleStrategyIn, S::kNotifyScaleInStrategy,
       A::kScaleIn},
      {S::kNotifyScaleInStrategy, E::kNotifyScaleInStrategySuccess,
       S::kWaitReportScaleInIsolateRanks, A::kWaitStatusDowngrade},
      {S::kNotifyScaleInStrategy, E::kNotifyFail, S::kFaultClear, A::kClear},
      {S::kWaitReportScaleInIsolateRanks, E::kReceiveReport, S::kCheckReportScaleInIsolateRanks,
       A::kCheck},
      {S::kWaitReportScaleInIsolateRanks, E::kReceiveTimeout, S::kNotifyDecidedStrategy,
       A::kDecide},
      {S::kCheckReportScaleInIsolateRanks, E::kNotifyFail, S::kNotifyDecidedStrategy, A::kDecide},
      {S::kCheckReportScaleInIsolateRanks, E::kRecoverFail, S::kNotifyDecidedStrategy, A::kDecide},
      {S::kCheckReportScaleInIsolateRanks, E::kNotifyFaultNodesExitSuccess,
       S::kWaitReportScaleInStatus, A::kWaitStatusNoAppend},
      {S::kWaitReportScaleInStatus, E::kReceiveReport, S::kCheckRecoverResult, A::kCheck},
      {S::kWaitReportScaleInStatus, E::kReceiveTimeout, S::kFaultClear, A::kClear},
      {S::kCheckRecoverResult, E::kScaleInSuccess, S::kScaleRunning, A::kScaleRunning},
      {S::kCheckRecoverResult, E::kScaleOutSuccess, S::kInit, A::kFinish},
      {S::kScaleRunning, E::kNotifyScaleOutStrategySuccess, S::kWaitReportScaleOutStatus,
       A::kWaitStatusUpgrade},
      {S::kWaitReportScaleOutStatus, E::kReceiveReport, S::kCheckRecoverResult, A::kCheck},
      {S::kWaitReportScaleOutStatus, E::kReceiveTimeout, S::kFaultClear, A::kClear},
      {S::kScaleRunning, E::kFaultOccur, S::kNotifyStopTrain, A::kStop},
      {S::kScaleRunning, E::kFinish, S::kInit, A::kFinish},
      {S::kScaleRunning, E::kNotifyFail, S::kScaleRunning, A::kScaleRunning},

      // §12 NIC switch and the pause / continue steps shared with §13.
      {S::kInit, E::kStartSwitchNic, S::kNotifyPauseTrain, A::kPause},
      {S::kInit, E::kStartStressTest, S::kNotifyPauseTrain, A::kPause},
      {S::kNotifyPauseTrain, E::kNotifySuccess, S::kWaitReportPauseComplete, A::kWaitPause},
      {S::kNotifyPauseTrain, E::kNotifyFail, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitReportPauseComplete, E::kReceiveTimeout, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitReportPauseComplete, E::kProcessPauseFail, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitReportPauseComplete, E::kSwitchNicRecvPause, S::kNotifySwitchNic,
       A::kNotifySwitchNic},
      {S::kWaitReportPauseComplete, E::kStressTestRecvPause, S::kNotifyStressTest,
       A::kNotifyStressTest},
      {S::kNotifySwitchNic, E::kNotifySuccess, S::kWaitSwitchNicFinished, A::kWaitSwitchNic},
      {S::kNotifySwitchNic, E::kNotifyFail, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitSwitchNicFinished, E::kReceiveReport, S::kNotifyContinueTrain, A::kContinue},
      {S::kWaitSwitchNicFinished, E::kSwitchNicFail, S::kNotifyStopTrain, A::kStop},
      {S::kWaitSwitchNicFinished, E::kWaitSwitchNicRecvFault, S::kNotifyStopTrain, A::kStop},
      {S::kWaitSwitchNicFinished, E::kReceiveTimeout, S::kNotifyStopTrain, A::kStop},
      {S::kNotifyContinueTrain, E::kNotifyContinueSuccess, S::kWaitContinueTrain, A::kWaitContinue},
      {S::kNotifyContinueTrain, E::kNotifyFail, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitContinueTrain, E::kReceiveTimeout, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitContinueTrain, E::kContinueTrainFail, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitContinueTrain, E::kSwitchNicRecvContinue, S::kInit, A::kOmFinish},
      {S::kWaitContinueTrain, E::kStressTestRecvContinue, S::kInit, A::kOmFinish},

      // §13 stress test.
      {S::kNotifyStressTest, E::kNotifySuccess, S::kWaitStressTestFinished, A::kWaitStressTest},
      {S::kNotifyStressTest, E::kNotifyFail, S::kNotifyKillJob, A::kKillJob},
      {S::kWaitStressTestFinished, E::kReceiveReport, S::kNotifyContinueTrain, A::kContinue},
      {S::kWaitStressTestFinished, E::kReceiveTimeout, S::kNotifyStopTrain, A::kStop},
      {S::kWaitStressTestFinished, E::kStressTestFail, S::kNotifyStopTrain, A::kStressFailStop},

      // §14 hot switch.
      {S::kInit, E::kBeginHotSwitch, S::kNotifyPrepareHotSwitch, A::kHotPrepare},
      {S::kNotifyPrepareHotSwitch, E::kNotifySuccess, S::kWaitNewPod, A::kHotWaitNewPod},
      {S::kNotifyPrepareHotSwitch, E::kNotifyFail, S::kInit, A::kHotFailCleanup},
      {S::kWaitNewPod, E::kNewPodRunning, S::kWaitNotifyPodRunningResult, A::kHotNotifyRunning},
      {S::kWaitNewPod, E::kNewPodTimeout, S::kWaitNotifyPodFailedResult, A::kHotNotifyStop},
      {S::kWaitNotifyPodFailedResult, E::kNotifySuccess, S::kInit, A::kHotFailCleanup},
      {S::kWaitNotifyPodFailedResult, E::kNotifyFail, S::kInit, A::kHotFailCleanup},
      {S::kWaitNotifyPodRunningResult, E::kNotifySuccess, S::kWaitReportPauseResult,
       A::kHotWaitPauseResult},
      {S::kWaitNotifyPodRunningResult, E::kNotifyFail, S::kWaitReportPauseResult,
       A::kHotWaitPauseResult},
      {S::kWaitReportPauseResult, E::kExit, S::kNotifyStopJob, A::kHotStopJob},
      {S::kWaitReportPauseResult, E::kReceiveTimeout, S::kNotifyStopJob, A::kHotStopJob},
      {S::kWaitReportPauseResult, E::kMigration, S::kWaitOldPodDeleted, A::kHotWaitOldPodDeleted},
      {S::kWaitOldPodDeleted, E::kOldPodDeleted, S::kWaitNotifyRestartTrainResult, A::kHotMigrate},
      // Quirk 19: the reference has no timeout here; ours leads to the stop-job path.
      {S::kWaitOldPodDeleted, E::kReceiveTimeout, S::kNotifyStopJob, A::kHotStopJob},
      {S::kWaitNotifyRestartTrainResult, E::kNotifySuccess, S::kWaitReportRestartTrainResult,
       A::kHotWaitRestartResult},
      {S::kWaitNotifyRestartTrainResult, E::kNotifyFail, S::kNotifyStopJob, A::kHotStopJob},
      {S::kWaitReportRestartTrainResult, E::kRestartSuccess, S::kInit, A::kHotSuccessCleanup},
      {S::kWaitReportRestartTrainResult, E::kRestartFaild, S::kNotifyStopJob, A::kHotStopJob},
      {S::kWaitReportRestartTrainResult, E::kReceiveTimeout, S::kNotifyStopJob, A::kHotStopJob},
      {S::kNotifyStopJob, E::kNotifySuccess, S::kInit, A::kHotFailCleanup},
      {S::kNotifyStopJob, E::kNotifyFail, S::kInit, A::kHotFailCleanup},
  };
}

}  // namespace

std::string_view EntryName(Entry entry) { return kEntryNames[static_cast<int>(entry)]; }

const std::vector<Transition>& TransitionTable() {
  static const std::vector<Transition>* table = new std::vector<Transition>(BuildTable());
  return *table;
}

const Transition* FindTransition(State state, MachineEvent event) {
  for (const Transition& t : TransitionTable()) {
    if (t.src == state && t.event == event) return &t;
  }
  return nullptr;
}

}  // namespace clusterd::recovery
