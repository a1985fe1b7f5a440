// §7.4 entry actions of the main recovery flow and their continuations (everything the
// reference does with blocking waits becomes a phase plus a timer or a condition on the view).

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

bool AnyNetwork(const std::vector<FaultRank>& faults) {
  return std::any_of(faults.begin(), faults.end(),
                     [](const FaultRank& f) { return f.type == kFaultTypeNetwork; });
}

}  // namespace

StrategyContext MachineRun::Context() const {
  StrategyContext c;
  c.config = s_.config;
  c.plat_strategy = s_.plat_strategy;
  c.agent_strategies = s_.agent_strategies;
  c.restart_fault_process = s_.restart_fault_process;
  c.normal_cache_empty = s_.caches.normal.empty();
  c.pod0_faulty = s_.fault_pods.count(0) > 0;
  c.health = s_.health;
  if (!s_.result_history.empty()) c.last_result_strategy = s_.result_history.back().strategy;
  c.resources_arrived = s_.resources_arrived;
  c.only_dump_or_exit = s_.only_dump_or_exit;
  return c;
}

std::optional<std::string> MachineRun::ReadPlatStrategy(bool exit_allowed) const {
  // "with spaces and commas trimmed" (§7.4 A_FLUSH).
  std::string value = s_.view.Annotation(kAnnotationProcessRecoverStrategy);
  const size_t begin = value.find_first_not_of(" ,");
  const size_t end = value.find_last_not_of(" ,");
  value = begin == std::string::npos ? "" : value.substr(begin, end - begin + 1);
  if (value == kStrategyRetry || value == kStrategyRecover || value == kStrategyDump ||
      (exit_allowed && value == kStrategyExit)) {
    return value;
  }
  return std::nullopt;
}

// A_FLUSH.
void MachineRun::EntryFlush() {
  if (s_.config.platform_mode) {
    WaitIn(Phase::kWaitPlatStrategy, kPlatformPollLimit);
    return CheckPlatStrategy();
  }
  FlushContinue();
}

void MachineRun::CheckPlatStrategy() {
  const std::optional<std::string> strategy = ReadPlatStrategy(/*exit_allowed=*/false);
  if (!strategy.has_value()) return;
  s_.plat_strategy = *strategy;
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  FlushContinue();
}

void MachineRun::FlushContinue() {
  if (DumpOnFault(Context())) {
    if (!Context().AgentReported(kStrategyDump)) s_.agent_strategies.emplace_back(kStrategyDump);
    return Raise(MachineEvent::kDumpForFault);
  }
  WriteReset(WritePurpose::kFlushNotify, ResetOperation::kNotifyFaultFlushing, {}, false,
             kResetWriteAttempts);
}

// A_STOP.
void MachineRun::EntryStop() {
  s_.uuid = NewUuid();
  Send(StopSignal(s_.job_id, s_.uuid, s_.caches.All()));
}

void MachineRun::EntryWaitReport() {
  WaitIn(Phase::kWaitReport, kReportWait);
  TryConsumeReports();
}

// A_WAIT_FLUSH.
void MachineRun::EntryWaitFlush() {
  MoveRetryIfNeeded();
  if (s_.caches.normal.empty() && !s_.caches.retry.empty() && s_.config.Has(kStrategyRetry)) {
    return Raise(MachineEvent::kFlushFinished);
  }
  WaitIn(Phase::kFlushDelay, kFlushDelayDuration);
}

// A_GLOBAL.
void MachineRun::EntryGlobal() {
  if (!s_.view.exists) return Reset("job no longer known at the global fault");
  MoveRetryIfNeeded();
  ComputeRestartFaultProcess();
  if (!s_.caches.retry.empty()) {
    s_.global_retry_case = true;
    if (s_.config.platform_mode) return GlobalPlatformExchange(s_.caches.retry);
    return GlobalSendRetry(s_.caches.retry);
  }
  s_.global_retry_case = false;
  if (s_.view.npu_server && s_.view.HasAnnotation(kAnnotationRaBlock)) {
    if (s_.view.pod_group_running) return GlobalAfterRaBlock();
    return WaitIn(Phase::kRaBlockWait, kRaBlockLimit);
  }
  if (s_.view.super_pod) {
    Emit(UpdateFaultJobInfo{PodRanksOf(s_.caches.normal, s_.view.npus_per_pod), false,
                            absl::ZeroDuration()});
  }
  WaitIn(Phase::kForceRelease, kForceReleaseDuration);
}

