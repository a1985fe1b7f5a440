#include "recovery/machine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/check_code.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

// ---------------------------------------------------------------------------------------------
// Public entry points.

Step Advance(const JobRecovery& current, const Event& event, absl::Time now) {
  MachineRun run(current, now);
  run.Handle(event);
  return run.Finish();
}

std::vector<Command> ResumeCommands(const JobRecovery& restored) {
  std::vector<Command> out;
  for (const auto& [kind, at] : restored.timers) out.push_back(ArmTimer{kind, at});
  if (restored.awaiting_write != 0 && restored.pending_write.has_value()) {
    const PendingWrite& w = *restored.pending_write;
    if (w.pod_group) {
      out.push_back(PatchPodGroup{restored.awaiting_write, w.patch, w.attempts});
    } else {
      out.push_back(WriteResetConfig{restored.awaiting_write, w.op, w.ranks,
                                     w.restart_fault_process, w.attempts});
    }
  }
  return out;
}

Signal KeepAlive(const JobRecovery& job) { return KeepAliveSignal(job.job_id, job.uuid); }

std::string MakeUuid(std::string_view job_id, absl::Time now, uint64_t counter) {
  const int64_t nanos = absl::ToUnixNanos(now);
  const std::string digest = Sha256Hex(absl::StrCat(Sv(job_id), "/", nanos, "/", counter));
  return absl::StrCat(absl::StrFormat("%X", static_cast<uint64_t>(nanos)), "-",
                      digest.substr(0, 32));
}

std::string ReportReceivedInfo(std::string_view job_id, std::string_view uuid,
                               std::string_view what) {
  return absl::StrCat("jobId=", Sv(job_id), ", uuid=", Sv(uuid), ", receive ", Sv(what));
}

std::string ChanClosedInfo(std::string_view job_id, std::string_view uuid) {
  return absl::StrCat("jobId=", Sv(job_id), ", uuid=", Sv(uuid), ", chan closed");
}

JobRecovery NewJobRecovery(std::string job_id, JobConfig config) {
  JobRecovery job;
  job.job_id = std::move(job_id);
  job.config = std::move(config);
  return job;
}

// ---------------------------------------------------------------------------------------------
// Engine.

void MachineRun::Handle(const Event& event) {
  std::visit([this](const auto& e) { On(e); }, event);
}

Step MachineRun::Finish() {
  CheckStall();
  return Step{std::move(s_), std::move(out_)};
}

void MachineRun::AddNote(std::string_view kind, std::string message) {
  Emit(Note{std::string(kind), std::move(message)});
}

void MachineRun::Raise(MachineEvent event) {
  const Transition* t = FindTransition(s_.state, event);
  if (t == nullptr) {
    AddNote("order_mix",
            absl::StrCat("event ", Sv(MachineEventName(event)), " does not apply in state ",
                         Sv(StateName(s_.state)), "; dropped"));
    return;
  }
  if (depth_ >= kMaxRaiseDepth) {
    // A cycle of follow-up events without any wait is a bug in the table or an entry action.
    Reset(absl::StrCat("too many follow-up events at ", Sv(MachineEventName(event))));
    return;
  }
  ++depth_;
  Enter(*t, event);
  --depth_;
}

void MachineRun::Enter(const Transition& t, MachineEvent event) {
  const State from = s_.state;
  ClearStep();
  s_.state = t.dst;
  if (from == State::kInit && t.dst != State::kInit) {
    s_.history.clear();
  }
  if (s_.history.size() < kMaxHistory) {
    s_.history.push_back(HistoryEntry{now_, std::string(StateName(from)),
                                      std::string(MachineEventName(event)),
                                      std::string(StateName(t.dst))});
  }
  if (from == State::kInit && t.dst != State::kInit && s_.pre_exit.has_value()) {
    // §8.1 step 8: the pre-exit grace ends as soon as the state leaves INIT.
    FlushPreExit();
  }
  RunEntry(t.entry, event);
}

