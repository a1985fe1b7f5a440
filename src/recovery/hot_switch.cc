// §14 hot switch, and the sub-health gate of §8.6 that starts it.

#include <set>

#include "absl/strings/str_cat.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

MachineRun::GateResult MachineRun::SubHealthGate(std::vector<HardwareFault>& faults) {
  if (!s_.config.HotSwitch()) {
    if (s_.config.GraceExit() && DumpOnly(Context())) return GateResult::kContinue;
    return GateResult::kSkip;
  }
  if (s_.config.framework != kFrameworkPytorch && s_.config.framework != kFrameworkMindspore) {
    AddNote("hot_switch", "framework is neither pytorch nor mindspore: sub-health now ignored");
    s_.config.sub_health_strategy = std::string(kSubHealthIgnore);
    return GateResult::kSkip;
  }
  if (s_.state != State::kInit) return GateResult::kSkip;
  std::set<int64_t> pods;
  std::optional<int64_t> first;
  for (const HardwareFault& f : faults) {
    if (!f.pod_rank.has_value()) continue;
    pods.insert(*f.pod_rank);
    if (*f.pod_rank != 0 && !first.has_value()) first = *f.pod_rank;
  }
  if (!first.has_value()) return GateResult::kSkip;  // only pod 0 (or nothing) is faulty
  if (pods.size() > kMaxHotSwitchPods) {
    AddNote("hot_switch", "more than 10 faulty pods: sub-health now ignored");
    s_.config.sub_health_strategy = std::string(kSubHealthIgnore);
    return GateResult::kSkip;
  }
  std::vector<HardwareFault> kept;
  for (const HardwareFault& f : faults) {
    if (f.pod_rank == first) kept.push_back(f);
  }
  faults = std::move(kept);
  // Not in the reference: a fault delivered for a pod that is gone or was replaced (typically
  // the old pod right after a hot switch, reported from a snapshot taken before its deletion)
  // would start a second hot switch for a pod that no longer runs the rank, which can only time
  // out and turn hot switch off for the job. Such a fault is stale; the next delivery names the
  // rank's current pod if the fault is really there.
  const PodView* current = s_.view.Pod(*first);
  const std::string& fault_uid = faults.front().pod_uid;
  if (!fault_uid.empty() && (current == nullptr || current->uid != fault_uid)) {
    AddNote("hot_switch", absl::StrCat("sub-health fault of pod rank ", *first,
                                       " names a pod that is gone or replaced: skipped"));
    return GateResult::kSkip;
  }
  HotSwitchInfo info;
  info.pod_rank = *first;
  info.pod_uid = faults.front().pod_uid;
  if (const PodView* pod = s_.view.Pod(*first)) info.pod_name = pod->name;
  for (const HardwareFault& f : faults) {
    for (const FaultRank& r : ExpandToPod(f.rank, s_.view.npus_per_pod)) info.faults.push_back(r);
  }
  info.faults = DedupByRank(info.faults);
  s_.hot_switch = std::move(info);
  return GateResult::kHotSwitch;
}

void MachineRun::EntryHotPrepare() {
  Send(HotSwitchSignal(s_.job_id, s_.uuid, kActionHotSwitch, s_.hot_switch.faults));
}

void MachineRun::EntryHotWaitNewPod() {
  PatchPodByRank(s_.hot_switch.pod_rank, HotSwitchPreparePatch());
  WaitIn(Phase::kNewPodWait, kNewPodWaitLimit);
  CheckNewPod();
}

void MachineRun::CheckNewPod() {
  const PodView* faulty = s_.view.Pod(s_.hot_switch.pod_rank);
  const std::string wanted = faulty != nullptr ? faulty->backup_new_pod_name : "";
  for (const PodView& backup : s_.view.backup_pods) {
    if (!backup.running) continue;
    if (!wanted.empty() && backup.name != wanted) continue;
    s_.hot_switch.backup_uid = backup.uid;
    s_.hot_switch.backup_name = backup.name;
    return Raise(MachineEvent::kNewPodRunning);
  }
}

void MachineRun::EntryHotNotify(std::string_view action) {
  Send(HotSwitchSignal(s_.job_id, s_.uuid, action, {}));
}

void MachineRun::EntryHotWaitPauseResult() { EntryWaitReport(); }

void MachineRun::OnPauseResult(const StrategyReport& report) {
  const bool exit = report.strategies.empty() ||
                    (report.strategies.size() == 1 && report.strategies[0] == kStrategyExit);
  Raise(exit ? MachineEvent::kExit : MachineEvent::kMigration);
}

void MachineRun::EntryHotStopJob() {
  PatchPodByRank(0, DeleteForSubHealthPatch());
  Raise(MachineEvent::kNotifySuccess);
}

void MachineRun::EntryHotWaitOldPodDeleted() {
  PatchPodByRank(s_.hot_switch.pod_rank, DeleteForSubHealthPatch());
  WaitIn(Phase::kOldPodDeleteWait, kOldPodDeleteLimit);
  CheckOldPodDeleted();
}

void MachineRun::CheckOldPodDeleted() {
  // Quirk 19: an old pod that is already gone no longer leaves the machine waiting forever.
  for (const auto& [rank, pod] : s_.view.pods) {
    if (pod.uid == s_.hot_switch.pod_uid) return;
  }
  Raise(MachineEvent::kOldPodDeleted);
}

void MachineRun::EntryHotMigrate() {
  Send(ChangeStrategySignal(s_.job_id, s_.uuid, std::string(kStrategyMigration), {}, {}));
}

void MachineRun::EntryHotWaitRestartResult() { EntryWaitReport(); }

void MachineRun::OnRestartResult(const StatusReport& report) {
  if (report.code == kCodeOk) return Raise(MachineEvent::kRestartSuccess);
  if (report.code != kCodeUnRecoverableRetryError) {
    // Quirk 7: the reference ignores other codes and waits with no timer.
    AddNote("hot_switch", absl::StrCat("restart result ", report.code, " treated as failure"));
  }
  Raise(MachineEvent::kRestartFaild);
}

void MachineRun::EntryHotCleanup(bool success) {
  if (success) {
    if (!s_.hot_switch.backup_name.empty()) {
      Emit(PatchPod{s_.hot_switch.backup_name, HotSwitchSuccessCleanupPatch(), 3});
    }
    return Reset("hot switch succeeded");
  }
  s_.config.sub_health_strategy = std::string(kSubHealthIgnore);
  std::string backup = s_.hot_switch.backup_name;
  if (const PodView* faulty = s_.view.Pod(s_.hot_switch.pod_rank)) {
    if (!faulty->backup_new_pod_name.empty()) backup = faulty->backup_new_pod_name;
  }
  if (!s_.hot_switch.pod_name.empty()) {
    Emit(PatchPod{s_.hot_switch.pod_name, HotSwitchFailureCleanupPatch(), 3});
  }
  if (!backup.empty()) {
    Emit(PatchPod{backup, BackupDeletePatch(), 3});
  }
  Reset("hot switch failed");
}

}  // namespace clusterd::recovery
