// A_DECIDE (§7.4, §9.3-§9.8) and A_CHECK (§7.4, §9.9).

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

void MachineRun::EntryDecide() {
  s_.resources_arrived.reset();
  s_.only_dump_or_exit = false;
  DecideWith(Context());
}

void MachineRun::DecideWith(StrategyContext context) {
  const StrategyDecision d = Decide(context);
  if (d.needs_resource_wait) {
    absl::Duration limit = kDefaultResourceWait;
    if (s_.view.mindio_wait_seconds.has_value() && *s_.view.mindio_wait_seconds >= 10 &&
        *s_.view.mindio_wait_seconds <= 3600) {
      limit = absl::Seconds(*s_.view.mindio_wait_seconds - 10);
    }
    WaitIn(Phase::kResourceWait, limit);
    return CheckResourceWait(false);
  }
  std::string strategy = d.strategy;
  if (d.retry_refused_by_agent) {
    // Quirk 15, fixed: keep the retry faults (as normal faults) for the dump/exit signal.
    AddNote("retry_refused", "retry configured but not reported by the agent");
    s_.caches.MoveRetryToNormal();
    ExpandFaults();
  }
  if (strategy == kStrategyDump && s_.nic_recorded && s_.config.framework == kFrameworkMindspore) {
    strategy = std::string(kStrategyExit);
  }
  s_.decided = strategy;
  if (strategy == kStrategyDowngrade) {
    s_.schedule_watch = false;
    s_.timers.erase(TimerKind::kScheduleWatch);
    s_.timers.erase(TimerKind::kScheduleCheck);
  }
  const bool recover_like = strategy == kStrategyRecover || strategy == kStrategyRecoverInPlace;
  if (s_.config.platform_mode && recover_like) {
    WaitIn(Phase::kRankTableWait, kPlatformPollLimit);
    return CheckRankTable(false);
  }
  DecideAfterRankTable();
}

void MachineRun::CheckResourceWait(bool at_deadline) {
  const bool arrived = s_.view.pod_group_running && AnyFaultPodReplacedAndReal();
  if (!arrived && !at_deadline) return;
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  s_.resources_arrived = arrived;
  DecideWith(Context());
}

void MachineRun::CheckRankTable(bool at_deadline) {
  const std::string ready = s_.view.Annotation(kAnnotationRankTableReady);
  if (ready == "true") {
    s_.timers.erase(TimerKind::kStep);
    s_.phase = Phase::kNone;
    return DecideAfterRankTable();
  }
  if (ready.empty() && !at_deadline) return;
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  if (!s_.view.exists) return Reset("PodGroup unreadable after RankTableReady failed");
  if (std::optional<std::string> ps = ReadPlatStrategy(/*exit_allowed=*/true)) {
    s_.plat_strategy = *ps;
  }
  s_.only_dump_or_exit = true;
  DecideWith(Context());
}

void MachineRun::DecideAfterRankTable() {
  if (s_.decided == kStrategyRetry &&
      std::any_of(s_.caches.retry.begin(), s_.caches.retry.end(),
                  [](const FaultRank& f) { return f.type == kFaultTypeNetwork; })) {
    return WaitIn(Phase::kHcclDelay, kHcclConvergence);
  }
  DecideAfterHccl();
}

void MachineRun::DecideAfterHccl() {
  s_.timers.erase(TimerKind::kStep);
  s_.phase = Phase::kNone;
  SendDecided();
}

void MachineRun::SendDecided() {
  const std::string strategy = s_.decided;
  const int d = s_.view.npus_per_pod;
  if (s_.restart_fault_process && strategy == kStrategyRecoverInPlace) {
    // §9.8: write the reset ConfigMap, then `recover` + extraParams recover-in-place.
    std::vector<int64_t> in_place_pods;
    for (int64_t pod : PodRanksOf(s_.caches.normal, d)) {
      if (s_.must_exit_pods.count(pod) == 0) in_place_pods.push_back(pod);
    }
    Signal signal = ChangeStrategySignal(s_.job_id, s_.uuid, std::string(kStrategyRecover),
                                         s_.caches.normal, in_place_pods);
    signal.actions.emplace_back(kActionFaultNodesRestart);
    signal.extra_params = std::string(kExtraRecoverInPlace);
    s_.staged_signal = std::move(signal);
    return WriteReset(WritePurpose::kDecideInPlace, ResetOperation::kFault, NormalRanks(), true,
                      kResetWriteAttempts);
  }
  std::string wire = strategy == kStrategyRecoverInPlace ? std::string(kStrategyRecover) : strategy;
  if (s_.restart_fault_process && strategy != kStrategyRetry) {
    // §9.8: another strategy while restarting in place: every pod must exit.
    std::vector<int64_t> all_pods;
    for (const auto& [pod, _] : s_.fault_pods) all_pods.push_back(pod);
    std::vector<int64_t> newly;
    for (int64_t pod : all_pods) {
      if (s_.must_exit_pods.insert(pod).second) newly.push_back(pod);
    }
    s_.restart_fault_process = false;
    if (!newly.empty()) Emit(ReportNotRetryable{newly});
    Signal signal =
        ChangeStrategySignal(s_.job_id, s_.uuid, wire, s_.caches.normal, PodsNotReplaced(all_pods));
    signal.actions.emplace_back(kActionFaultNodesExit);
    return Send(std::move(signal));
  }
  const std::vector<FaultRank>& faults =
      strategy == kStrategyRetry ? s_.caches.retry : s_.caches.normal;
  std::vector<int64_t> pods = PodRanksOf(faults, d);
  if (strategy == kStrategyRecover) pods = PodsNotReplaced(pods);
  Send(ChangeStrategySignal(s_.job_id, s_.uuid, wire, faults, pods));
}

