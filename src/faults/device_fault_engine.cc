#include "faults/device_fault_engine.h"

#include <algorithm>
#include <cstdlib>

#include "faults/health.h"

namespace clusterd::faults {

using model::FaultLevel;

namespace {

// §5.6 special rule: AIC/AIV bus errors within this window of an HBM multi-bit fault are its
// side effects.
constexpr int64_t kHbmAssociationMs = 5000;

bool IsBusCode(FaultCode code) { return code == kAicBus || code == kAivBus; }

constexpr int Idx(Plane p) { return static_cast<int>(p); }

}  // namespace

DeviceFaultEngine::DeviceFaultEngine(DeviceEngineOptions options, FaultPolicyPtr policy,
                                     int64_t start_ms)
    : options_(std::move(options)),
      policy_(std::move(policy)),
      start_ms_(start_ms),
      last_cycle_ms_(start_ms) {
  npus_.reserve(options_.npu_ids.size());
  for (int id : options_.npu_ids) {
    NpuFaultState npu;
    npu.id = id;
    npu.name = options_.profile.NpuName(id);
    npus_.push_back(std::move(npu));
  }
}

NpuFaultState* DeviceFaultEngine::FindNpu(int id) {
  for (NpuFaultState& npu : npus_) {
    if (npu.id == id) return &npu;
  }
  return nullptr;
}

const NpuFaultState* DeviceFaultEngine::Npu(int id) const {
  for (const NpuFaultState& npu : npus_) {
    if (npu.id == id) return &npu;
  }
  return nullptr;
}

bool DeviceFaultEngine::SetResetting(int npu_id, bool resetting) {
  NpuFaultState* npu = FindNpu(npu_id);
  if (npu == nullptr) return false;
  npu->resetting = resetting;
  npu->dirty = true;
  ComputeLevels(*npu);
  return true;
}

bool DeviceFaultEngine::SetForcedIsolation(int npu_id, bool isolate) {
  NpuFaultState* npu = FindNpu(npu_id);
  if (npu == nullptr) return false;
  npu->forced_isolate = isolate;
  npu->dirty = true;
  ComputeLevels(*npu);
  return true;
}

NpuFaultState* DeviceFaultEngine::FindNpu(std::string_view name) {
  for (NpuFaultState& npu : npus_) {
    if (npu.name == name) return &npu;
  }
  return nullptr;
}

bool DeviceFaultEngine::Submit(const NpuFaultEvent& event) {
  NpuFaultState* npu = FindNpu(event.npu);
  if (npu == nullptr) return false;
  npu->pending.push_back(event);
  npu->dirty = true;
  return true;
}

CycleResult DeviceFaultEngine::RunCycle(int64_t now_ms) {
  CycleResult result;
  for (NpuFaultState& npu : npus_) {
    // An NPU without new input whose next deadline has not come cannot change: skip it.
    if (!npu.dirty && !(npu.next_deadline_ms.has_value() && *npu.next_deadline_ms <= now_ms)) {
      continue;
    }
    StartCycle(npu);
    ApplyHbmRule(npu, now_ms, result.stats);
    ApplyEvents(npu, now_ms, result.stats);
    AccountDurations(npu, now_ms);
    EvaluateFrequencies(npu, now_ms, result);
    ReleaseAutofill(npu, now_ms, result);
    ComputeLevels(npu);
    npu.dirty = false;
    npu.next_deadline_ms = NpuDeadlineMs(npu);
  }
  last_cycle_ms_ = now_ms;
  return result;
}

// §5.4 step 6, deferred to the start of the next cycle so the previous cycle's results (which
// the agent renders) still include what was to be reported once.
void DeviceFaultEngine::StartCycle(NpuFaultState& npu) {
  for (auto& list : npu.codes) {
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const ActiveCode& c) { return c.remove_next_cycle; }),
               list.end());
    for (ActiveCode& c : list) c.added_this_cycle = false;
  }
  for (FaultCode code : npu.clear_frequency_next_cycle) {
    if (auto it = npu.frequency.find(code); it != npu.frequency.end()) it->second.Clear();
  }
  npu.clear_frequency_next_cycle.clear();
}