void MachineRun::RunEntry(Entry entry, MachineEvent cause) {
  switch (entry) {
    case Entry::kFlush:
      return EntryFlush();
    case Entry::kStop:
      return EntryStop();
    case Entry::kFaultRetry:
      return EntryFaultRetry();
    case Entry::kDump:
      return EntryDump();
    case Entry::kKillJob:
      return EntryKillJob();
    case Entry::kWaitStop:
      return EntryWaitReport();
    case Entry::kClear:
      return EntryClear();
    case Entry::kWaitStatusRetry:
      return EntryWaitStatus(kStrategyRetry);
    case Entry::kWaitStatusDump:
      return EntryWaitStatus(kStrategyDump);
    case Entry::kWaitStatusDowngrade:
      return EntryWaitStatus(kStrategyDowngrade);
    case Entry::kWaitStatusUpgrade:
      return EntryWaitStatus(kStrategyUpgrade);
    case Entry::kWaitStatusNoAppend:
      return EntryWaitStatus("");
    case Entry::kWaitFlush:
      return EntryWaitFlush();
    case Entry::kGlobal:
      return EntryGlobal();
    case Entry::kWaitStrategy:
      return EntryWaitStrategy();
    case Entry::kDecide:
      return EntryDecide();
    case Entry::kWaitRecover:
      return EntryWaitRecover();
    case Entry::kExitDecided:
      s_.strategy_history.emplace_back(kStrategyExit);
      return Raise(MachineEvent::kCheckFinish);
    case Entry::kCheck:
      return EntryCheck();
    case Entry::kFinish:
      return Reset("cycle finished");
    case Entry::kKillPod:
      return EntryKillPod();
    case Entry::kListenSchedule:
      return EntryListenSchedule();
    case Entry::kRestartAll:
      return EntryRestartAll();
    case Entry::kWaitRestartAll:
      return EntryWaitRestartAll();
    case Entry::kScaleIn:
      return EntryScaleIn();
    case Entry::kScaleRunning:
      return EntryScaleRunning(cause == MachineEvent::kNotifyFail);
    case Entry::kPause:
      return EntryPause();
    case Entry::kWaitPause:
      return EntryWaitPause();
    case Entry::kNotifySwitchNic:
      return EntryNotifySwitchNic();
    case Entry::kWaitSwitchNic:
      return EntryWaitSwitchNic();
    case Entry::kContinue:
      return EntryContinue();
    case Entry::kWaitContinue:
      return EntryWaitContinue();
    case Entry::kNotifyStressTest:
      return EntryNotifyStressTest();
    case Entry::kWaitStressTest:
      return EntryWaitStressTest();
    case Entry::kStressFailStop:
      return EntryStressFailStop();
    case Entry::kOmFinish:
      return EntryOmFinish();
    case Entry::kHotPrepare:
      return EntryHotPrepare();
    case Entry::kHotWaitNewPod:
      return EntryHotWaitNewPod();
    case Entry::kHotNotifyRunning:
      return EntryHotNotify(kActionNewPodRunning);
    case Entry::kHotNotifyStop:
      return EntryHotNotify(kActionStopSwitch);
    case Entry::kHotWaitPauseResult:
      return EntryHotWaitPauseResult();
    case Entry::kHotStopJob:
      return EntryHotStopJob();
    case Entry::kHotWaitOldPodDeleted:
      return EntryHotWaitOldPodDeleted();
    case Entry::kHotMigrate:
      return EntryHotMigrate();
    case Entry::kHotWaitRestartResult:
      return EntryHotWaitRestartResult();
    case Entry::kHotFailCleanup:
      return EntryHotCleanup(false);
    case Entry::kHotSuccessCleanup:
      return EntryHotCleanup(true);
  }
}

void MachineRun::ClearStep() {
  s_.phase = Phase::kNone;
  s_.write_purpose = WritePurpose::kNone;
  s_.awaiting_signal = 0;
  s_.pending_signal.reset();
  s_.report_signal.reset();
  s_.awaiting_write = 0;
  s_.pending_write.reset();
  s_.timers.erase(TimerKind::kStep);
  s_.timers.erase(TimerKind::kStepDeadline);
}

void MachineRun::CheckStall() {
  // Every state but INIT must be waiting for something; otherwise nothing would ever move it
  // (the reference stalls until the next reset in the cases of quirks 5, 6, 7, 19). Reset
  // instead, which ends the stream so that the client reconnects.
  if (s_.state != State::kInit && s_.phase == Phase::kNone) {
    Reset(absl::StrCat("no way forward from state ", Sv(StateName(s_.state))));
  }
}

