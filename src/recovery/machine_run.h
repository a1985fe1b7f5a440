#pragma once

// Internal to the recovery room: one application of Advance(). The methods are spread over
// machine.cc (engine, reset, timers), machine_inputs.cc, machine_mailboxes.cc (§6.5),
// machine_faults.cc (§8 intake),
// machine_flow.cc (§7.4 entry actions), machine_decide.cc (A_DECIDE, A_CHECK),
// nic_switch.cc, stress_test.cc and hot_switch.cc.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "recovery/command.h"
#include "recovery/event.h"
#include "recovery/job_recovery.h"
#include "recovery/machine.h"
#include "recovery/side_effects.h"
#include "recovery/strategy.h"
#include "recovery/transitions.h"

namespace clusterd::recovery {

// §10 durations.
inline constexpr absl::Duration kReportWait = absl::Minutes(15);
inline constexpr absl::Duration kPlatformPollLimit = absl::Seconds(300);
inline constexpr absl::Duration kFlushDelayDuration = absl::Seconds(1);
inline constexpr absl::Duration kForceReleaseDuration = absl::Seconds(10);
inline constexpr absl::Duration kRaBlockLimit = absl::Seconds(12);
inline constexpr absl::Duration kInPlaceWaitLimit = absl::Seconds(15);
inline constexpr absl::Duration kHcclConvergence = absl::Seconds(3);
inline constexpr absl::Duration kDefaultScheduleWatch = absl::Seconds(270);
inline constexpr absl::Duration kDefaultResourceWait = absl::Seconds(20);
inline constexpr absl::Duration kInPlaceClearDelayDuration = absl::Seconds(5);
inline constexpr absl::Duration kListenScheduleLimit = absl::Seconds(20);
inline constexpr absl::Duration kRestartAllWait = absl::Seconds(60);
inline constexpr absl::Duration kFaultRetryFirstCheck = absl::Seconds(5);
inline constexpr absl::Duration kFaultRetryLimit = absl::Seconds(135);
inline constexpr absl::Duration kScaleOutBackoffDuration = absl::Seconds(5);
inline constexpr absl::Duration kNewPodWaitLimit = absl::Seconds(60);
inline constexpr absl::Duration kOldPodDeleteLimit = absl::Minutes(15);
inline constexpr absl::Duration kPreExitGraceLimit = absl::Seconds(10);
inline constexpr absl::Duration kOriginRefreshDelay = absl::Seconds(10);
inline constexpr absl::Duration kFaultJobInfoCleanupDelay = absl::Seconds(10);
inline constexpr int64_t kStressPauseTimeout = 900;
inline constexpr int64_t kRetryNetworkTimeout = 33;
inline constexpr int kResetWriteAttempts = 3;
inline constexpr int kPodGroupAttempts = 4;
inline constexpr size_t kMaxHotSwitchPods = 10;
inline constexpr int kMaxRaiseDepth = 64;

class MachineRun {
 public:
  MachineRun(const JobRecovery& current, absl::Time now) : s_(current), now_(now) {}

  void Handle(const Event& event);
  Step Finish();

  // machine.cc: inputs.
  void On(const Subscribed& e);
  void On(const StreamClosed& e);
  void On(const JobDeleted& e);
  void On(const ProcessFaultReported& e);
  void On(const StopCompleteReported& e);
  void On(const RecoverStrategyReported& e);
  void On(const RecoverStatusReported& e);
  void On(const HardwareFaultsPublished& e);
  void On(const SignalWritten& e);
  void On(const WriteDone& e);
  void On(const TimerFired& e);
  void On(const JobViewChanged& e);
  void On(const SwitchNicRequested& e);
  void On(const SwitchNicResultReplied& e);
  void On(const StressTestRequested& e);
  void On(const StressTestResultReplied& e);

 private:
  // machine.cc: the engine.
  void Raise(MachineEvent event);
  void Enter(const Transition& t, MachineEvent event);
  void RunEntry(Entry entry, MachineEvent cause);
  void ClearStep();
  void Reset(std::string_view reason, bool deletion = false, uint64_t keep_stream = 0);
  void Resume(uint64_t stream_id);
  // Whether `signal`, just written, is the one the state now waits to have answered (and so
  // the one a resumed wait asks again: JobRecovery::report_signal).
  bool AsksForTheAwaitedReport(const Signal& signal) const;
  void CheckStall();
  uint64_t NextId() { return s_.next_id++; }
  std::string NewUuid();
  void Emit(Command command) { out_.push_back(std::move(command)); }
  void AddNote(std::string_view kind, std::string message);
  void Send(Signal signal);        // awaited
  void SendNoWait(Signal signal);  // result only logged
  void AwaitPush(uint64_t id);     // an OM push was emitted with `id`
  void NoteCycleSignal();          // a signal or push of the cycle is emitted
  void WriteReset(WritePurpose purpose, ResetOperation op, std::vector<int64_t> ranks,
                  bool restart_fault_process, int attempts);
  void WriteResetNoWait(ResetOperation op, std::vector<int64_t> ranks, bool restart_fault_process);
  void PatchPodGroupAwait(WritePurpose purpose, store::Object patch);
  void PatchPodGroupNoWait(store::Object patch);
  void PatchPodByRank(int64_t pod_rank, store::Object patch);
  void SetTimer(TimerKind kind, absl::Duration after);
  void WaitIn(Phase phase, absl::Duration limit);
  void Reply(uint64_t ticket, int32_t code, std::string info);
  void OnStepTimeout();
  void OnStepDeadline();
  void Reevaluate();