void DeviceFaultEngine::ApplyHbmRule(NpuFaultState& npu, int64_t now_ms, CycleStats& stats) {
  if (policy_->customization.Duration(kHbmMultiBit) == nullptr) {
    // Rule off (or switched off by a reload): anything held goes through normally.
    npu.pending.insert(npu.pending.end(), npu.held_bus.begin(), npu.held_bus.end());
    npu.held_bus.clear();
    return;
  }
  for (const NpuFaultEvent& e : npu.pending) {
    if (e.code == kHbmMultiBit && e.assertion != Assertion::kRecover) {
      npu.last_hbm_fault_ms =
          std::max(npu.last_hbm_fault_ms, e.alarm_time_ms ? e.alarm_time_ms : now_ms);
    }
  }
  auto bus_begin = std::stable_partition(npu.pending.begin(), npu.pending.end(),
                                         [](const NpuFaultEvent& e) { return !IsBusCode(e.code); });
  npu.held_bus.insert(npu.held_bus.end(), bus_begin, npu.pending.end());
  npu.pending.erase(bus_begin, npu.pending.end());
  std::vector<NpuFaultEvent> still_held;
  for (NpuFaultEvent& e : npu.held_bus) {
    if (e.alarm_time_ms == 0) e.alarm_time_ms = now_ms;
    if (npu.last_hbm_fault_ms >= 0 &&
        std::llabs(e.alarm_time_ms - npu.last_hbm_fault_ms) <= kHbmAssociationMs) {
      ++stats.bus_events_filtered;
    } else if (e.alarm_time_ms < now_ms - kHbmAssociationMs) {
      npu.pending.push_back(e);
    } else {
      still_held.push_back(e);
    }
  }
  npu.held_bus = std::move(still_held);
}

void DeviceFaultEngine::ApplyEvents(NpuFaultState& npu, int64_t now_ms, CycleStats& stats) {
  duration_scratch_.clear();
  if (npu.pending.empty()) return;
  for (NpuFaultEvent& e : npu.pending) {
    if (e.alarm_time_ms == 0) e.alarm_time_ms = now_ms;
  }
  auto by_time = [](const NpuFaultEvent& a, const NpuFaultEvent& b) {
    return a.alarm_time_ms < b.alarm_time_ms;
  };
  if (!std::is_sorted(npu.pending.begin(), npu.pending.end(), by_time)) {
    std::stable_sort(npu.pending.begin(), npu.pending.end(), by_time);
  }
  const FaultCustomization& custom = policy_->customization;
  for (const NpuFaultEvent& e : npu.pending) {
    if (e.code == kResetFinished) {
      ++stats.events_ignored;
      continue;
    }
    const Plane plane = PlaneOf(e.code);
    if (plane == Plane::kNetwork && !options_.profile.has_network()) {
      ++stats.events_dropped;
      continue;
    }
    ++stats.events_applied;
    if (plane == Plane::kChip) {
      if (e.severity.has_value()) {
        npu.severity[e.code] = *e.severity;
      } else {
        npu.severity.erase(e.code);
      }
    }
    const int64_t t = e.alarm_time_ms;
    const bool has_frequency = custom.Frequency(e.code) != nullptr;
    const bool has_duration = custom.Duration(e.code) != nullptr;
    auto& list = npu.codes[Idx(plane)];
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const ActiveCode& c) { return c.code == e.code; });
    if (e.assertion == Assertion::kRecover) {
      if (it != list.end()) {
        if (it->added_this_cycle) {
          it->remove_next_cycle = true;  // report the blip once
        } else {
          list.erase(it);
        }
        if (has_frequency && !has_duration) {
          npu.frequency[e.code].RecordRecover(t);
          npu.frequency_touched.push_back(e.code);
        }
      }
      if (has_duration) duration_scratch_.push_back({e.code, {false, t}});
      continue;
    }
    const bool once = e.assertion == Assertion::kOnce;
    if (it != list.end()) {
      if (!once) it->remove_next_cycle = false;
      it->first_seen_ms = std::min(it->first_seen_ms, t);
    } else {
      list.push_back(ActiveCode{e.code, t, once, true});
    }
    if (has_frequency && !has_duration) {
      FrequencyTracker& tracker = npu.frequency[e.code];
      tracker.RecordFault(t);
      if (once) tracker.RecordRecover(t);
      npu.frequency_touched.push_back(e.code);
    }
    if (has_duration && !once) duration_scratch_.push_back({e.code, {true, t}});
  }
  npu.pending.clear();
}

