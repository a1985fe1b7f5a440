#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "recovery/fault_rank.h"
#include "recovery/job_config.h"
#include "recovery/job_view.h"
#include "recovery/reports.h"
#include "recovery/reset_config.h"
#include "recovery/signal.h"
#include "recovery/states.h"

namespace clusterd::recovery {

// What the machine is waiting for inside the current state (the continuation of an entry action
// that the reference runs as blocking code).
enum class Phase {
  kNone,
  kAwaitSignal,        // a signal (or OM push) was emitted; SignalWritten decides
  kAwaitWrite,         // a store write was emitted; WriteDone decides (see WritePurpose)
  kWaitReport,         // waiting on the state's mailbox (§7.4), 15 min
  kWaitPlatStrategy,   // A_FLUSH platform mode: ProcessRecoverStrategy, 300 s
  kFlushDelay,         // A_WAIT_FLUSH 1 s
  kRaBlockWait,        // A_GLOBAL: PodGroup Running, up to 12 s
  kForceRelease,       // A_GLOBAL: 10 s
  kInPlaceWait,        // A_GLOBAL: in-place faults disappear, 15 s
  kPlatResultWait,     // A_GLOBAL platform: ProcessResultFault key exists, 300 s
  kResourceWait,       // A_DECIDE: scale-in resource wait
  kRankTableWait,      // A_DECIDE platform recover: RankTableReady, 300 s
  kHcclDelay,          // A_DECIDE: 3 s route convergence before retry
  kRecoverWait,        // A_WAIT_RECOVER: RecoverStatus or schedule result
  kInPlaceClearDelay,  // A_WAIT_RECOVER: 5 s before clearing when restarting in place
  kListenSchedule,     // A_LISTEN_SCHEDULE: 4 x 5 s
  kRestartAllDelay,    // A_WAIT_RESTART_ALL: 60 s
  kFaultRetryRunning,  // A_FAULT_RETRY: job running, 27 x 5 s
  kScaleRunning,       // A_SCALE_RUNNING: watching for a replaced pod
  kScaleOutBackoff,    // A_SCALE_RUNNING after a failed upgrade send: 5 s
  kNewPodWait,         // hot switch: backup pod Running, 60 s
  kOldPodDeleteWait,   // hot switch: old pod deleted (15 min, our addition: quirk 19)
  kStressWait,         // stress test: result, 15 min
};
std::string_view PhaseName(Phase phase);
std::optional<Phase> ParsePhase(std::string_view name);

// Why a store write was emitted (decides what WriteDone raises).
enum class WritePurpose {
  kNone,
  kFlushNotify,       // A_FLUSH notifyFaultFlushing -> notifyFinish / notifyFail
  kConfirmFault,      // A_GLOBAL platform: ProcessConfirmFault annotation
  kGlobalReset,       // A_GLOBAL: reset ConfigMap `fault` -> send / notifyFail
  kDecideInPlace,     // A_DECIDE recover-in-place: reset ConfigMap `fault` -> send / notifyFail
  kRecoverClear,      // A_WAIT_RECOVER: clear after scheduling -> keep waiting / clearFail
  kKillPod,           // A_KILL_POD -> finishKillPod / reset
  kRestartAll,        // A_RESTART_ALL -> notifySuccess / notifyFail
  kClear,             // A_CLEAR -> clearSuccess / clearFail
  kDump,              // A_DUMP -> send saveAndExit / reset
  kFaultRetryPause,   // A_FAULT_RETRY label pause -> exit + wait / changeSwitchPauseError
  kFaultRetryResume,  // A_FAULT_RETRY label on -> finish / changeSwitchEnableError
};
std::string_view WritePurposeName(WritePurpose purpose);
std::optional<WritePurpose> ParseWritePurpose(std::string_view name);

// Timers the machine asks the executor to arm. A TimerFired whose deadline is not the one
// recorded for its kind is stale and ignored, so timers never need cancelling.
enum class TimerKind {
  kStep,           // the single timer of the current phase (report wait, delays, polls)
  kStepDeadline,   // a second deadline of the current phase (fault-retry first check)
  kScheduleWatch,  // background schedule watcher deadline (§7.4)
  kScheduleCheck,  // the watcher's first check, 5 s after it starts
  kPreExitGrace,   // §8.1 step 8: up to 10 s while in INIT
  kOriginRefresh,  // §6.1: adopt a new pod as original 10 s after it appears
};
std::string_view TimerKindName(TimerKind kind);
std::optional<TimerKind> ParseTimerKind(std::string_view name);

// Per-pod recover-in-place bookkeeping (§9.8).
struct InPlacePod {
  bool possible = false;  // "restart in place possible"
  bool software = true;   // every fault of the pod came from ReportProcessFault
  bool operator==(const InPlacePod&) const = default;
};

enum class OmKind { kNone, kSwitchNic, kStressTest };

// A NIC switch (§12): ranks and ops aligned, node by node.
struct NicSwitchParams {
  std::vector<int64_t> ranks;
  std::vector<bool> ops;
  bool operator==(const NicSwitchParams&) const = default;
};

// A stress test (§13): node -> global rank -> ops.
using StressParams = std::map<std::string, std::map<int64_t, std::vector<int64_t>>>;

struct HotSwitchInfo {
  int64_t pod_rank = -1;
  std::string pod_uid;
  std::string pod_name;
  std::string backup_uid;
  std::string backup_name;
  std::vector<FaultRank> faults;  // the faulty pod's ranks, expanded, type 1
  bool operator==(const HotSwitchInfo&) const = default;
};

// A fault of a hardware delivery waiting for the pre-exit grace (§8.1 step 8).
struct PendingPreExit {
  std::vector<FaultRank> faults;
  std::map<int64_t, std::string> pods;  // pod rank -> UID reported with the fault
  bool operator==(const PendingPreExit&) const = default;
};

// The store write the machine is waiting for, kept so that a restarted executor can issue it
// again (ResumeCommands).
struct PendingWrite {
  bool pod_group = false;  // a PodGroup merge patch, else a reset ConfigMap write
  ResetOperation op = ResetOperation::kClear;
  std::vector<int64_t> ranks;
  bool restart_fault_process = false;
  int attempts = 3;
  nlohmann::ordered_json patch;
  bool operator==(const PendingWrite&) const = default;
};

// One line of the cycle history shown by `clusterctl get recovery`.
struct HistoryEntry {
  absl::Time at;
  std::string from;
  std::string event;
  std::string to;
  bool operator==(const HistoryEntry&) const = default;
};
inline constexpr size_t kMaxHistory = 64;

// The whole state of one job's recovery controller (§6.2) plus what the machine needs to
// continue an entry action. Advance() takes it by const reference and returns the next one.
struct JobRecovery {
  std::string job_id;
  JobConfig config;

