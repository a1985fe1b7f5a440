#include "model/device_fault.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

using nlohmann::ordered_json;

ordered_json ToJson(const FaultTimeAndLevelMap& map) {
  // std::map iterates in byte order, which is Go's order for map keys.
  ordered_json out = ordered_json::object();
  for (const auto& [code, value] : map) {
    ordered_json entry;
    entry["fault_time"] = value.fault_time;
    entry["fault_level"] = value.fault_level;
    out[code] = std::move(entry);
  }
  return out;
}

ordered_json ToJson(const DeviceFault& fault) {
  ordered_json out;
  out["fault_type"] = fault.fault_type;
  out["npu_name"] = fault.npu_name;
  out["large_model_fault_level"] = fault.large_model_fault_level;
  out["fault_level"] = fault.fault_level;
  out["fault_handling"] = fault.fault_handling;
  out["fault_code"] = fault.fault_code;
  out["fault_time_and_level_map"] = ToJson(fault.fault_time_and_level_map);
  return out;
}

std::string RenderDeviceFaults(const std::vector<DeviceFault>& faults) {
  ordered_json array = ordered_json::array();
  for (const DeviceFault& f : faults) array.push_back(ToJson(f));
  return CanonicalJson(array);
}

absl::StatusOr<FaultTimeAndLevelMap> FaultTimeAndLevelMapFromJson(const ordered_json& value) {
  FaultTimeAndLevelMap out;
  if (value.is_null()) return out;
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(value, "fault_time_and_level_map"));
  for (const auto& [code, entry] : value.items()) {
    CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(entry, code, /*allow_null=*/true));
    FaultTimeAndLevel parsed;
    CLUSTERD_RETURN_IF_ERROR(
        Annotate(go_json::ReadInt64(entry, "fault_time", &parsed.fault_time), code));
    CLUSTERD_RETURN_IF_ERROR(
        Annotate(go_json::ReadString(entry, "fault_level", &parsed.fault_level), code));
    out[code] = std::move(parsed);
  }
  return out;
}

absl::StatusOr<DeviceFault> DeviceFaultFromJson(const ordered_json& value) {
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(value, "device fault", /*allow_null=*/true));
  DeviceFault f;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(value, "fault_type", &f.fault_type));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(value, "npu_name", &f.npu_name));
  CLUSTERD_RETURN_IF_ERROR(
      go_json::ReadString(value, "large_model_fault_level", &f.large_model_fault_level));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(value, "fault_level", &f.fault_level));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(value, "fault_handling", &f.fault_handling));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(value, "fault_code", &f.fault_code));
  if (value.is_object()) {
    if (auto it = value.find("fault_time_and_level_map"); it != value.end()) {
      CLUSTERD_ASSIGN_OR_RETURN(f.fault_time_and_level_map, FaultTimeAndLevelMapFromJson(*it));
    }
  }
  return f;
}

std::vector<std::string> SplitFaultCodes(std::string_view fault_code) {
  std::string stripped(fault_code);
  stripped.erase(std::remove(stripped.begin(), stripped.end(), ' '), stripped.end());
  return absl::StrSplit(stripped, ',');
}

absl::StatusOr<std::vector<DeviceFault>> ParseDeviceFaults(std::string_view text) {
  std::vector<DeviceFault> out;
  if (text.empty()) return out;
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json parsed, ParseJson(text, "device fault list"));
  if (parsed.is_null()) return out;
  if (!parsed.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("device fault list is ", parsed.type_name(), ", want array"));
  }
  for (size_t i = 0; i < parsed.size(); ++i) {
    auto fault = DeviceFaultFromJson(parsed[i]);
    if (!fault.ok()) return Annotate(fault.status(), absl::StrCat("device fault [", i, "]"));
    out.push_back(*std::move(fault));
  }
  return out;
}

}  // namespace clusterd::model
