#include "model/device_info.h"

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/check_code.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

using nlohmann::ordered_json;

DeviceListKeys DeviceListKeys::For(std::string_view device_type) {
  return WithBase(
      absl::StrCat("huawei.com/", absl::string_view(device_type.data(), device_type.size())));
}

DeviceListKeys DeviceListKeys::WithBase(std::string base) {
  return DeviceListKeys{base, base + "-Unhealthy", base + "-NetworkUnhealthy", base + "-Recovering",
                        base + "-Fault"};
}

namespace {

ordered_json DeviceListJson(const std::map<std::string, std::string>& list) {
  ordered_json out = ordered_json::object();
  for (const auto& [k, v] : list) out[k] = v;
  return out;
}

}  // namespace

ordered_json ToJson(const NodeDeviceInfo& info) {
  ordered_json out;
  out["DeviceList"] = DeviceListJson(info.device_list);
  out["UpdateTime"] = info.update_time;
  return out;
}

std::string DeviceInfoCheckCode(const NodeDeviceInfo& info) { return CheckCode(ToJson(info)); }

std::string RenderDeviceInfoCfg(const DeviceInfoCfg& cfg) {
  // The DeviceInfo bytes are both hashed and embedded: serialise them once.
  const std::string device_info = CanonicalJson(ToJson(cfg.device_info));
  std::string out = absl::StrCat(
      "{\"DeviceInfo\":", device_info, ",\"SuperPodID\":", cfg.super_pod_id,
      ",\"ServerIndex\":", cfg.server_index, ",\"CheckCode\":\"", Sha256Hex(device_info), "\"");
  if (cfg.rack_id.has_value()) absl::StrAppend(&out, ",\"RackID\":", *cfg.rack_id);
  out.push_back('}');
  return out;
}

absl::StatusOr<DeviceInfoCfg> ParseDeviceInfoCfg(std::string_view text) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json parsed, ParseJson(text, kDeviceInfoCfgKey));
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(parsed, kDeviceInfoCfgKey));
  DeviceInfoCfg cfg;
  cfg.super_pod_id = 0;  // Go zero values for absent fields
  cfg.server_index = 0;
  ordered_json device_info_json = ordered_json::object();
  if (auto it = parsed.find("DeviceInfo"); it != parsed.end() && !it->is_null()) {
    device_info_json = *it;
  }
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(device_info_json, "DeviceInfo"));
  bool list_null = false;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadStringMap(device_info_json, "DeviceList",
                                                  &cfg.device_info.device_list, &list_null));
  CLUSTERD_RETURN_IF_ERROR(
      go_json::ReadInt64(device_info_json, "UpdateTime", &cfg.device_info.update_time));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(parsed, "SuperPodID", &cfg.super_pod_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(parsed, "ServerIndex", &cfg.server_index));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(parsed, "CheckCode", &cfg.check_code));
  if (auto it = parsed.find("RackID"); it != parsed.end() && !it->is_null()) {
    int32_t rack = 0;
    CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(parsed, "RackID", &rack));
    cfg.rack_id = rack;
  }

  // The hash covers the schema's canonical form: a nil map stays `null`.
  ordered_json canonical = ToJson(cfg.device_info);
  if (list_null) canonical["DeviceList"] = nullptr;
  if (cfg.check_code.empty()) {
    return absl::FailedPreconditionError("DeviceInfoCfg: CheckCode is empty");
  }
  if (const std::string want = CheckCode(canonical); want != cfg.check_code) {
    return absl::FailedPreconditionError(
        absl::StrCat("DeviceInfoCfg: CheckCode ", cfg.check_code, " does not match ", want));
  }
  return cfg;
}

}  // namespace clusterd::model