void DeviceFaultEngine::AccountDurations(NpuFaultState& npu, int64_t now_ms) {
  const FaultCustomization& custom = policy_->customization;
  for (const auto& [code, event] : duration_scratch_) npu.duration.try_emplace(code);
  for (auto& [code, tracker] : npu.duration) {
    const DurationPolicy* policy = custom.Duration(code);
    if (policy == nullptr) continue;
    events_scratch_.clear();
    for (const auto& [c, event] : duration_scratch_) {
      if (c == code) events_scratch_.push_back(event);
    }
    if (events_scratch_.empty()) {
      // Nothing new and nothing due: the tracker cannot move.
      const std::optional<int64_t> due = tracker.NextDeadlineMs(*policy);
      if (!due.has_value() || *due > now_ms) continue;
    }
    transitions_scratch_.clear();
    tracker.Advance(events_scratch_, *policy, now_ms, &transitions_scratch_);
    // §5.6 step 3: with FaultFrequency too, only timeouts count as occurrences.
    if (custom.Frequency(code) != nullptr) {
      for (const DurationTransition& t : transitions_scratch_) {
        FrequencyTracker& freq = npu.frequency[code];
        npu.frequency_touched.push_back(code);
        if (t.timed_out) {
          freq.RecordFault(t.fault_alarm_time_ms);
        } else {
          freq.RecordRecover(t.fault_alarm_time_ms);
        }
      }
    }
    // Step 4: the reason lives exactly while timed out.
    if (tracker.timed_out()) {
      UpsertReason(npu, EscalationReason{code, UpgradeType::kDuration, policy->handling,
                                         tracker.fault_alarm_time_ms(), PlaneOf(code)});
    } else {
      RemoveReason(npu, code, UpgradeType::kDuration, nullptr);
    }
  }
}

void DeviceFaultEngine::EvaluateFrequencies(NpuFaultState& npu, int64_t now_ms,
                                            CycleResult& result) {
  const FaultCustomization& custom = policy_->customization;
  auto released = [&](const FrequencyPolicy& policy, const FrequencyTracker& tracker) {
    return tracker.last_recover_ms() >= tracker.last_fault_ms() &&
           policy.release_window_ms.has_value() &&
           now_ms - tracker.last_recover_ms() > *policy.release_window_ms;
  };
  // Codes with a new occurrence or recovery: the whole §5.5 evaluation.
  std::vector<FaultCode>& touched = npu.frequency_touched;
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (FaultCode code : touched) {
    const FrequencyPolicy* policy = custom.Frequency(code);
    auto it = npu.frequency.find(code);
    if (policy == nullptr || it == npu.frequency.end()) continue;
    FrequencyTracker& tracker = it->second;
    tracker.DropBefore((now_ms / 1000) * 1000 - policy->time_window_ms);
    if (static_cast<int64_t>(tracker.count()) >= policy->times) {
      UpsertReason(npu, EscalationReason{code, UpgradeType::kFrequency, policy->handling,
                                         tracker.last_fault_ms(), PlaneOf(code)});
      if (policy->handling == FaultLevel::kManuallySeparateNPU) npu.manual = true;
      npu.clear_frequency_next_cycle.push_back(code);
    } else if (released(*policy, tracker)) {
      if (RemoveReason(npu, code, UpgradeType::kFrequency, &result)) LeaveManualIfUnsupported(npu);
    } else if (npu.HasReason(code, UpgradeType::kFrequency)) {
      // Escalated: a new occurrence refreshes the reason instead of accumulating.
      UpsertReason(npu, EscalationReason{code, UpgradeType::kFrequency, policy->handling,
                                         tracker.last_fault_ms(), PlaneOf(code)});
      npu.clear_frequency_next_cycle.push_back(code);
    }
  }
  // Other escalated codes: without a new occurrence only the release by time can apply.
  std::vector<FaultCode> expired;
  for (const EscalationReason& r : npu.reasons) {
    if (r.type != UpgradeType::kFrequency ||
        std::binary_search(touched.begin(), touched.end(), r.code)) {
      continue;
    }
    const FrequencyPolicy* policy = custom.Frequency(r.code);
    auto it = npu.frequency.find(r.code);
    if (policy != nullptr && it != npu.frequency.end() && released(*policy, it->second)) {
      expired.push_back(r.code);
    }
  }
  for (FaultCode code : expired) {
    if (RemoveReason(npu, code, UpgradeType::kFrequency, &result)) LeaveManualIfUnsupported(npu);
  }
  touched.clear();
}