void MachineRun::Reset(std::string_view reason, bool deletion, uint64_t keep_stream) {
  AddNote("reset", absl::StrCat("controller reset: ", Sv(reason)));
  FailBlockedReports();
  if (s_.om == OmKind::kStressTest && !s_.stress.empty()) {
    std::vector<std::string> nodes;
    for (const auto& [node, ranks] : s_.stress) nodes.push_back(node);
    Emit(IgnoreStressTestFaults{std::move(nodes), false});
  }
  if (!deletion) WriteResetNoWait(ResetOperation::kClear, {}, false);
  Emit(EndStreams{keep_stream});

  JobRecovery next = NewJobRecovery(s_.job_id, s_.config);
  next.hw_snapshot = std::move(s_.hw_snapshot);
  next.ever_subscribed = s_.ever_subscribed;
  next.cycles = s_.cycles;
  next.next_id = s_.next_id;
  next.history = std::move(s_.history);
  next.view = std::move(s_.view);
  next.nic_recorded = s_.nic_recorded;
  next.pre_exit = std::move(s_.pre_exit);
  next.hw_fault_pods = std::move(s_.hw_fault_pods);
  for (TimerKind kind : {TimerKind::kPreExitGrace, TimerKind::kOriginRefresh}) {
    if (auto it = s_.timers.find(kind); it != s_.timers.end()) next.timers.insert(*it);
  }
  for (const auto& [rank, pod] : next.view.pods) next.origin_pods[rank] = pod.uid;
  s_ = std::move(next);
}

std::string MachineRun::NewUuid() { return MakeUuid(s_.job_id, now_, ++s_.cycles); }

void MachineRun::NoteCycleSignal() {
  // preExitProcess goes out in INIT, before any cycle: it is not what a report answers.
  if (s_.state != State::kInit) s_.cycle_signalled = true;
}

void MachineRun::Send(Signal signal) {
  NoteCycleSignal();
  const uint64_t id = NextId();
  s_.phase = Phase::kAwaitSignal;
  s_.awaiting_signal = id;
  s_.pending_signal = signal;
  if (s_.resumed) {
    // Restored after a restart and the client has not subscribed again yet: hold the signal
    // for Resume() rather than fail it for want of a stream; give up after the report wait.
    SetTimer(TimerKind::kStep, kReportWait);
    return;
  }
  Emit(SendSignal{id, std::move(signal), true});
}

void MachineRun::SendNoWait(Signal signal) {
  NoteCycleSignal();
  Emit(SendSignal{NextId(), std::move(signal), false});
}

void MachineRun::AwaitPush(uint64_t id) {
  NoteCycleSignal();
  s_.phase = Phase::kAwaitSignal;
  s_.awaiting_signal = id;
  s_.pending_signal.reset();
}

void MachineRun::WriteReset(WritePurpose purpose, ResetOperation op, std::vector<int64_t> ranks,
                            bool restart_fault_process, int attempts) {
  const uint64_t id = NextId();
  s_.phase = Phase::kAwaitWrite;
  s_.write_purpose = purpose;
  s_.awaiting_write = id;
  PendingWrite pending;
  pending.op = op;
  pending.ranks = ranks;
  pending.restart_fault_process = restart_fault_process;
  pending.attempts = attempts;
  s_.pending_write = std::move(pending);
  Emit(WriteResetConfig{id, op, std::move(ranks), restart_fault_process, attempts});
}

void MachineRun::WriteResetNoWait(ResetOperation op, std::vector<int64_t> ranks,
                                  bool restart_fault_process) {
  Emit(WriteResetConfig{0, op, std::move(ranks), restart_fault_process, kResetWriteAttempts});
}

void MachineRun::PatchPodGroupAwait(WritePurpose purpose, store::Object patch) {
  const uint64_t id = NextId();
  s_.phase = Phase::kAwaitWrite;
  s_.write_purpose = purpose;
  s_.awaiting_write = id;
  PendingWrite pending;
  pending.pod_group = true;
  pending.attempts = kPodGroupAttempts;
  pending.patch = patch;
  s_.pending_write = std::move(pending);
  Emit(PatchPodGroup{id, std::move(patch), kPodGroupAttempts});
}

void MachineRun::PatchPodGroupNoWait(store::Object patch) {
  Emit(PatchPodGroup{0, std::move(patch), kPodGroupAttempts});
}

void MachineRun::PatchPodByRank(int64_t pod_rank, store::Object patch) {
  const PodView* pod = s_.view.Pod(pod_rank);
  if (pod == nullptr) {
    AddNote("pod_missing", absl::StrCat("no pod of rank ", pod_rank, " to patch"));
    return;
  }
  Emit(PatchPod{pod->name, std::move(patch), kPodGroupAttempts});
}

void MachineRun::SetTimer(TimerKind kind, absl::Duration after) {
  const absl::Time at = now_ + after;
  s_.timers[kind] = at;
  Emit(ArmTimer{kind, at});
}

void MachineRun::WaitIn(Phase phase, absl::Duration limit) {
  s_.phase = phase;
  SetTimer(TimerKind::kStep, limit);
}

