// The machine's inputs (event.h) other than fault deliveries (machine_faults.cc) and OM
// requests (nic_switch.cc, stress_test.cc).

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

// ---------------------------------------------------------------------------------------------
// Inputs.

void MachineRun::On(const Subscribed& e) {
  if (s_.resumed && s_.state != State::kInit) {
    Resume(e.stream_id);
    return;
  }
  const bool first = !s_.ever_subscribed;
  // The reset ends every earlier stream; the new one stays.
  Reset("new subscription", /*deletion=*/false, e.stream_id);
  s_.ever_subscribed = true;
  s_.stream_id = e.stream_id;
  if (first) {
    // Quirk 11: faults published between Register and the first Subscribe were dropped by the
    // reset and never raised again. Forget them so that the next delivery adds them.
    s_.hw_snapshot.clear();
  }
}

void MachineRun::Resume(uint64_t stream_id) {
  s_.resumed = false;
  s_.ever_subscribed = true;
  s_.stream_id = stream_id;
  AddNote("resume", absl::StrCat("restored cycle continues in state ", Sv(StateName(s_.state))));
  Emit(EndStreams{stream_id});
  if (s_.phase == Phase::kWaitReport && s_.report_signal.has_value()) {
    // The signal was written before the restart and its report has not come: the client may
    // have sent it to the dying process and will not send it again. Ask once more, with the
    // same uuid (the TaskD manager drops the duplicate; the toolkit stops again and reports).
    AddNote("resume", absl::StrCat("report not received; ", Sv(s_.report_signal->signal_type),
                                   " sent again"));
    Emit(SendSignal{NextId(), *std::exchange(s_.report_signal, std::nullopt), false});
    return;
  }
  if (s_.phase != Phase::kAwaitSignal) return;
  s_.timers.erase(TimerKind::kStep);  // the guard of a signal held for this moment
  if (!s_.pending_signal.has_value()) {
    // An OM push: push it again (the notify stream is reopened by TaskD).
    if (s_.state == State::kNotifySwitchNic) return EntryNotifySwitchNic();
    if (s_.state == State::kNotifyStressTest) return EntryNotifyStressTest();
    return;
  }
  // Was the awaited signal delivered before the restart? If the report that answers it is
  // already in its mailbox, it was: take the send as done. Otherwise send it again, same uuid
  // and fields (the TaskD manager drops a duplicate by uuid + changeStrategy).
  const Signal& sig = *s_.pending_signal;
  const Mailboxes& m = s_.mailboxes;
  bool answered = false;
  if (sig.signal_type == kSignalStopTrain) {
    answered = m.stop_complete.slot.has_value();
  } else if (sig.signal_type == kSignalGlobalFault) {
    answered = m.recover_strategy.slot.has_value();
  } else if (sig.signal_type == kSignalChangeStrategy || sig.signal_type == kSignalSaveAndExit ||
             sig.signal_type == kSignalFaultNodesExit) {
    answered = sig.change_strategy != kStrategyExit && m.recover_status.slot.has_value();
  }
  if (answered) {
    AddNote("resume", "awaited signal already answered; not sent again");
    return On(SignalWritten{s_.awaiting_signal, true});
  }
  Emit(SendSignal{s_.awaiting_signal, sig, true});
}

void MachineRun::On(const StreamClosed& e) {
  if (e.stream_id == 0 || e.stream_id != s_.stream_id) return;
  s_.stream_id = 0;
  Reset("client disconnected");
}

void MachineRun::On(const JobDeleted&) {
  Reset("job deleted", /*deletion=*/true);
  s_.hw_snapshot.clear();
  Emit(ForgetJob{});
}

void MachineRun::On(const SignalWritten& e) {
  if (e.id == 0 || e.id != s_.awaiting_signal || s_.phase != Phase::kAwaitSignal) {
    if (!e.ok) AddNote("send_failed", absl::StrCat("signal ", e.id, " could not be written"));
    return;
  }
  const std::optional<Signal> signal = std::move(s_.pending_signal);
  s_.awaiting_signal = 0;
  s_.pending_signal.reset();
  s_.phase = Phase::kNone;
  if (!signal.has_value()) {
    // An OM push (§12 SwitchRankList, §13 StressTestRankParams).
    if (!e.ok) {
      Om(std::string(s_.om == OmKind::kStressTest ? kOmSendStressTestSignalFailed
                                                  : kOmSendSwitchNicSignalFailed));
    }
    return Raise(e.ok ? MachineEvent::kNotifySuccess : MachineEvent::kNotifyFail);
  }
  if (!e.ok && s_.om != OmKind::kNone) Om(std::string(kOmSendSignalFailed));
  const std::optional<MachineEvent> next = SendResultEvent(*signal, e.ok);
  if (next.has_value()) Raise(*next);
  if (e.ok && AsksForTheAwaitedReport(*signal)) s_.report_signal = *signal;
}

bool MachineRun::AsksForTheAwaitedReport(const Signal& signal) const {
  // Only the two signals whose duplicate repeats an idempotent step: stopping processes that
  // are stopped, or listing the strategies again. A strategy (changeStrategy) is never sent
  // twice: carrying out a recovery twice over would break the one in progress.
  if (s_.phase != Phase::kWaitReport) return false;
  return (signal.signal_type == kSignalStopTrain && s_.state == State::kWaitReportStopComplete) ||
         (signal.signal_type == kSignalGlobalFault &&
          s_.state == State::kWaitReportRecoverStrategy);
}

void MachineRun::On(const WriteDone& e) {
  if (e.id == 0 || e.id != s_.awaiting_write || s_.phase != Phase::kAwaitWrite) return;
  s_.awaiting_write = 0;
  s_.pending_write.reset();
  s_.phase = Phase::kNone;
  OnWriteDone(e.ok);
}

void MachineRun::On(const TimerFired& e) {
  const auto it = s_.timers.find(e.kind);
  if (it == s_.timers.end() || it->second != e.deadline) return;  // stale
  s_.timers.erase(it);
  switch (e.kind) {
    case TimerKind::kStep:
      return OnStepTimeout();
    case TimerKind::kStepDeadline:
      return OnStepDeadline();
    case TimerKind::kScheduleWatch:
      if (s_.schedule_watch) {
        s_.schedule_watch = false;
        s_.mailboxes.schedule_result = false;
        TryConsumeReports();
      }
      return;
    case TimerKind::kScheduleCheck:
      return CheckScheduleWatch();
    case TimerKind::kPreExitGrace:
      return FlushPreExit();
    case TimerKind::kOriginRefresh:
      return RefreshOrigins();
  }
}

void MachineRun::On(const JobViewChanged& e) {
  s_.view = e.view;
  Reevaluate();
}

}  // namespace clusterd::recovery