void DeviceFaultEngine::ReleaseAutofill(NpuFaultState& npu, int64_t now_ms, CycleResult& result) {
  const std::optional<int64_t> window = policy_->customization.MaxReleaseWindowMs();
  if (!window.has_value() || now_ms - start_ms_ <= *window) return;
  if (RemoveReason(npu, 0, UpgradeType::kAutofill, &result)) LeaveManualIfUnsupported(npu);
}

void DeviceFaultEngine::LeaveManualIfUnsupported(NpuFaultState& npu) {
  if (npu.manual && !npu.HasManualReason()) {
    npu.manual = false;
    npu.manual_published = false;
  }
}

FaultLevel DeviceFaultEngine::CodeLevel(const NpuFaultState& npu, Plane plane,
                                        FaultCode code) const {
  if (plane == Plane::kNetwork) return policy_->codes.NetworkCodeLevel(code);
  Severity severity;
  if (auto it = npu.severity.find(code); it != npu.severity.end()) severity = it->second;
  return policy_->codes.ChipCodeLevel(code, severity);
}

void DeviceFaultEngine::ComputeLevels(NpuFaultState& npu) {
  // A failed hot reset isolates the NPU while its fault persists (§3.6).
  if (npu.forced_isolate && npu.codes[Idx(Plane::kChip)].empty()) npu.forced_isolate = false;
  for (Plane plane : {Plane::kChip, Plane::kNetwork}) {
    FaultLevel level = plane == Plane::kChip ? FaultLevel::kNormalNPU : FaultLevel::kNormalNetwork;
    // Decision (docs/compatibility-node.md): the device level is the most severe per-code
    // level, so an unknown severe code is not masked by a known minor one (§3.2 quirk).
    for (const ActiveCode& c : npu.codes[Idx(plane)]) {
      level = model::MostSevere(level, CodeLevel(npu, plane, c.code));
    }
    for (const EscalationReason& r : npu.reasons) {
      if (r.plane == plane) level = model::MostSevere(level, r.level);
    }
    if (plane == Plane::kChip && npu.manual) {
      level = model::MostSevere(level, FaultLevel::kManuallySeparateNPU);
    }
    if (plane == Plane::kChip && npu.forced_isolate) {
      level = model::MostSevere(level, FaultLevel::kSeparateNPU);
    }
    npu.level[Idx(plane)] = level;
  }
  const bool in_use = in_use_.contains(npu.id);
  npu.chip_healthy = ChipHealthy(npu.level[Idx(Plane::kChip)], in_use, options_.grace_tolerance);
  npu.network_healthy = NetworkHealthy(npu.level[Idx(Plane::kNetwork)]);
  if (npu.resetting) {
    // The whole ring is unusable while it resets (§3.4).
    npu.chip_healthy = false;
    npu.network_healthy = false;
  }
}

void DeviceFaultEngine::UpsertReason(NpuFaultState& npu, const EscalationReason& reason) {
  for (EscalationReason& r : npu.reasons) {
    if (r.type == reason.type && r.code == reason.code) {
      r = reason;
      return;
    }
  }
  npu.reasons.push_back(reason);
}