void MachineRun::GlobalAfterRaBlock() {
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  GlobalAfterForceRelease();
}

void MachineRun::ComputeRestartFaultProcess() {
  bool any_possible = false;
  bool all_software = true;
  for (const auto& [pod, _] : s_.fault_pods) {
    const auto it = s_.in_place.find(pod);
    if (it == s_.in_place.end()) {
      all_software = false;
      continue;
    }
    any_possible = any_possible || it->second.possible;
    all_software = all_software && it->second.software;
  }
  if (any_possible) s_.restart_fault_process = true;  // sticky for the cycle
  if (s_.restart_fault_process && all_software && s_.fault_pods.size() > 1) {
    s_.restart_fault_process = false;
  }
}

bool MachineRun::InPlaceWaitDone() const {
  for (const auto& [pod, info] : s_.in_place) {
    if (info.possible && !info.software && s_.hw_fault_pods.count(pod) > 0) return false;
  }
  return true;
}

void MachineRun::GlobalAfterForceRelease() {
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  if (s_.restart_fault_process && !InPlaceWaitDone()) {
    return WaitIn(Phase::kInPlaceWait, kInPlaceWaitLimit);
  }
  GlobalAfterInPlaceWait();
}

void MachineRun::GlobalAfterInPlaceWait() {
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  if (s_.restart_fault_process) {
    std::vector<int64_t> not_retryable;
    for (const auto& [pod, _] : s_.fault_pods) {
      const auto it = s_.in_place.find(pod);
      const bool possible = it != s_.in_place.end() && it->second.possible;
      const bool still_faulty =
          it != s_.in_place.end() && !it->second.software && s_.hw_fault_pods.count(pod) > 0;
      if (!possible || still_faulty) {
        if (s_.must_exit_pods.insert(pod).second && possible) not_retryable.push_back(pod);
      }
    }
    if (!not_retryable.empty()) Emit(ReportNotRetryable{not_retryable});
  }
  if (s_.config.platform_mode) return GlobalPlatformExchange(s_.caches.normal);
  GlobalWriteNormal();
}

// §9.6 confirm / result exchange.
void MachineRun::GlobalPlatformExchange(const std::vector<FaultRank>& faults) {
  s_.confirm_faults = DedupByRank(faults);
  if (!s_.view.Annotation(kAnnotationProcessConfirmFault).empty()) {
    AddNote("platform", "ProcessConfirmFault is not empty: the platform has not cleared it");
    return Raise(MachineEvent::kWriteConfirmFaultOrWaitResultFaultTimeout);
  }
  PatchPodGroupAwait(WritePurpose::kConfirmFault, ConfirmFaultPatch(s_.confirm_faults));
}

void MachineRun::CheckPlatResult() {
  if (!s_.view.HasAnnotation(kAnnotationProcessResultFault)) return;
  std::vector<FaultRank> merged = s_.confirm_faults;
  const std::vector<FaultRank> result =
      ParseRankTypeList(s_.view.Annotation(kAnnotationProcessResultFault));
  merged.insert(merged.end(), result.begin(), result.end());
  merged = DedupByRank(merged);
  if (std::optional<std::string> ps = ReadPlatStrategy(/*exit_allowed=*/true)) {
    s_.plat_strategy = *ps;
  }
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  GlobalFinish(merged);
}

