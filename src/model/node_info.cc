#include "model/node_info.h"

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/check_code.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

using nlohmann::ordered_json;

namespace {

ordered_json ToJson(const FaultDev& dev) {
  ordered_json out;
  out["DeviceType"] = dev.device_type;
  out["DeviceId"] = dev.device_id;
  out["FaultCode"] = dev.fault_code;
  out["FaultLevel"] = dev.fault_level;
  return out;
}

}  // namespace

ordered_json ToJson(const NodeInfo& info) {
  ordered_json out;
  out["FaultDevList"] = ordered_json::array();
  for (const FaultDev& dev : info.fault_dev_list) out["FaultDevList"].push_back(ToJson(dev));
  out["NodeStatus"] = info.node_status;
  return out;
}

std::string NodeInfoCheckCode(const NodeInfo& info) { return CheckCode(ToJson(info)); }

std::string RenderNodeInfoValue(const NodeInfo& info) {
  ordered_json out;
  const ordered_json inner = ToJson(info);
  out["NodeInfo"] = inner;
  out["CheckCode"] = CheckCode(inner);
  return CanonicalJson(out);
}

absl::StatusOr<NodeInfo> ParseNodeInfoValue(std::string_view text) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json v, ParseJson(text, kNodeInfoKey));
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(v, kNodeInfoKey));
  ordered_json inner = ordered_json::object();
  if (auto it = v.find("NodeInfo"); it != v.end() && !it->is_null()) inner = *it;
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(inner, "NodeInfo.NodeInfo"));
  std::string check_code;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(v, "CheckCode", &check_code));

  NodeInfo info;
  ordered_json canonical;
  canonical["FaultDevList"] = nullptr;
  if (auto it = inner.find("FaultDevList"); it != inner.end() && !it->is_null()) {
    if (!it->is_array())
      return absl::InvalidArgumentError("field \"FaultDevList\" is not an array");
    canonical["FaultDevList"] = ordered_json::array();
    for (const ordered_json& d : *it) {
      CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(d, "FaultDevList[]", true));
      FaultDev dev;
      bool codes_null = false;
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(d, "DeviceType", &dev.device_type));
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(d, "DeviceId", &dev.device_id));
      CLUSTERD_RETURN_IF_ERROR(
          go_json::ReadStringArray(d, "FaultCode", &dev.fault_code, &codes_null));
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(d, "FaultLevel", &dev.fault_level));
      ordered_json c = ToJson(dev);
      if (codes_null) c["FaultCode"] = nullptr;
      canonical["FaultDevList"].push_back(std::move(c));
      info.fault_dev_list.push_back(std::move(dev));
    }
  }
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(inner, "NodeStatus", &info.node_status));
  canonical["NodeStatus"] = info.node_status;
  if (check_code.empty()) return absl::FailedPreconditionError("NodeInfo: CheckCode is empty");
  if (const std::string want = CheckCode(canonical); want != check_code) {
    return absl::FailedPreconditionError(
        absl::StrCat("NodeInfo: CheckCode ", check_code, " does not match ", want));
  }
  return info;
}

std::string FormatNodeInfoUpdateTime(absl::Time t, absl::TimeZone zone) {
  const absl::Time whole = absl::FromUnixSeconds(absl::ToUnixSeconds(t));
  if (zone.At(whole).offset == 0) return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", whole, zone);
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", whole, zone);
}

int64_t ParseNodeInfoUpdateTimeMs(std::string_view text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, absl::string_view(text.data(), text.size()), &t, &err)) {
    return 0;
  }
  return absl::ToUnixMillis(t);
}

}  // namespace clusterd::model
