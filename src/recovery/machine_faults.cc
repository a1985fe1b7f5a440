// §8: faults from the fault centre (hardware) and from ReportProcessFault (software), merged
// into the caches; the pre-exit signal; rank expansion and pod bookkeeping.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "model/fault_codes.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

void MachineRun::MergeFaults(const std::vector<FaultRank>& faults) { s_.caches.Merge(faults); }

void MachineRun::AddFaultPod(int64_t pod_rank, const std::string& uid) {
  // A pod rank keeps the first UID seen in the cycle (§8.4).
  if (s_.fault_pods.count(pod_rank) > 0) return;
  s_.fault_pods[pod_rank] = uid.empty() ? s_.view.PodUid(pod_rank) : uid;
}

void MachineRun::MarkInPlace(int64_t pod_rank, bool possible, bool software) {
  // §9.8: recorded only while the live PodGroup passes the gate.
  if (!s_.config.process_recover_enabled || !s_.config.Has(kStrategyRecoverInPlace)) return;
  if (!InPlaceGateOpen(s_.view.pod_group_labels, s_.view.pod_group_annotations)) return;
  auto [it, inserted] = s_.in_place.try_emplace(pod_rank, InPlacePod{possible, software});
  if (!inserted) {
    // A pod is restartable in place only if every fault it has is.
    it->second.possible = it->second.possible && possible;
    it->second.software = it->second.software && software;
  }
}

bool MachineRun::SupportRetryNow() const { return SupportRetry(Context()); }

void MachineRun::MoveRetryIfNeeded() {
  if (s_.caches.retry.empty()) return;
  const bool last_was_retry =
      !s_.result_history.empty() && s_.result_history.back().strategy == kStrategyRetry;
  if (last_was_retry || !s_.caches.normal.empty() || !SupportRetryNow() ||
      s_.caches.RetryMixesTypes()) {
    s_.caches.MoveRetryToNormal();
  }
}

void MachineRun::ExpandFaults(bool whole_pods) {
  const int d = s_.view.npus_per_pod;
  std::vector<FaultRank> expanded;
  for (const FaultRank& f : s_.caches.normal) {
    const int64_t pod = PodRankOf(f.rank, d);
    const auto in_place = s_.in_place.find(pod);
    const bool keep_rank = !whole_pods && s_.restart_fault_process &&
                           in_place != s_.in_place.end() && in_place->second.possible &&
                           s_.must_exit_pods.count(pod) == 0;
    if (keep_rank) {
      expanded.push_back({f.rank, kFaultTypeNormal});
    } else {
      const std::vector<FaultRank> all = ExpandToPod(f.rank, d);
      expanded.insert(expanded.end(), all.begin(), all.end());
    }
  }
  // Retry faults that were not moved first are discarded (§8.4).
  s_.caches.normal = DedupByRank(expanded);
  s_.caches.retry.clear();
  for (int64_t pod : PodRanksOf(s_.caches.normal, d)) AddFaultPod(pod, "");
}

std::vector<int64_t> MachineRun::NormalRanks() const {
  std::vector<int64_t> ranks;
  for (const FaultRank& f : s_.caches.normal) ranks.push_back(f.rank);
  return ranks;
}

bool MachineRun::PodReplaced(int64_t pod_rank) const {
  const std::string current = s_.view.PodUid(pod_rank);
  if (current.empty()) return true;  // the pod is gone
  auto it = s_.origin_pods.find(pod_rank);
  if (it != s_.origin_pods.end()) return current != it->second;
  it = s_.fault_pods.find(pod_rank);
  return it != s_.fault_pods.end() && !it->second.empty() && current != it->second;
}

std::vector<int64_t> MachineRun::PodsNotReplaced(const std::vector<int64_t>& pod_ranks) const {
  std::vector<int64_t> out;
  for (int64_t pod : pod_ranks) {
    if (!PodReplaced(pod)) out.push_back(pod);
  }
  return out;
}

