#pragma once

#include <string_view>
#include <vector>

#include "recovery/states.h"

namespace clusterd::recovery {

// Entry actions (§7.4, §12-§14): what runs on entering the destination of a transition.
enum class Entry {
  kFlush,                // A_FLUSH
  kStop,                 // A_STOP
  kFaultRetry,           // A_FAULT_RETRY
  kDump,                 // A_DUMP
  kKillJob,              // A_KILL_JOB
  kWaitStop,             // A_WAIT_STOP
  kClear,                // A_CLEAR
  kWaitStatusRetry,      // A_WAIT_STATUS(retry)
  kWaitStatusDump,       // A_WAIT_STATUS(dump)
  kWaitStatusDowngrade,  // A_WAIT_STATUS(downgrade)
  kWaitStatusUpgrade,    // A_WAIT_STATUS(upgrade)
  kWaitStatusNoAppend,   // A_WAIT_STATUS(no append)
  kWaitFlush,            // A_WAIT_FLUSH
  kGlobal,               // A_GLOBAL
  kWaitStrategy,         // A_WAIT_STRATEGY
  kDecide,               // A_DECIDE
  kWaitRecover,          // A_WAIT_RECOVER
  kExitDecided,          // A_EXIT_DECIDED
  kCheck,                // A_CHECK
  kFinish,               // A_FINISH (reset)
  kKillPod,              // A_KILL_POD
  kListenSchedule,       // A_LISTEN_SCHEDULE
  kRestartAll,           // A_RESTART_ALL
  kWaitRestartAll,       // A_WAIT_RESTART_ALL
  kScaleIn,              // A_SCALE_IN
  kScaleRunning,         // A_SCALE_RUNNING
  // §12-§13 pause / NIC switch / stress test.
  kPause,
  kWaitPause,
  kNotifySwitchNic,
  kWaitSwitchNic,
  kContinue,
  kWaitContinue,
  kNotifyStressTest,
  kWaitStressTest,
  kStressFailStop,
  kOmFinish,
  // §14 hot switch.
  kHotPrepare,
  kHotWaitNewPod,
  kHotNotifyRunning,
  kHotNotifyStop,
  kHotWaitPauseResult,
  kHotStopJob,
  kHotWaitOldPodDeleted,
  kHotMigrate,
  kHotWaitRestartResult,
  kHotFailCleanup,
  kHotSuccessCleanup,
};
std::string_view EntryName(Entry entry);

struct Transition {
  State src;
  MachineEvent event;
  State dst;
  Entry entry;
};

// The transition table of §7.3, §12, §13 and §14, in recovery-protocol.md's order (the first matching row
// wins). Differences from the reference are marked in transitions.cc and listed in
// docs/compatibility-recovery.md.
const std::vector<Transition>& TransitionTable();

// The first row for (state, event), or nullptr: the event does not apply ("order mix").
const Transition* FindTransition(State state, MachineEvent event);

}  // namespace clusterd::recovery
