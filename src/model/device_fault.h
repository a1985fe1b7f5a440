#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// fault_type values of a DeviceFault (fault-pipeline.md §1.2.1).
inline constexpr std::string_view kFaultTypeCardUnhealthy = "CardUnhealthy";
inline constexpr std::string_view kFaultTypeCardNetworkUnhealthy = "CardNetworkUnhealthy";
inline constexpr std::string_view kFaultTypePublicFault = "PublicFault";
inline constexpr std::string_view kFaultTypeNodeUnhealthy = "NodeUnhealthy";

// One value of fault_time_and_level_map (also used by the switch record, §1.2.2).
struct FaultTimeAndLevel {
  int64_t fault_time = 0;  // Unix ms
  std::string fault_level;
  bool operator==(const FaultTimeAndLevel&) const = default;
};
// Keyed by upper-case hex code (device faults) or `<code>_<chip>_<port>` (switch faults).
using FaultTimeAndLevelMap = std::map<std::string, FaultTimeAndLevel>;

// An element of the `huawei.com/<T>-Fault` array, fields in wire order.
struct DeviceFault {
  std::string fault_type;
  std::string npu_name;
  std::string large_model_fault_level;
  std::string fault_level;
  std::string fault_handling;
  std::string fault_code;  // comma-joined upper-case hex, may be "" (read with SplitFaultCodes)
  FaultTimeAndLevelMap fault_time_and_level_map;
  bool operator==(const DeviceFault&) const = default;
};

nlohmann::ordered_json ToJson(const FaultTimeAndLevelMap& map);
nlohmann::ordered_json ToJson(const DeviceFault& fault);

// The `-Fault` value: canonical JSON of the array ("[]" when empty).
std::string RenderDeviceFaults(const std::vector<DeviceFault>& faults);

// Parses a `-Fault` value. "" and "null" give an empty list.
absl::StatusOr<std::vector<DeviceFault>> ParseDeviceFaults(std::string_view text);
absl::StatusOr<DeviceFault> DeviceFaultFromJson(const nlohmann::ordered_json& value);
absl::StatusOr<FaultTimeAndLevelMap> FaultTimeAndLevelMapFromJson(
    const nlohmann::ordered_json& value);

// The codes of a `fault_code` field, as ClusterD reads them: every space removed, then split at
// commas (some writers pad the codes: "80E01801      ,  80C98009    " is two codes). Keys of
// fault_time_and_level_map are looked up with these. "" gives one empty code.
std::vector<std::string> SplitFaultCodes(std::string_view fault_code);

}  // namespace clusterd::model