bool MachineRun::AnyFaultPodReplacedAndReal() const {
  for (const auto& [pod_rank, uid] : s_.fault_pods) {
    const PodView* pod = s_.view.Pod(pod_rank);
    if (pod != nullptr && pod->ascend_real && pod->uid != uid) return true;
  }
  return false;
}

// §8.1.
void MachineRun::On(const HardwareFaultsPublished& e) {
  std::vector<HardwareFault> faults = e.faults;
  const std::string& health = e.health;
  std::set<int64_t> fault_pods_now;
  for (const HardwareFault& f : faults) {
    if (f.pod_rank.has_value()) fault_pods_now.insert(*f.pod_rank);
  }
  s_.hw_fault_pods = std::move(fault_pods_now);

  // Step 2: sub-health gate.
  bool hot_switch = false;
  if (health == kSubHealthy) {
    switch (SubHealthGate(faults)) {
      case GateResult::kSkip:
        return;
      case GateResult::kContinue:
        break;
      case GateResult::kHotSwitch:
        hot_switch = true;
        break;
    }
  }

  // Step 3: convert.
  const bool scaled_in =
      !s_.strategy_history.empty() && s_.strategy_history.back() == kStrategyDowngrade;
  std::vector<FaultRank> converted;
  std::map<int64_t, std::string> pod_of_rank_uid;  // pod rank -> UID as reported
  std::map<int64_t, int64_t> pod_of_rank;          // global rank -> pod rank
  std::map<int64_t, bool> in_place_of_pod;
  for (const HardwareFault& f : faults) {
    if (f.pod_uid.empty() || !f.pod_rank.has_value()) continue;
    if (f.fault_level == kLevelSubHealthFault && health != kSubHealthy) continue;
    const int64_t pod = *f.pod_rank;
    if (scaled_in && s_.fault_pods.count(pod) > 0) continue;
    AddFaultPod(pod, f.pod_uid);
    int type = kFaultTypeNormal;
    if (f.do_step_retry && f.fault_code == model::kFaultCodeUce) type = kFaultTypeUce;
    if (f.do_step_retry && f.fault_code == model::kFaultCodeHcclRetry) type = kFaultTypeNetwork;
    converted.push_back({f.rank, type});
    pod_of_rank_uid[pod] = f.pod_uid;
    pod_of_rank[f.rank] = pod;
    auto [it, inserted] = in_place_of_pod.try_emplace(pod, f.do_restart_in_place);
    if (!inserted) it->second = it->second && f.do_restart_in_place;
  }

  // Step 4: diff against the previous snapshot, which is always replaced.
  std::set<std::string> keys;
  std::vector<FaultRank> added;
  for (const FaultRank& f : converted) {
    std::string key = absl::StrCat(f.rank, "_", f.type);
    if (s_.hw_snapshot.count(key) == 0) added.push_back(f);
    keys.insert(std::move(key));
  }
  s_.hw_snapshot = std::move(keys);

  // Step 5.
  if (converted.empty()) {
    if (s_.phase == Phase::kInPlaceWait && InPlaceWaitDone()) GlobalAfterInPlaceWait();
    return;
  }
  MergeFaults(converted);
  s_.health = health;
  for (const auto& [pod, possible] : in_place_of_pod) MarkInPlace(pod, possible, false);
  if (s_.phase == Phase::kInPlaceWait && InPlaceWaitDone()) GlobalAfterInPlaceWait();

  // Step 6.
  if (hot_switch) return Raise(MachineEvent::kBeginHotSwitch);
  // Step 7.
  if (added.empty()) return;
  // Step 8.
  const bool only_retry = std::all_of(added.begin(), added.end(), [](const FaultRank& f) {
    return f.type == kFaultTypeUce || f.type == kFaultTypeNetwork;
  });
  // In platform mode platStrategy is empty outside a cycle, so the reference never lets a
  // retry-class fault start one (§9.6); we let it start and the platform's strategy, read at
  // A_FLUSH, decides whether it stays retry-class (see docs/compatibility-recovery.md).
  const bool retry_possible =
      SupportRetryNow() ||
      (s_.config.platform_mode && s_.config.Has(kStrategyRetry) && s_.plat_strategy.empty());
  if (retry_possible && only_retry) return Raise(MachineEvent::kFaultOccur);

  // Pre-exit: no faultOccur; the client's ReportProcessFault starts the cycle.
  if (!s_.pre_exit.has_value()) s_.pre_exit = PendingPreExit{};
  for (const FaultRank& f : added) {
    s_.pre_exit->faults.push_back(f);
    const int64_t pod = pod_of_rank[f.rank];
    s_.pre_exit->pods.emplace(pod, pod_of_rank_uid[pod]);
  }
  if (s_.state != State::kInit) return FlushPreExit();
  if (s_.timers.count(TimerKind::kPreExitGrace) == 0) {
    SetTimer(TimerKind::kPreExitGrace, kPreExitGraceLimit);
  }
}