  State state = State::kInit;
  Phase phase = Phase::kNone;
  WritePurpose write_purpose = WritePurpose::kNone;
  std::string uuid;
  FaultCaches caches;
  std::map<int64_t, std::string> fault_pods;   // pod rank -> UID (first seen)
  std::map<int64_t, std::string> origin_pods;  // pod rank -> UID at the start of the cycle
  std::map<int64_t, std::string> watch_seen;   // schedule watcher: last UID seen per rank
  std::string health{"Healthy"};
  std::string plat_strategy;
  std::vector<std::string> agent_strategies;
  std::vector<std::string> strategy_history;
  std::vector<StatusReport> result_history;
  std::string decided;  // the strategy A_DECIDE is carrying out

  std::map<int64_t, InPlacePod> in_place;  // pod rank -> bookkeeping
  bool restart_fault_process = false;
  std::set<int64_t> must_exit_pods;

  // A_GLOBAL / A_DECIDE scratch.
  bool global_retry_case = false;
  std::vector<FaultRank> confirm_faults;  // what ProcessConfirmFault was written with
  std::optional<bool> resources_arrived;  // scale-in resource wait outcome
  bool only_dump_or_exit = false;
  std::optional<Signal> staged_signal;  // sent once the awaited write has succeeded

  // OM (NIC switch / stress test).
  OmKind om = OmKind::kNone;
  NicSwitchParams nic;
  StressParams stress;
  bool stress_fault_reported = false;        // RecoverStatus 406 during the test
  std::vector<std::string> stress_isolated;  // nodes found faulty by the test
  bool nic_recorded = false;  // a NIC switch ran in this controller's life (A_DECIDE)

  HotSwitchInfo hot_switch;

  // Output in flight.
  uint64_t next_id = 1;
  uint64_t awaiting_signal = 0;
  std::optional<Signal> pending_signal;  // the awaited ProcessManageSignal (resent on resume)
  // The stopTrain or globalFault written last, while the state waits for the report that
  // answers it. A cycle restored in that wait sends it once more on resume: the client's
  // report may have gone to the process that died (the Python toolkit does not repeat a report
  // that failed in transport), and nothing else would ask for it again before the 15 min wait.
  std::optional<Signal> report_signal;
  uint64_t awaiting_write = 0;
  std::optional<PendingWrite> pending_write;
  std::map<TimerKind, absl::Time> timers;

  // Background work.
  bool schedule_watch = false;
  std::optional<PendingPreExit> pre_exit;
  std::set<int64_t> hw_fault_pods;  // pods with a fault in the latest hardware delivery

  Mailboxes mailboxes;
  // The cycle's first signal (or O&M push) has been emitted. Reports arriving before it answer
  // nothing of this cycle and are dropped (quirk 3 bounded, see MachineRun::Deliver); a reset
  // clears it with the mailboxes.
  bool cycle_signalled = false;

  // Survives resets (only job deletion forgets them).
  std::set<std::string> hw_snapshot;  // §8.1 step 4 keys "rankId_faultType"
  bool ever_subscribed = false;
  uint64_t stream_id = 0;  // the current subscription (0 = none)
  uint64_t cycles = 0;     // uuids created (feeds the uuid derivation)
  bool resumed = false;    // restored from a record; the next Subscribe continues the cycle
  std::vector<HistoryEntry> history;

  // Not persisted: rebuilt from the store by the executor.
  JobView view;

  bool operator==(const JobRecovery&) const = default;
};

// A fresh controller for a job (state INIT), as Register creates it.
JobRecovery NewJobRecovery(std::string job_id, JobConfig config);

}  // namespace clusterd::recovery