bool DeviceFaultEngine::RemoveReason(NpuFaultState& npu, FaultCode code, UpgradeType type,
                                     CycleResult* result) {
  bool removed = false;
  for (auto it = npu.reasons.begin(); it != npu.reasons.end();) {
    if (it->type == type && (type == UpgradeType::kAutofill || it->code == code)) {
      if (result != nullptr) result->released.push_back({npu.name, ToModel(*it)});
      it = npu.reasons.erase(it);
      removed = true;
    } else {
      ++it;
    }
  }
  return removed;
}

std::optional<int64_t> DeviceFaultEngine::NpuDeadlineMs(const NpuFaultState& npu) const {
  std::optional<int64_t> best;
  auto consider = [&best](int64_t t) {
    if (!best.has_value() || t < *best) best = t;
  };
  const FaultCustomization& custom = policy_->customization;
  for (const auto& list : npu.codes) {
    for (const ActiveCode& c : list) {
      if (c.remove_next_cycle) consider(last_cycle_ms_);
    }
  }
  for (const NpuFaultEvent& e : npu.held_bus) consider(e.alarm_time_ms + kHbmAssociationMs + 1);
  for (const auto& [code, tracker] : npu.duration) {
    if (const DurationPolicy* p = custom.Duration(code)) {
      if (auto t = tracker.NextDeadlineMs(*p)) consider(*t);
    }
  }
  for (const EscalationReason& r : npu.reasons) {
    if (r.type == UpgradeType::kAutofill) {
      if (auto window = custom.MaxReleaseWindowMs()) consider(start_ms_ + *window + 1);
      continue;
    }
    if (r.type != UpgradeType::kFrequency) continue;
    const FrequencyPolicy* p = custom.Frequency(r.code);
    auto it = npu.frequency.find(r.code);
    if (p == nullptr || !p->release_window_ms.has_value() || it == npu.frequency.end()) continue;
    if (it->second.last_recover_ms() >= it->second.last_fault_ms()) {
      consider(it->second.last_recover_ms() + *p->release_window_ms + 1);
    }
  }
  return best;
}

std::optional<int64_t> DeviceFaultEngine::NextDeadlineMs() const {
  std::optional<int64_t> best;
  for (const NpuFaultState& npu : npus_) {
    std::optional<int64_t> t =
        npu.dirty ? std::optional<int64_t>(last_cycle_ms_) : npu.next_deadline_ms;
    if (t.has_value() && (!best.has_value() || *t < *best)) best = t;
  }
  return best;
}

void DeviceFaultEngine::MarkAllDirty() {
  for (NpuFaultState& npu : npus_) npu.dirty = true;
}

void DeviceFaultEngine::SetPolicy(FaultPolicyPtr policy) {
  policy_ = std::move(policy);
  MarkAllDirty();
  const FaultCustomization& custom = policy_->customization;
  for (NpuFaultState& npu : npus_) {
    for (auto it = npu.reasons.begin(); it != npu.reasons.end();) {
      std::optional<FaultLevel> handling;
      if (it->type == UpgradeType::kFrequency) {
        if (const FrequencyPolicy* p = custom.Frequency(it->code)) handling = p->handling;
      } else if (it->type == UpgradeType::kDuration) {
        if (const DurationPolicy* p = custom.Duration(it->code)) handling = p->handling;
      } else {
        ++it;  // autofill reasons are kept
        continue;
      }
      if (!handling.has_value()) {
        it = npu.reasons.erase(it);
      } else {
        it->level = *handling;
        ++it;
      }
    }
    absl::erase_if(npu.frequency,
                   [&](const auto& entry) { return custom.Frequency(entry.first) == nullptr; });
    absl::erase_if(npu.duration,
                   [&](const auto& entry) { return custom.Duration(entry.first) == nullptr; });
  }
}

void DeviceFaultEngine::SetNpusInUse(absl::flat_hash_set<int> npu_ids) {
  in_use_ = std::move(npu_ids);
  MarkAllDirty();
}

