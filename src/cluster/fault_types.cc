#include "cluster/fault_types.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace clusterd::cluster {

bool IsParameterPlaneCode(std::string_view code) {
  return code == "81078603" || code == "81078607" || code == "110000002" || code == "110001024";
}

int LevelRank(std::string_view level) {
  if (auto parsed = model::ParseFaultLevel(level); parsed.has_value()) {
    return static_cast<int>(*parsed);
  }
  // Unknown names rank last, below NotHandleFault and the "normal" pseudo-levels.
  return model::kNumFaultLevels;
}

std::string_view MoreSevereLevel(std::string_view a, std::string_view b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return LevelRank(b) < LevelRank(a) ? b : a;
}

bool IsBenignLevel(std::string_view level) {
  std::optional<model::FaultLevel> parsed = model::ParseFaultLevel(level);
  return parsed.has_value() && (!model::IsFault(*parsed) ||
                                *parsed == model::FaultLevel::kNotHandleFault ||
                                *parsed == model::FaultLevel::kSubHealthFault);
}

std::string DeviceRecord::NpuName(int64_t physical_id) const {
  return absl::StrCat(device_type, "-", physical_id);
}

void SortedInsert(std::vector<std::string>& set, const std::string& name) {
  auto it = std::lower_bound(set.begin(), set.end(), name);
  if (it == set.end() || *it != name) set.insert(it, name);
}

bool SortedErase(std::vector<std::string>& set, const std::string& name) {
  auto it = std::lower_bound(set.begin(), set.end(), name);
  if (it == set.end() || *it != name) return false;
  set.erase(it);
  return true;
}

bool SortedContains(const std::vector<std::string>& set, const std::string& name) {
  return std::binary_search(set.begin(), set.end(), name);
}

namespace {

bool IsNetworkType(std::string_view fault_type) {
  return fault_type == model::kFaultTypeCardNetworkUnhealthy;
}

}  // namespace

bool AddFault(DeviceRecord& record, NpuFault fault) {
  for (const NpuFault& held : record.faults) {
    if (held == fault) return false;
  }
  if (!IsBenignLevel(fault.level)) {
    SortedErase(record.available, fault.npu_name);
    SortedInsert(IsNetworkType(fault.fault_type) ? record.network_unhealthy : record.unhealthy,
                 fault.npu_name);
  }
  record.faults.push_back(std::move(fault));
  return true;
}

void DeleteFaultAt(DeviceRecord& record, size_t index) {
  if (index >= record.faults.size()) return;
  const NpuFault removed = std::move(record.faults[index]);
  record.faults.erase(record.faults.begin() + static_cast<std::ptrdiff_t>(index));
  const bool network = IsNetworkType(removed.fault_type);
  for (const NpuFault& f : record.faults) {
    if (f.npu_name == removed.npu_name && IsNetworkType(f.fault_type) == network &&
        !IsBenignLevel(f.level)) {
      return;
    }
  }
  SortedErase(network ? record.network_unhealthy : record.unhealthy, removed.npu_name);
}

}  // namespace clusterd::cluster