void MachineRun::GlobalFinish(const std::vector<FaultRank>& merged) {
  if (!s_.global_retry_case) {
    s_.caches.normal = merged;
    return GlobalWriteNormal();
  }
  const bool any_normal = std::any_of(
      merged.begin(), merged.end(), [](const FaultRank& f) { return f.type == kFaultTypeNormal; });
  if (!any_normal) return GlobalSendRetry(merged);
  // Exit variant. Quirk 9: the reference rebuilds it from the (empty) normal cache and sends
  // nothing useful; we use the merged set.
  s_.caches.normal = merged;
  s_.caches.retry.clear();
  ExpandFaults();
  const bool in_place = s_.restart_fault_process;
  std::vector<int64_t> pods =
      in_place ? std::vector<int64_t>(s_.must_exit_pods.begin(), s_.must_exit_pods.end())
               : PodRanksOf(s_.caches.normal, s_.view.npus_per_pod);
  s_.staged_signal = GlobalFaultSignal(s_.job_id, s_.uuid, s_.caches.normal, !in_place, in_place,
                                       PodsNotReplaced(pods));
  WriteReset(WritePurpose::kGlobalReset, ResetOperation::kFault, NormalRanks(), in_place, 1);
}

void MachineRun::GlobalSendRetry(const std::vector<FaultRank>& faults) {
  Signal signal = GlobalFaultSignal(s_.job_id, s_.uuid, faults, false, false, {});
  if (AnyNetwork(faults)) signal.timeout = kRetryNetworkTimeout;
  Send(std::move(signal));
}

void MachineRun::GlobalWriteNormal() {
  ExpandFaults();
  const bool in_place = s_.restart_fault_process;
  std::vector<int64_t> pods =
      in_place ? std::vector<int64_t>(s_.must_exit_pods.begin(), s_.must_exit_pods.end())
               : PodRanksOf(s_.caches.normal, s_.view.npus_per_pod);
  s_.staged_signal =
      GlobalFaultSignal(s_.job_id, s_.uuid, s_.caches.normal, true, false, PodsNotReplaced(pods));
  WriteReset(WritePurpose::kGlobalReset, ResetOperation::kFault, NormalRanks(), in_place, 1);
}

void MachineRun::SendStaged() {
  if (!s_.staged_signal.has_value()) return Reset("no staged global fault signal");
  Signal signal = std::move(*s_.staged_signal);
  s_.staged_signal.reset();
  Send(std::move(signal));
}

// A_WAIT_STRATEGY.
void MachineRun::EntryWaitStrategy() {
  const bool scaled_in =
      !s_.strategy_history.empty() && s_.strategy_history.back() == kStrategyDowngrade;
  const bool in_place = s_.restart_fault_process && s_.config.Has(kStrategyRecoverInPlace);
  if ((s_.config.Has(kStrategyRecover) || in_place) && !scaled_in) StartScheduleWatch();
  EntryWaitReport();
}

void MachineRun::StartScheduleWatch() {
  s_.schedule_watch = true;
  s_.mailboxes.schedule_result.reset();
  s_.watch_seen = s_.fault_pods;
  absl::Duration limit = kDefaultScheduleWatch;
  int64_t seconds = 0;
  if (absl::SimpleAtoi(s_.view.Annotation(kAnnotationWaitRescheduleTimeout), &seconds) &&
      seconds >= 30 && seconds <= 270) {
    limit = absl::Seconds(seconds);
  }
  SetTimer(TimerKind::kScheduleWatch, limit);
  SetTimer(TimerKind::kScheduleCheck, absl::Seconds(5));
}

void MachineRun::CheckScheduleWatch() {
  if (!s_.schedule_watch || s_.timers.count(TimerKind::kScheduleCheck) > 0) return;
  if (s_.decided == kStrategyDowngrade) {
    s_.schedule_watch = false;
    s_.timers.erase(TimerKind::kScheduleWatch);
    return;
  }
  if (!s_.view.pod_group_running) return;
  bool ok = true;
  if (s_.restart_fault_process) {
    for (int64_t pod : s_.must_exit_pods) {
      const PodView* p = s_.view.Pod(pod);
      if (p == nullptr || !p->ascend_real) ok = false;
    }
  } else {
    bool any = false;
    for (const auto& [pod, _] : s_.fault_pods) {
      const PodView* p = s_.view.Pod(pod);
      if (p == nullptr || !p->ascend_real) continue;
      std::string& seen = s_.watch_seen[pod];
      if (p->uid != seen) {
        seen = p->uid;
        any = true;
      }
    }
    ok = any;
  }
  if (!ok) return;
  s_.schedule_watch = false;
  s_.timers.erase(TimerKind::kScheduleWatch);
  s_.mailboxes.schedule_result = true;
  TryConsumeReports();
}

