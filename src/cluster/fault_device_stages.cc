// The device-centre processors of fault-pipeline.md §7.3 (see fault_stages.h).
#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "cluster/fault_stages.h"

namespace clusterd::cluster {
namespace {

constexpr std::string_view kRestartRequest = model::kLevelRestartRequest;
constexpr std::string_view kRestartBusiness = model::kLevelRestartBusiness;
constexpr std::string_view kNotHandle = model::kLevelNotHandleFault;
constexpr std::string_view kSubHealth = model::kLevelSubHealthFault;
constexpr std::string_view kPreSeparateNpu = model::kLevelPreSeparateNPU;

bool IsChipType(std::string_view fault_type) {
  return fault_type != model::kFaultTypeCardNetworkUnhealthy;
}

// A device's fault time as a hold or window may use it: never later than clusterd's own receive
// time, so that a node clock running ahead cannot hide a fault for longer than the window.
int64_t EffectiveTime(const NpuFault& f) {
  if (f.fault_time > 0 && f.received_ms > 0) return std::min(f.fault_time, f.received_ms);
  return f.fault_time;
}

std::string UpperCase(std::string_view s) {
  std::string out(s);
  absl::AsciiStrToUpper(&out);
  return out;
}

}  // namespace

// ---- 1. PublicFault ----

StageResult ApplyPublicFaults(DeviceRecord& record, const std::vector<PublicFaultOnNode>& faults) {
  StageResult result;
  for (const PublicFaultOnNode& pf : faults) {
    for (int32_t id : pf.device_ids) {
      NpuFault f;
      f.fault_type = std::string(model::kFaultTypePublicFault);
      f.npu_name = record.NpuName(id);
      f.code = pf.code;
      f.level = pf.level;
      f.fault_time = pf.fault_time_s;
      f.received_ms = pf.added_ms;
      result.changed = AddFault(record, std::move(f)) || result.changed;
    }
  }
  return result;
}

// ---- 2. CustomFilter ----

std::optional<int64_t> FilterSeconds(const FaultJobPolicy& policy, std::string_view code,
                                     std::string_view level) {
  if (!code.empty()) {
    const std::string upper = UpperCase(code);
    for (const CustomFilterRule& r : policy.code_rules) {
      if (r.key == upper) return r.seconds;
    }
  }
  for (const CustomFilterRule& r : policy.level_rules) {
    if (r.key == level) return r.seconds;
  }
  return std::nullopt;
}

StageResult ApplyCustomFilter(DeviceRecord& record, const CustomFilterInput& input, int64_t now_ms,
                              std::vector<NpuFault>* hidden) {
  StageResult result;
  if (input.rules_by_npu.empty()) return result;
  for (size_t i = 0; i < record.faults.size();) {
    const NpuFault& f = record.faults[i];
    auto it = input.rules_by_npu.find(f.npu_name);
    if (it != input.rules_by_npu.end() && it->second != nullptr) {
      if (std::optional<int64_t> seconds = FilterSeconds(*it->second, f.code, f.level)) {
        const int64_t until = f.received_ms + *seconds * 1000;
        if (now_ms <= until) {
          result.Due(until + 1);
          if (hidden != nullptr) hidden->push_back(f);
          DeleteFaultAt(record, i);
          result.changed = true;
          continue;
        }
      }
    }
    ++i;
  }
  return result;
}

// ---- 3. UceAccompany ----

StageResult ApplyUceAccompany(DeviceRecord& record, UceAccompanyState& state,
                              const std::map<std::string, int64_t>& business_uce_ms,
                              int64_t now_ms) {
  StageResult result;
  std::set<std::string> active;  // NPUs with a UCE or accompanying fault now
  for (const NpuFault& f : record.faults) {
    if (f.code == model::kFaultCodeUce) {
      int64_t& t = state.uce_time_ms[f.npu_name];
      t = std::max(t, f.fault_time);
      active.insert(f.npu_name);
    }
  }
  for (const auto& [npu, t] : business_uce_ms) {
    int64_t& held = state.uce_time_ms[npu];
    held = std::max(held, t);
  }
  for (size_t i = 0; i < record.faults.size();) {
    const NpuFault& f = record.faults[i];
    if (f.code != model::kFaultCodeAicBus && f.code != model::kFaultCodeAivBus) {
      ++i;
      continue;
    }
    active.insert(f.npu_name);
    bool drop = false;
    if (auto u = state.uce_time_ms.find(f.npu_name); u != state.uce_time_ms.end()) {
      drop = std::llabs(f.fault_time - u->second) <= kUceAccompanyWindowMs;
    }
    const int64_t held_until = EffectiveTime(f) + kUceAccompanyWindowMs;
    if (!drop && now_ms < held_until) {
      result.Due(held_until);
      drop = true;
    }
    if (drop) {
      DeleteFaultAt(record, i);
      result.changed = true;
      continue;
    }
    ++i;
  }
  // Forget NPUs that carry none of these codes any more (and have no fresh business report).
  for (auto it = state.uce_time_ms.begin(); it != state.uce_time_ms.end();) {
    if (active.count(it->first) == 0 && business_uce_ms.count(it->first) == 0) {
      it = state.uce_time_ms.erase(it);
    } else {
      ++it;
    }
  }
  return result;
}

// ---- 4. Retry ----

bool RetryPlausible(int64_t fault_time_ms, const RetryReport* report, int64_t now_ms,
                    int64_t* next_due_ms) {
  bool plausible = false;
  int64_t due = INT64_MAX;
  if (now_ms - fault_time_ms <= kRetryFaultWindowMs) {
    plausible = true;
    due = std::min(due, fault_time_ms + kRetryFaultWindowMs + 1);
  }
  if (report != nullptr && report->report_ms - fault_time_ms <= kRetryReportWindowMs &&
      report->report_ms + kRetryReportWindowMs >= fault_time_ms) {
    const int64_t limit = report->report_ms + kRetryCompleteWindowMs;
    if (report->complete_ms.has_value() && *report->complete_ms <= limit) {
      plausible = true;
    } else if (now_ms <= limit) {
      plausible = true;
      due = std::min(due, limit + 1);
    }
  }
  if (plausible && due != INT64_MAX && next_due_ms != nullptr) *next_due_ms = due;
  return plausible;
}

StageResult ApplyRetry(DeviceRecord& record, const RetryInput& input, int64_t now_ms,
                       std::vector<NpuFault>* force_added) {
  StageResult result;
  if (input.retry_npus.empty()) return result;
  bool link_down = input.switch_link_down_ms.has_value() &&
                   now_ms - *input.switch_link_down_ms <= kSwitchLinkDownMemoryMs;
  for (const NpuFault& f : record.faults) {
    if (f.code == model::kFaultCodeRoceLinkDown) link_down = true;
  }
  bool forced = false;
  for (size_t i = 0; i < record.faults.size();) {
    NpuFault& f = record.faults[i];
    const bool uce = f.code == model::kFaultCodeUce;
    const bool hccl = f.code == model::kFaultCodeHcclRetry;
    if ((!uce && !hccl) || input.retry_npus.count(f.npu_name) == 0) {
      ++i;
      continue;
    }
    auto r = input.reports.find(f.npu_name);
    auto mark = input.not_retryable_ms.find(f.npu_name);
    const bool not_retryable =
        mark != input.not_retryable_ms.end() && f.received_ms <= mark->second;
    int64_t due = 0;
    if (!not_retryable &&
        RetryPlausible(EffectiveTime(f), r == input.reports.end() ? nullptr : &r->second, now_ms,
                       &due)) {
      if (due != 0) result.Due(due);
      DeleteFaultAt(record, i);
      result.changed = true;
      continue;
    }
    if (hccl) {
      if (!link_down) {
        if (f.level != kRestartBusiness) {
          NpuFault upgraded = f;
          upgraded.level = std::string(kRestartBusiness);
          DeleteFaultAt(record, i);
          AddFault(record, std::move(upgraded));
          result.changed = true;
          continue;  // the upgraded copy is at the end; it is not re-examined as a plain fault
        }
      } else {
        forced = true;
      }
    }
    ++i;
  }
  if (forced && force_added != nullptr) {
    for (const NpuFault& f : record.faults) {
      if (f.code == model::kFaultCodeRoceLinkDown) force_added->push_back(f);
    }
  }
  return result;
}

// ---- 5. RecoverInPlace ----

bool PodEligibleForRecoverInPlace(const DeviceRecord& record, const std::set<std::string>& npus,
                                  bool allow_sub_health, int64_t now_ms) {
  for (const NpuFault& f : record.faults) {
    if (npus.count(f.npu_name) == 0) continue;
    if (f.level == kRestartRequest || f.level == kRestartBusiness) {
      if (now_ms - f.received_ms >= kRecoverInPlaceWindowMs) return false;
      continue;
    }
    if (f.level == kNotHandle) continue;
    if (f.level == kSubHealth && allow_sub_health) continue;
    return false;
  }
  return true;
}

StageResult ApplyRecoverInPlace(DeviceRecord& record, const RecoverInPlaceInput& input,
                                int64_t now_ms, std::vector<InPlaceHidden>* hidden) {
  StageResult result;
  if (input.npus.empty()) return result;
  // Group the NPUs by pod.
  std::map<std::string, std::set<std::string>> npus_of_pod;
  for (const auto& [npu, info] : input.npus) npus_of_pod[info.pod_uid].insert(npu);
  for (const auto& [pod, npus] : npus_of_pod) {
    const RecoverInPlaceNpu& info = input.npus.at(*npus.begin());
    if (info.report_requested || !info.rank0_eligible) continue;
    if (!PodEligibleForRecoverInPlace(record, npus, info.allow_sub_health, now_ms)) continue;
    for (size_t i = 0; i < record.faults.size();) {
      const NpuFault& f = record.faults[i];
      if (npus.count(f.npu_name) != 0 && (f.level == kRestartRequest || f.level == kRestartBusiness)) {
        result.Due(f.received_ms + kRecoverInPlaceWindowMs);
        if (hidden != nullptr) {
          hidden->push_back(InPlaceHidden{info.job_id, f.npu_name, f.code, f.level});
        }
        DeleteFaultAt(record, i);
        result.changed = true;
        continue;
      }
      ++i;
    }
  }
  return result;
}

// ---- 6. StressTest ----

StageResult ApplyStressTest(DeviceRecord& record, bool node_in_stress_test) {
  StageResult result;
  if (!node_in_stress_test) return result;
  for (size_t i = 0; i < record.faults.size();) {
    if (record.faults[i].code == kCodeStressA || record.faults[i].code == kCodeStressB) {
      DeleteFaultAt(record, i);
      result.changed = true;
      continue;
    }
    ++i;
  }
  return result;
}

// ---- 7. PreSeparate ----

StageResult ApplyPreSeparate(DeviceRecord& record, const std::set<std::string>& used_npus) {
  StageResult result;
  std::set<std::string> npus;
  for (const NpuFault& f : record.faults) {
    if (f.level == kPreSeparateNpu && !IsParameterPlaneCode(f.code)) npus.insert(f.npu_name);
  }
  for (const std::string& npu : npus) {
    if (SortedErase(record.available, npu)) result.changed = true;
    if (used_npus.count(npu) == 0) {
      if (!SortedContains(record.unhealthy, npu)) {
        SortedInsert(record.unhealthy, npu);
        result.changed = true;
      }
      continue;
    }
    // In use: PreSeparate alone keeps it healthy for the running pod. Unlike the original we
    // keep it listed when another chip fault of the NPU needs that (a SeparateNPU code, say).
    bool other = false;
    for (const NpuFault& f : record.faults) {
      if (f.npu_name == npu && IsChipType(f.fault_type) && !IsBenignLevel(f.level) &&
          f.level != kPreSeparateNpu) {
        other = true;
      }
    }
    if (!other && SortedErase(record.unhealthy, npu)) result.changed = true;
  }
  return result;
}

// ---- 8. IncrementFault ----

std::vector<FaultOccurrence> ApplyIncrementFault(
    const DeviceRecord& record, IncrementState& state,
    const std::map<std::string, std::string>& job_of_npu) {
  std::vector<FaultOccurrence> out;
  decltype(state.previous) current;
  for (const NpuFault& f : record.faults) {
    if (f.code.empty() || f.code == kPseudoCodeManuallySeparate) continue;
    auto key = std::make_pair(f.npu_name, f.code);
    auto value = std::make_pair(f.received_ms, f.level);
    current[key] = value;
    if (f.level == kNotHandle || f.level == kSubHealth) continue;
    auto prev = state.previous.find(key);
    if (prev != state.previous.end() && prev->second == value) continue;
    auto job = job_of_npu.find(f.npu_name);
    if (job == job_of_npu.end()) continue;
    out.push_back(FaultOccurrence{record.node, f.npu_name, f.code, f.received_ms, job->second});
  }
  state.previous = std::move(current);
  return out;
}

// ---- 9. ManualFault ----

StageResult ApplyManualFault(DeviceRecord& record, const std::vector<std::string>& manual_npus) {
  StageResult result;
  for (const std::string& npu : manual_npus) {
    NpuFault f;
    f.fault_type = std::string(model::kFaultTypeCardUnhealthy);
    f.npu_name = npu;
    f.level = std::string(model::FaultLevelName(model::FaultLevel::kManuallySeparateNPU));
    result.changed = AddFault(record, std::move(f)) || result.changed;
  }
  return result;
}

}  // namespace clusterd::cluster
