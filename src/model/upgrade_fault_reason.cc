#include "model/upgrade_fault_reason.h"

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

using nlohmann::ordered_json;

std::string RenderUpgradeFaultReasons(const UpgradeFaultReasons& reasons) {
  ordered_json out = ordered_json::object();
  for (const auto& [npu, list] : reasons) {
    ordered_json array = ordered_json::array();
    for (const UpgradeFaultReason& r : list) {
      ordered_json e;
      e["upgrade_time"] = r.upgrade_time;
      e["fault_code"] = r.fault_code;
      e["fault_level"] = r.fault_level;
      e["upgrade_type"] = r.upgrade_type;
      array.push_back(std::move(e));
    }
    out[npu] = std::move(array);
  }
  return CanonicalJson(out);
}

absl::StatusOr<UpgradeFaultReasons> ParseUpgradeFaultReasons(std::string_view text) {
  UpgradeFaultReasons out;
  if (text.empty()) return out;
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json v, ParseJson(text, "UpgradeFaultReason"));
  if (v.is_null()) return out;
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(v, "UpgradeFaultReason"));
  for (const auto& [npu, list] : v.items()) {
    std::vector<UpgradeFaultReason>& reasons = out[npu];
    if (list.is_null()) continue;
    if (!list.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat("UpgradeFaultReason ", npu, ": not an array"));
    }
    for (const ordered_json& e : list) {
      CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(e, "UpgradeFaultReason entry", true));
      UpgradeFaultReason r;
      CLUSTERD_RETURN_IF_ERROR(
          Annotate(go_json::ReadInt64(e, "upgrade_time", &r.upgrade_time), npu));
      CLUSTERD_RETURN_IF_ERROR(Annotate(go_json::ReadString(e, "fault_code", &r.fault_code), npu));
      CLUSTERD_RETURN_IF_ERROR(
          Annotate(go_json::ReadString(e, "fault_level", &r.fault_level), npu));
      CLUSTERD_RETURN_IF_ERROR(
          Annotate(go_json::ReadString(e, "upgrade_type", &r.upgrade_type), npu));
      reasons.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace clusterd::model