// A_WAIT_STATUS(s).
void MachineRun::EntryWaitStatus(std::string_view strategy) {
  if (!strategy.empty()) s_.strategy_history.emplace_back(strategy);
  EntryWaitReport();
}

// A_WAIT_RECOVER.
void MachineRun::EntryWaitRecover() {
  s_.strategy_history.emplace_back(kStrategyRecover);
  s_.phase = Phase::kRecoverWait;
  SetTimer(TimerKind::kStepDeadline, kReportWait);
  TryConsumeReports();
}

void MachineRun::OnScheduleResult(bool ok) {
  if (!ok) {
    if (s_.config.Has(kStrategyElasticTraining) && Context().AgentReported(kStrategyDowngrade)) {
      return Raise(MachineEvent::kNeedTryScaleStrategyIn);
    }
    return Raise(MachineEvent::kScheduleTimeout);
  }
  if (s_.restart_fault_process) {
    s_.phase = Phase::kInPlaceClearDelay;
    SetTimer(TimerKind::kStep, kInPlaceClearDelayDuration);
    return;
  }
  WriteReset(WritePurpose::kRecoverClear, ResetOperation::kClear, {}, false, kResetWriteAttempts);
}

// A_KILL_POD.
void MachineRun::EntryKillPod() {
  if (!s_.view.exists) return Reset("job no longer known at kill-pod");
  s_.caches.MoveRetryToNormal();
  ExpandFaults(/*whole_pods=*/true);
  WriteReset(WritePurpose::kKillPod, ResetOperation::kFault, NormalRanks(), false,
             kResetWriteAttempts);
}

// A_LISTEN_SCHEDULE.
void MachineRun::EntryListenSchedule() {
  if (s_.config.platform_mode) return Raise(MachineEvent::kScheduleSuccess);
  WaitIn(Phase::kListenSchedule, kListenScheduleLimit);
  CheckListenSchedule(false);
}

void MachineRun::CheckListenSchedule(bool at_deadline) {
  bool all_new = true;
  for (const auto& [pod, uid] : s_.fault_pods) {
    const PodView* p = s_.view.Pod(pod);
    if (p == nullptr || p->uid == uid) all_new = false;
  }
  if (s_.view.pod_group_running && (all_new || at_deadline)) {
    return Raise(MachineEvent::kScheduleSuccess);
  }
  if (at_deadline) Raise(MachineEvent::kScheduleTimeout);
}

void MachineRun::EntryRestartAll() {
  WriteReset(WritePurpose::kRestartAll, ResetOperation::kRestartAllProcess, {}, false,
             kResetWriteAttempts);
}

void MachineRun::EntryWaitRestartAll() {
  if (s_.config.platform_mode) return Raise(MachineEvent::kRestartFinish);
  WaitIn(Phase::kRestartAllDelay, kRestartAllWait);
}

void MachineRun::EntryClear() {
  WriteReset(WritePurpose::kClear, ResetOperation::kClear, {}, false, kResetWriteAttempts);
}

// A_FAULT_RETRY.
void MachineRun::EntryFaultRetry() {
  PatchPodGroupAwait(WritePurpose::kFaultRetryPause,
                     ProcessRecoverEnablePatch(kProcessRecoverPause));
}

void MachineRun::CheckFaultRetryRunning(bool at_deadline) {
  if (s_.view.pod_group_running) {
    s_.timers.erase(TimerKind::kStep);
    s_.timers.erase(TimerKind::kStepDeadline);
    return PatchPodGroupAwait(WritePurpose::kFaultRetryResume,
                              ProcessRecoverEnablePatch(kProcessRecoverOn));
  }
  if (at_deadline) Raise(MachineEvent::kScheduleTimeout);
}

// A_KILL_JOB.
void MachineRun::EntryKillJob() {
  Send(KillMasterSignal(s_.job_id, s_.uuid));
  // The 60 s enqueue limit of killMaster (§6.4) also raises `finish`.
  SetTimer(TimerKind::kStepDeadline, absl::Seconds(60));
}

