// §6.5 report mailboxes (capacity 1, early reports kept, later ones wait or get 599 at a reset)
// and the report inputs that fill them. A report from before the cycle's first signal is dropped
// (quirk 3 bounded, DropIfBeforeCycle).

#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

// ---------------------------------------------------------------------------------------------
// Mailboxes (§6.5).

// The report messages carry no uuid (§2.2), so time is the only tie between a report and the
// cycle it answers, and the cut is the cycle's first signal: every report of the protocol answers
// a signal, so one that arrives before the cycle sent any answers an earlier cycle (or none). The
// reference keeps it for the next wait on its mailbox, where a stale StopComplete,
// RecoverStrategy or RecoverStatus moves a cycle the client never answered, up to
// recover-success. Such a report is acknowledged as the reference would (a client sees no
// difference; the Python toolkit would otherwise re-register and send it again) and dropped with
// a note (log line, clusterd_recovery_notes_total{kind="stale_report"}). A report sent after the
// signal but before the machine waits for it is kept, as before.
bool MachineRun::DropIfBeforeCycle(uint64_t ticket, std::string_view what, std::string info) {
  if (s_.cycle_signalled) return false;
  Reply(ticket, kCodeOk, std::move(info));
  AddNote("stale_report", absl::StrCat(Sv(what), " arrived before the cycle's first signal (state ",
                                       Sv(StateName(s_.state)), "): dropped"));
  return true;
}

template <typename T>
void MachineRun::Deliver(Mailbox<T>& box, T report, uint64_t ticket, std::string_view what) {
  if (DropIfBeforeCycle(ticket, what, ReportReceivedInfo(s_.job_id, s_.uuid, what))) return;
  if (!box.slot.has_value()) {
    box.slot = std::move(report);
    Reply(ticket, kCodeOk, ReportReceivedInfo(s_.job_id, s_.uuid, what));
    TryConsumeReports();
    return;
  }
  if (box.blocked.size() >= kMaxBlockedReports) {
    Reply(ticket, kCodeServerInnerError,
          absl::StrCat(ChanClosedInfo(s_.job_id, s_.uuid), ": too many reports waiting"));
    return;
  }
  // The RPC stays unanswered until the slot frees (the reference blocks the caller).
  box.blocked.emplace_back(ticket, std::move(report));
}

template <typename T>
T MachineRun::Take(Mailbox<T>& box, std::string_view what) {
  T value = std::move(*box.slot);
  box.slot.reset();
  if (!box.blocked.empty()) {
    auto [ticket, report] = std::move(box.blocked.front());
    box.blocked.pop_front();
    box.slot = std::move(report);
    Reply(ticket, kCodeOk, ReportReceivedInfo(s_.job_id, s_.uuid, what));
  }
  return value;
}

void MachineRun::FailBlockedReports() {
  auto fail = [this](auto& box) {
    for (const auto& [ticket, report] : box.blocked) {
      Reply(ticket, kCodeServerInnerError, ChanClosedInfo(s_.job_id, s_.uuid));
    }
    box.blocked.clear();
  };
  fail(s_.mailboxes.stop_complete);
  fail(s_.mailboxes.recover_strategy);
  fail(s_.mailboxes.recover_status);
  fail(s_.mailboxes.nic_result);
  fail(s_.mailboxes.stress_result);
}