void MachineRun::FlushPreExit() {
  s_.timers.erase(TimerKind::kPreExitGrace);
  if (!s_.pre_exit.has_value()) return;
  const PendingPreExit pending = std::move(*s_.pre_exit);
  s_.pre_exit.reset();
  std::vector<int64_t> pods;
  for (const auto& [pod, uid] : pending.pods) {
    // Only pods that are still the original ones of the cycle.
    const auto origin = s_.origin_pods.find(pod);
    if (origin == s_.origin_pods.end() || origin->second == uid) pods.push_back(pod);
  }
  if (pods.empty()) {
    AddNote("pre_exit_skipped", "no pre-exit: every faulty pod has already been replaced");
    return;
  }
  // A fresh uuid that is not stored (§6.7).
  SendNoWait(PreExitSignal(s_.job_id, NewUuid(), pending.faults, pods));
}

void MachineRun::RefreshOrigins() {
  // §6.1: a new pod becomes the original of its rank 10 s after it appears, if the controller
  // is in INIT then. Outside INIT nothing changes (the reset at the end of the cycle re-reads
  // every pod anyway).
  s_.timers.erase(TimerKind::kOriginRefresh);
  if (s_.state != State::kInit) return;
  std::optional<absl::Time> next;
  for (const auto& [rank, pod] : s_.view.pods) {
    auto it = s_.origin_pods.find(rank);
    if (it != s_.origin_pods.end() && it->second == pod.uid) continue;
    const absl::Time due = pod.created + kOriginRefreshDelay;
    if (due <= now_) {
      s_.origin_pods[rank] = pod.uid;
    } else if (!next.has_value() || due < *next) {
      next = due;
    }
  }
  if (next.has_value()) {
    s_.timers[TimerKind::kOriginRefresh] = *next;
    Emit(ArmTimer{TimerKind::kOriginRefresh, *next});
  }
}

// §8.2.
void MachineRun::On(const ProcessFaultReported& e) {
  Reply(e.ticket, kCodeOk, std::string(kInfoReceiveProcessFault));
  MergeFaults(e.faults);
  const std::vector<FaultRank> cached = s_.caches.All();
  const bool all_retry =
      std::all_of(cached.begin(), cached.end(), [](const FaultRank& f) { return IsRetryClass(f); });
  const int d = s_.view.npus_per_pod;
  for (int64_t pod : PodRanksOf(e.faults, d)) {
    if (s_.fault_pods.count(pod) == 0) {
      PatchPodByRank(pod, FaultTypePatch(all_retry));
      AddFaultPod(pod, "");
    }
    MarkInPlace(pod, true, true);
  }
  const bool any_normal = std::any_of(e.faults.begin(), e.faults.end(), [](const FaultRank& f) {
    return f.type == kFaultTypeNormal;
  });
  if (any_normal) {
    s_.health = std::string(kUnHealthy);
    return Raise(MachineEvent::kFaultOccur);
  }
  if (!e.faults.empty()) Emit(ReportRetryFaults{e.faults, now_});
}

}  // namespace clusterd::recovery