// A_DUMP.
void MachineRun::EntryDump() {
  if (s_.uuid.empty()) s_.uuid = NewUuid();
  ExpandFaults();
  s_.staged_signal =
      SaveAndExitSignal(s_.job_id, s_.uuid, PodRanksOf(s_.caches.normal, s_.view.npus_per_pod));
  WriteReset(WritePurpose::kDump, ResetOperation::kFault, NormalRanks(), false, 1);
}

// A_SCALE_IN.
void MachineRun::EntryScaleIn() {
  s_.decided = std::string(kStrategyDowngrade);
  s_.schedule_watch = false;
  s_.timers.erase(TimerKind::kScheduleWatch);
  s_.timers.erase(TimerKind::kScheduleCheck);
  Send(ChangeStrategySignal(s_.job_id, s_.uuid, std::string(kStrategyDowngrade), s_.caches.normal,
                            PodRanksOf(s_.caches.normal, s_.view.npus_per_pod)));
}

// A_SCALE_RUNNING.
void MachineRun::EntryScaleRunning(bool after_fail) {
  if (after_fail) return WaitIn(Phase::kScaleOutBackoff, kScaleOutBackoffDuration);
  s_.phase = Phase::kScaleRunning;
  CheckScaleRunning();
}

void MachineRun::CheckScaleRunning() {
  if (!s_.view.exists) return Raise(MachineEvent::kFinish);
  if (!s_.view.pod_group_running || !AnyFaultPodReplacedAndReal()) return;
  Send(ChangeStrategySignal(s_.job_id, s_.uuid, std::string(kStrategyUpgrade), s_.caches.normal,
                            PodRanksOf(s_.caches.normal, s_.view.npus_per_pod)));
}

void MachineRun::OnWriteDone(bool ok) {
  const WritePurpose purpose = s_.write_purpose;
  s_.write_purpose = WritePurpose::kNone;
  switch (purpose) {
    case WritePurpose::kNone:
      return;
    case WritePurpose::kFlushNotify:
      return Raise(ok ? MachineEvent::kNotifyFinish : MachineEvent::kNotifyFail);
    case WritePurpose::kConfirmFault:
      if (!ok) return Raise(MachineEvent::kWriteConfirmFaultOrWaitResultFaultTimeout);
      WaitIn(Phase::kPlatResultWait, kPlatformPollLimit);
      return CheckPlatResult();
    case WritePurpose::kGlobalReset:
      if (!ok) return Raise(MachineEvent::kNotifyFail);
      return SendStaged();
    case WritePurpose::kDecideInPlace:
      if (!ok) return Raise(MachineEvent::kNotifyFail);
      return SendStaged();
    case WritePurpose::kRecoverClear:
      if (!ok) return Raise(MachineEvent::kClearFail);
      s_.phase = Phase::kRecoverWait;
      return TryConsumeReports();
    case WritePurpose::kKillPod:
      if (!ok) return Reset("reset ConfigMap write failed at kill-pod");
      return Raise(MachineEvent::kFinishKillPod);
    case WritePurpose::kRestartAll:
      return Raise(ok ? MachineEvent::kNotifySuccess : MachineEvent::kNotifyFail);
    case WritePurpose::kClear:
      return Raise(ok ? MachineEvent::kClearSuccess : MachineEvent::kClearFail);
    case WritePurpose::kDump:
      if (!ok) return Reset("reset ConfigMap write failed at dump");
      return SendStaged();
    case WritePurpose::kFaultRetryPause:
      if (!ok) return Raise(MachineEvent::kChangeSwitchPauseError);
      SendNoWait(
          CleanUpExitSignal(s_.job_id, s_.uuid, PodRanksOf(s_.caches.All(), s_.view.npus_per_pod)));
      s_.phase = Phase::kFaultRetryRunning;
      SetTimer(TimerKind::kStep, kFaultRetryFirstCheck);
      SetTimer(TimerKind::kStepDeadline, kFaultRetryLimit);
      return;
    case WritePurpose::kFaultRetryResume:
      return Raise(ok ? MachineEvent::kFinish : MachineEvent::kChangeSwitchEnableError);
  }
}

}  // namespace clusterd::recovery