void MachineRun::TryConsumeReports() {
  Mailboxes& m = s_.mailboxes;
  switch (s_.phase) {
    case Phase::kWaitReport:
      break;
    case Phase::kRecoverWait:
      if (m.recover_status.slot.has_value()) {
        s_.result_history.push_back(Take(m.recover_status, kInfoReceiveRecoverStatus));
        return Raise(MachineEvent::kReceiveReport);
      }
      if (m.schedule_result.has_value()) {
        const bool ok = *m.schedule_result;
        m.schedule_result.reset();
        return OnScheduleResult(ok);
      }
      return;
    case Phase::kStressWait:
      if (m.stress_result.slot.has_value()) {
        return OnStressResult(Take(m.stress_result, kInfoReplySuccess));
      }
      if (m.recover_status.slot.has_value()) {
        return OnStressStatus(Take(m.recover_status, kInfoReceiveRecoverStatus));
      }
      return;
    default:
      return;
  }
  switch (s_.state) {
    case State::kWaitReportStopComplete:
      if (m.stop_complete.slot.has_value()) {
        const StopReport r = Take(m.stop_complete, kInfoReceiveStopComplete);
        return Raise(r.code == kCodeProcessNotReady ? MachineEvent::kProcessNotReady
                                                    : MachineEvent::kReceiveReport);
      }
      return;
    case State::kWaitReportPauseComplete:
      if (m.stop_complete.slot.has_value()) {
        return OnPauseReport(Take(m.stop_complete, kInfoReceiveStopComplete));
      }
      return;
    case State::kWaitReportRecoverStrategy:
      if (m.recover_strategy.slot.has_value()) {
        s_.agent_strategies = Take(m.recover_strategy, kInfoReceiveRecoverStrategy).strategies;
        return Raise(MachineEvent::kReceiveReport);
      }
      return;
    case State::kWaitReportPauseResult:
      if (m.recover_strategy.slot.has_value()) {
        return OnPauseResult(Take(m.recover_strategy, kInfoReceiveRecoverStrategy));
      }
      return;
    case State::kWaitReportStepRetryStatus:
    case State::kWaitReportDumpStatus:
    case State::kWaitReportScaleInIsolateRanks:
    case State::kWaitReportScaleInStatus:
    case State::kWaitReportScaleOutStatus:
      if (m.recover_status.slot.has_value()) {
        s_.result_history.push_back(Take(m.recover_status, kInfoReceiveRecoverStatus));
        return Raise(MachineEvent::kReceiveReport);
      }
      return;
    case State::kWaitContinueTrain:
      if (m.recover_status.slot.has_value()) {
        return OnContinueReport(Take(m.recover_status, kInfoReceiveRecoverStatus));
      }
      return;
    case State::kWaitReportRestartTrainResult:
      if (m.recover_status.slot.has_value()) {
        return OnRestartResult(Take(m.recover_status, kInfoReceiveRecoverStatus));
      }
      return;
    case State::kWaitSwitchNicFinished:
      if (m.nic_result.slot.has_value()) {
        if (Take(m.nic_result, kInfoReplySuccess).result) {
          return Raise(MachineEvent::kReceiveReport);
        }
        Om(std::string(kOmSwitchNicFailed));
        return Raise(MachineEvent::kSwitchNicFail);
      }
      if (m.recover_status.slot.has_value()) {
        // 406 is "a fault happened during the switch"; any other code is treated the same
        // (quirk 7: the reference keeps waiting with no timer).
        Take(m.recover_status, kInfoReceiveRecoverStatus);
        Om(std::string(kOmSwitchNicReportError));
        return Raise(MachineEvent::kWaitSwitchNicRecvFault);
      }
      return;
    default:
      return;
  }
}

void MachineRun::On(const StopCompleteReported& e) {
  Deliver(s_.mailboxes.stop_complete, StopReport{e.code.value_or(kCodeOk)}, e.ticket,
          kInfoReceiveStopComplete);
}

void MachineRun::On(const RecoverStrategyReported& e) {
  Deliver(s_.mailboxes.recover_strategy, StrategyReport{e.strategies}, e.ticket,
          kInfoReceiveRecoverStrategy);
}

void MachineRun::On(const RecoverStatusReported& e) {
  Deliver(s_.mailboxes.recover_status,
          StatusReport{e.code.value_or(kCodeOk), e.strategy, e.isolate_rank_ids}, e.ticket,
          kInfoReceiveRecoverStatus);
}

void MachineRun::On(const SwitchNicResultReplied& e) {
  if (DropIfBeforeCycle(e.ticket, "ReplySwitchNicResult", std::string(kInfoReplySuccess))) return;
  Mailbox<NicReport>& box = s_.mailboxes.nic_result;
  if (!box.slot.has_value()) {
    box.slot = NicReport{e.result};
    Reply(e.ticket, kCodeOk, std::string(kInfoReplySuccess));
    return TryConsumeReports();
  }
  if (box.blocked.size() >= kMaxBlockedReports) {
    return Reply(e.ticket, kCodeServerInnerError, ChanClosedInfo(s_.job_id, s_.uuid));
  }
  box.blocked.emplace_back(e.ticket, NicReport{e.result});
}

void MachineRun::On(const StressTestResultReplied& e) {
  if (DropIfBeforeCycle(e.ticket, "ReplyStressTestResult", std::string(kInfoReplySuccess))) return;
  Mailbox<StressReport>& box = s_.mailboxes.stress_result;
  if (!box.slot.has_value()) {
    box.slot = StressReport{e.results};
    Reply(e.ticket, kCodeOk, std::string(kInfoReplySuccess));
    return TryConsumeReports();
  }
  if (box.blocked.size() >= kMaxBlockedReports) {
    return Reply(e.ticket, kCodeServerInnerError, ChanClosedInfo(s_.job_id, s_.uuid));
  }
  box.blocked.emplace_back(e.ticket, StressReport{e.results});
}

}  // namespace clusterd::recovery