void MachineRun::Reply(uint64_t ticket, int32_t code, std::string info) {
  Emit(ReplyReport{ticket, code, std::move(info)});
}

void MachineRun::OnStepTimeout() {
  switch (s_.phase) {
    case Phase::kWaitReport:
    case Phase::kRecoverWait:
      if (s_.state == State::kWaitReportPauseComplete) Om(std::string(kOmPauseTrainTimeout));
      if (s_.state == State::kWaitContinueTrain) Om(std::string(kOmContinueTrainTimeout));
      if (s_.state == State::kWaitSwitchNicFinished) Om(std::string(kOmSwitchNicTimeout));
      return Raise(MachineEvent::kReceiveTimeout);
    case Phase::kStressWait:
      Om(std::string(kOmStressTestTimeout));
      return Raise(MachineEvent::kReceiveTimeout);
    case Phase::kWaitPlatStrategy:
      return Raise(MachineEvent::kWaitPlatStrategyTimeout);
    case Phase::kFlushDelay:
      return Raise(MachineEvent::kFlushFinished);
    case Phase::kRaBlockWait:
      return GlobalAfterRaBlock();
    case Phase::kForceRelease:
      return GlobalAfterForceRelease();
    case Phase::kInPlaceWait:
      return GlobalAfterInPlaceWait();
    case Phase::kPlatResultWait:
      s_.phase = Phase::kNone;
      return Raise(MachineEvent::kWriteConfirmFaultOrWaitResultFaultTimeout);
    case Phase::kResourceWait:
      return CheckResourceWait(true);
    case Phase::kRankTableWait:
      return CheckRankTable(true);
    case Phase::kHcclDelay:
      return DecideAfterHccl();
    case Phase::kInPlaceClearDelay:
      return WriteReset(WritePurpose::kRecoverClear, ResetOperation::kClear, {}, false,
                        kResetWriteAttempts);
    case Phase::kListenSchedule:
      return CheckListenSchedule(true);
    case Phase::kRestartAllDelay:
      return Raise(MachineEvent::kRestartFinish);
    case Phase::kFaultRetryRunning:
      // The first check is due; later ones follow every view change until the deadline.
      return CheckFaultRetryRunning(false);
    case Phase::kScaleOutBackoff:
      s_.phase = Phase::kScaleRunning;
      return CheckScaleRunning();
    case Phase::kNewPodWait:
      return Raise(MachineEvent::kNewPodTimeout);
    case Phase::kOldPodDeleteWait:
      return Raise(MachineEvent::kReceiveTimeout);
    case Phase::kAwaitSignal:
      // A signal held since a restart: the client never came back.
      return On(SignalWritten{s_.awaiting_signal, false});
    default:
      return;
  }
}

void MachineRun::OnStepDeadline() {
  if (s_.phase == Phase::kFaultRetryRunning) return CheckFaultRetryRunning(true);
  // killMaster's 60 s enqueue limit (§6.4).
  if (s_.state == State::kNotifyKillJob) return Raise(MachineEvent::kFinish);
  // A_WAIT_RECOVER's 15 min, which runs across its clear-after-scheduling steps.
  if (s_.state == State::kWaitReportProcessRecoverStatus) {
    return Raise(MachineEvent::kReceiveTimeout);
  }
}

void MachineRun::Reevaluate() {
  switch (s_.phase) {
    case Phase::kWaitPlatStrategy:
      CheckPlatStrategy();
      break;
    case Phase::kRaBlockWait:
      if (s_.view.pod_group_running) GlobalAfterRaBlock();
      break;
    case Phase::kInPlaceWait:
      if (InPlaceWaitDone()) GlobalAfterInPlaceWait();
      break;
    case Phase::kPlatResultWait:
      CheckPlatResult();
      break;
    case Phase::kResourceWait:
      CheckResourceWait(false);
      break;
    case Phase::kRankTableWait:
      CheckRankTable(false);
      break;
    case Phase::kListenSchedule:
      CheckListenSchedule(false);
      break;
    case Phase::kFaultRetryRunning:
      if (s_.timers.count(TimerKind::kStep) == 0) CheckFaultRetryRunning(false);
      break;
    case Phase::kScaleRunning:
      CheckScaleRunning();
      break;
    case Phase::kNewPodWait:
      CheckNewPod();
      break;
    case Phase::kOldPodDeleteWait:
      CheckOldPodDeleted();
      break;
    default:
      break;
  }
  if (s_.schedule_watch) CheckScheduleWatch();
  RefreshOrigins();
}

}  // namespace clusterd::recovery
