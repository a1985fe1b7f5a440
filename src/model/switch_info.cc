#include "model/switch_info.h"

#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

using nlohmann::ordered_json;

SwitchInfo ZeroSwitchInfo() { return SwitchInfo{}; }

ordered_json ToJson(const SwitchFaultEvent& e) {
  ordered_json out;
  out["EventType"] = e.event_type;
  out["AssembledFaultCode"] = e.assembled_fault_code;
  out["PeerPortDevice"] = e.peer_port_device;
  out["PeerPortId"] = e.peer_port_id;
  out["SwitchChipId"] = e.switch_chip_id;
  out["SwitchPortId"] = e.switch_port_id;
  out["Severity"] = e.severity;
  out["Assertion"] = e.assertion;
  out["AlarmRaisedTime"] = e.alarm_raised_time;
  return out;
}

std::string RenderSwitchFaultEvent(const SwitchFaultEvent& event) {
  return CanonicalJson(ToJson(event));
}

absl::StatusOr<SwitchFaultEvent> ParseSwitchFaultEvent(std::string_view text) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json v, ParseJson(text, "switch fault event"));
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(v, "switch fault event", true));
  SwitchFaultEvent e;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "EventType", &e.event_type));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(v, "AssembledFaultCode", &e.assembled_fault_code));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "PeerPortDevice", &e.peer_port_device));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "PeerPortId", &e.peer_port_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "SwitchChipId", &e.switch_chip_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "SwitchPortId", &e.switch_port_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "Severity", &e.severity));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadUint32(v, "Assertion", &e.assertion));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(v, "AlarmRaisedTime", &e.alarm_raised_time));
  return e;
}

ordered_json ToJson(const SwitchInfo& info) {
  ordered_json out;
  if (info.fault_code.has_value()) {
    out["FaultCode"] = ordered_json::array();
    for (const std::string& s : *info.fault_code) out["FaultCode"].push_back(s);
  } else {
    out["FaultCode"] = nullptr;
  }
  out["FaultLevel"] = info.fault_level;
  out["UpdateTime"] = info.update_time;
  out["NodeStatus"] = info.node_status;
  out["FaultTimeAndLevelMap"] = info.fault_time_and_level_map.has_value()
                                    ? ToJson(*info.fault_time_and_level_map)
                                    : ordered_json(nullptr);
  return out;
}

std::string RenderSwitchInfo(const SwitchInfo& info) { return CanonicalJson(ToJson(info)); }

absl::StatusOr<SwitchInfo> ParseSwitchInfo(std::string_view text) {
  SwitchInfo info;
  if (text.empty()) return info;
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json v, ParseJson(text, "SwitchInfoCfg"));
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(v, "SwitchInfoCfg", true));
  std::vector<std::string> codes;
  bool codes_null = true;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadStringArray(v, "FaultCode", &codes, &codes_null));
  if (!codes_null) info.fault_code = std::move(codes);
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(v, "FaultLevel", &info.fault_level));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(v, "UpdateTime", &info.update_time));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(v, "NodeStatus", &info.node_status));
  if (auto it = v.find("FaultTimeAndLevelMap"); it != v.end() && !it->is_null()) {
    CLUSTERD_ASSIGN_OR_RETURN(info.fault_time_and_level_map, FaultTimeAndLevelMapFromJson(*it));
  }
  return info;
}

}  // namespace clusterd::model