// A_CHECK.
void MachineRun::EntryCheck() {
  if (!s_.strategy_history.empty() && s_.strategy_history.back() == kStrategyExit) {
    return ApplyCheck(StatusReport{kCodeOk, std::string(kStrategyExit), {}});
  }
  if (s_.result_history.empty()) return Reset("A_CHECK without a RecoverStatus");
  ApplyCheck(s_.result_history.back());
}

void MachineRun::ApplyCheck(const StatusReport& r) {
  const bool isolate_step = s_.state == State::kCheckReportScaleInIsolateRanks;
  auto status = [this](std::string_view value) { PatchPodGroupNoWait(RecoverStatusPatch(value)); };
  const std::string& strategy = r.strategy;
  if (strategy == kStrategyRetry) {
    if (r.code == kCodeOk) {
      status(kStatusRetrySuccess);
      return Raise(MachineEvent::kRecoverSuccess);
    }
    status(kStatusRetryFailed);
    if (r.code == kCodeRecoverableRetryError) return Raise(MachineEvent::kRecoverableRetryError);
    auto drop = [this](std::string_view name) {
      auto& list = s_.agent_strategies;
      list.erase(std::remove(list.begin(), list.end(), name), list.end());
    };
    drop(kStrategyRecover);
    if (r.code == kCodeClientError) drop(kStrategyDump);
    return Raise(MachineEvent::kUnRecoverableRetryError);
  }
  if (strategy == kStrategyRecover) {
    if (r.code == kCodeOk) {
      status(kStatusRecoverSuccess);
      Emit(UpdateFaultJobInfo{{}, true, kFaultJobInfoCleanupDelay});
      return Raise(MachineEvent::kRecoverSuccess);
    }
    status(kStatusRecoverFailed);
    return Raise(MachineEvent::kRecoverFail);
  }
  if (strategy == kStrategyDowngrade) {
    if (r.code == kCodeExitIsolateRanks && isolate_step) {
      std::vector<int64_t> pods;
      for (int64_t pod : PodRanksOf(
               [&r] {
                 std::vector<FaultRank> faults;
                 for (int64_t rank : r.isolate_rank_ids) faults.push_back({rank, 1});
                 return faults;
               }(),
               s_.view.npus_per_pod)) {
        if (s_.fault_pods.count(pod) > 0) continue;
        AddFaultPod(pod, "");
        pods.push_back(pod);
      }
      return Send(FaultNodesExitSignal(s_.job_id, s_.uuid, pods));
    }
    if (r.code == kCodeOk && !isolate_step) return Raise(MachineEvent::kScaleInSuccess);
    if (r.code == kCodeOk || r.code == kCodeExitIsolateRanks) {
      // Quirk 6 (0 before 201) and a 201 after the isolation: the reference stalls until a
      // reset; we treat them as a failed scale-in and re-decide.
      AddNote("scale_in_order", absl::StrCat("downgrade status ", r.code, " in state ",
                                             Sv(StateName(s_.state)), " treated as failure"));
    }
    return Raise(MachineEvent::kRecoverFail);
  }
  if (strategy == kStrategyUpgrade) {
    return Raise(r.code == kCodeOk ? MachineEvent::kScaleOutSuccess : MachineEvent::kRecoverFail);
  }
  if (strategy == kStrategyDump) {
    status(r.code == kCodeOk ? kStatusDumpSuccess : kStatusDumpFailed);
    SendNoWait(
        CleanUpExitSignal(s_.job_id, s_.uuid, PodRanksOf(s_.caches.All(), s_.view.npus_per_pod)));
    return Raise(MachineEvent::kCheckFinish);
  }
  if (strategy == kStrategyExit) {
    status(kStatusExitCompleted);
    return Raise(MachineEvent::kCheckFinish);
  }
  Reset(absl::StrCat("RecoverStatus names unknown strategy \"", strategy, "\""));
}

}  // namespace clusterd::recovery