  // machine.cc: mailboxes.
  template <typename T>
  void Deliver(Mailbox<T>& box, T report, uint64_t ticket, std::string_view what);
  template <typename T>
  T Take(Mailbox<T>& box, std::string_view what);
  bool DropIfBeforeCycle(uint64_t ticket, std::string_view what, std::string info);
  void TryConsumeReports();
  void FailBlockedReports();

  // machine_faults.cc: §8.
  void MergeFaults(const std::vector<FaultRank>& faults);
  void AddFaultPod(int64_t pod_rank, const std::string& uid);
  void MarkInPlace(int64_t pod_rank, bool possible, bool software);
  bool SupportRetryNow() const;
  void MoveRetryIfNeeded();
  void ExpandFaults(bool whole_pods = false);
  std::vector<int64_t> NormalRanks() const;
  std::vector<int64_t> PodsNotReplaced(const std::vector<int64_t>& pod_ranks) const;
  bool PodReplaced(int64_t pod_rank) const;
  void FlushPreExit();
  void RefreshOrigins();

  // machine_flow.cc: entry actions and their continuations.
  StrategyContext Context() const;
  void EntryFlush();
  void CheckPlatStrategy();
  void FlushContinue();
  std::optional<std::string> ReadPlatStrategy(bool exit_allowed) const;
  void EntryStop();
  void EntryWaitReport();
  void EntryWaitFlush();
  void EntryGlobal();
  void GlobalAfterRaBlock();
  void GlobalAfterForceRelease();
  void GlobalAfterInPlaceWait();
  void GlobalPlatformExchange(const std::vector<FaultRank>& faults);
  void CheckPlatResult();
  void GlobalFinish(const std::vector<FaultRank>& merged);
  void GlobalSendRetry(const std::vector<FaultRank>& faults);
  void GlobalWriteNormal();
  void SendStaged();
  void ComputeRestartFaultProcess();
  bool InPlaceWaitDone() const;
  void EntryWaitStrategy();
  void StartScheduleWatch();
  void CheckScheduleWatch();
  void EntryWaitStatus(std::string_view strategy);
  void EntryWaitRecover();
  void OnScheduleResult(bool ok);
  void EntryKillPod();
  void EntryListenSchedule();
  void CheckListenSchedule(bool at_deadline);
  void EntryRestartAll();
  void EntryWaitRestartAll();
  void EntryClear();
  void EntryFaultRetry();
  void CheckFaultRetryRunning(bool at_deadline);
  void EntryKillJob();
  void EntryDump();
  void EntryScaleIn();
  void EntryScaleRunning(bool after_fail);
  bool AnyFaultPodReplacedAndReal() const;
  void CheckScaleRunning();
  void OnWriteDone(bool ok);
  void OnReportTaken(State state);

  // machine_decide.cc.
  void EntryDecide();
  void DecideWith(StrategyContext context);
  void CheckResourceWait(bool at_deadline);
  void CheckRankTable(bool at_deadline);
  void DecideAfterRankTable();
  void DecideAfterHccl();
  void SendDecided();
  void EntryCheck();
  void ApplyCheck(const StatusReport& result);

  // nic_switch.cc / stress_test.cc.
  void EntryPause();
  void EntryWaitPause();
  void OnPauseReport(const StopReport& report);
  void EntryNotifySwitchNic();
  void EntryWaitSwitchNic();
  void EntryContinue();
  void EntryWaitContinue();
  void OnContinueReport(const StatusReport& report);
  void EntryOmFinish();
  void EntryNotifyStressTest();
  void EntryWaitStressTest();
  void OnStressStatus(const StatusReport& report);
  void OnStressResult(const StressReport& report);
  void EntryStressFailStop();
  void Om(std::string text);

  // hot_switch.cc.
  enum class GateResult { kSkip, kContinue, kHotSwitch };
  GateResult SubHealthGate(std::vector<HardwareFault>& faults);
  void EntryHotPrepare();
  void EntryHotWaitNewPod();
  void CheckNewPod();
  void EntryHotNotify(std::string_view action);
  void EntryHotWaitPauseResult();
  void OnPauseResult(const StrategyReport& report);
  void EntryHotStopJob();
  void EntryHotWaitOldPodDeleted();
  void CheckOldPodDeleted();
  void EntryHotMigrate();
  void EntryHotWaitRestartResult();
  void OnRestartResult(const StatusReport& report);
  void EntryHotCleanup(bool success);

  JobRecovery s_;
  const absl::Time now_;
  std::vector<Command> out_;
  int depth_ = 0;
};

}  // namespace clusterd::recovery
