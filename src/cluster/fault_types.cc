#include "cluster/fault_types.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
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
  if (!name_prefix.empty()) return absl::StrCat(name_prefix, physical_id);
  return absl::StrCat(device_type, "-", physical_id);
}

std::optional<int64_t> DeviceRecord::PhysicalIdOf(std::string_view npu_name) const {
  // Without a known prefix, whatever follows the last '-' ("Ascend910-3"). A customised prefix
  // need not end with '-' ("npu" + 3 = "npu3", "npu2" + 3 = "npu23"), so it is stripped whole.
  std::string_view digits;
  if (name_prefix.empty()) {
    const size_t dash = npu_name.rfind('-');
    if (dash == std::string_view::npos) return std::nullopt;
    digits = npu_name.substr(dash + 1);
  } else {
    if (npu_name.substr(0, name_prefix.size()) != name_prefix) return std::nullopt;
    digits = npu_name.substr(name_prefix.size());
    if (digits.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(digits.front()))) {
      return std::nullopt;
    }
  }
  int64_t id = 0;
  if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &id) || id < 0) {
    return std::nullopt;
  }
  return id;
}

model::DeviceListKeys DeviceRecord::Keys() const {
  if (!resource_name.empty()) return model::DeviceListKeys::WithBase(resource_name);
  return model::DeviceListKeys::For(device_type);
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