std::vector<ReleasedReason> DeviceFaultEngine::ApplyPublishedManualList(
    const std::vector<std::string>& names) {
  std::vector<ReleasedReason> released;
  for (NpuFaultState& npu : npus_) {
    if (!npu.manual || !npu.manual_published) continue;
    if (std::find(names.begin(), names.end(), npu.name) != names.end()) continue;
    npu.manual = false;
    npu.manual_published = false;
    npu.dirty = true;
    for (auto it = npu.reasons.begin(); it != npu.reasons.end();) {
      if (it->level == FaultLevel::kManuallySeparateNPU) {
        released.push_back({npu.name, ToModel(*it)});
        it = npu.reasons.erase(it);
      } else {
        ++it;
      }
    }
    ComputeLevels(npu);
  }
  return released;
}

void DeviceFaultEngine::MarkPublished(const std::vector<std::string>& names) {
  for (NpuFaultState& npu : npus_) {
    if (npu.manual && std::find(names.begin(), names.end(), npu.name) != names.end()) {
      npu.manual_published = true;
    }
  }
}

void DeviceFaultEngine::Restore(const std::vector<std::string>& manual_names,
                                const model::UpgradeFaultReasons& reasons, int64_t now_ms) {
  for (const std::string& name : manual_names) {
    if (NpuFaultState* npu = FindNpu(name)) {
      npu->manual = true;
      npu->manual_published = true;
    }
  }
  for (const auto& [name, list] : reasons) {
    NpuFaultState* npu = FindNpu(name);
    if (npu == nullptr) continue;
    for (const model::UpgradeFaultReason& r : list) {
      const std::optional<FaultLevel> level = model::ParseFaultLevel(r.fault_level);
      if (!level.has_value()) continue;
      if (*level == FaultLevel::kManuallySeparateNPU && !npu->manual) continue;
      if (r.upgrade_type == model::kUpgradeTypeAutofill) {
        if (npu->manual) {
          UpsertReason(*npu, {0, UpgradeType::kAutofill, *level, r.upgrade_time, Plane::kChip});
        }
        continue;
      }
      const std::optional<FaultCode> code = ParseHexCode(r.fault_code);
      if (!code.has_value()) continue;
      if (r.upgrade_type == model::kUpgradeTypeFrequency) {
        UpsertReason(*npu,
                     {*code, UpgradeType::kFrequency, *level, r.upgrade_time, PlaneOf(*code)});
        npu->frequency[*code].Restore(r.upgrade_time, now_ms);
      } else if (r.upgrade_type == model::kUpgradeTypeDuration) {
        UpsertReason(*npu, {*code, UpgradeType::kDuration, *level, r.upgrade_time, PlaneOf(*code)});
        npu->duration[*code].RestoreTimedOut(r.upgrade_time, now_ms);
      }
    }
  }
  for (NpuFaultState& npu : npus_) {
    if (npu.manual && !npu.HasManualReason()) {
      UpsertReason(
          npu, {0, UpgradeType::kAutofill, FaultLevel::kManuallySeparateNPU, now_ms, Plane::kChip});
    }
  }
  start_ms_ = now_ms;
  SetPolicy(policy_);  // reconcile the loaded reasons with the configuration
  for (NpuFaultState& npu : npus_) ComputeLevels(npu);
}

std::vector<std::string> DeviceFaultEngine::ManuallySeparatedNames() const {
  std::vector<std::string> names;
  for (const NpuFaultState& npu : npus_) {
    if (npu.manual) names.push_back(npu.name);
  }
  return names;
}

model::UpgradeFaultReason DeviceFaultEngine::ToModel(const EscalationReason& r) const {
  model::UpgradeFaultReason out;
  out.upgrade_time = r.upgrade_time_ms;
  out.fault_code = r.type == UpgradeType::kAutofill ? std::string(model::kAutofillFaultCode)
                                                    : policy_->LowerHex(r.code);
  out.fault_level = std::string(model::FaultLevelName(r.level));
  out.upgrade_type = std::string(UpgradeTypeName(r.type));
  return out;
}

model::UpgradeFaultReasons DeviceFaultEngine::Reasons() const {
  model::UpgradeFaultReasons out;
  for (const NpuFaultState& npu : npus_) {
    if (npu.reasons.empty()) continue;
    auto& list = out[npu.name];
    for (const EscalationReason& r : npu.reasons) list.push_back(ToModel(r));
  }
  return out;
}

}  // namespace clusterd::faults
