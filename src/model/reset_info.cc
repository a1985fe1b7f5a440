#include "model/reset_info.h"

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/check_code.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

using nlohmann::ordered_json;

namespace {

ordered_json ToJson(const TaskDevInfo& d) {
  ordered_json out;
  out["RankId"] = d.rank_id;
  out["LogicId"] = d.logic_id;
  out["Status"] = d.status;
  out["Policy"] = d.policy;
  out["InitialPolicy"] = d.initial_policy;
  out["ErrorCode"] = d.error_code.has_value() ? ordered_json(*d.error_code) : ordered_json(nullptr);
  out["ErrorCodeHex"] = d.error_code_hex;
  return out;
}

}  // namespace

ordered_json ToJson(const TaskResetInfo& info) {
  ordered_json out;
  out["RankList"] = ordered_json::array();
  for (const TaskDevInfo& d : info.rank_list) out["RankList"].push_back(ToJson(d));
  out["UpdateTime"] = info.update_time;
  out["RetryTime"] = info.retry_time;
  out["FaultFlushing"] = info.fault_flushing;
  out["GracefulExit"] = info.graceful_exit;
  out["RestartFaultProcess"] = info.restart_fault_process;
  return out;
}

std::string RenderTaskResetInfo(const TaskResetInfo& info) { return CanonicalJson(ToJson(info)); }

std::string TaskResetInfoCheckCode(const TaskResetInfo& info) { return CheckCode(ToJson(info)); }

absl::StatusOr<TaskResetInfo> ParseTaskResetInfo(std::string_view text,
                                                 std::optional<std::string_view> check_code) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json v, ParseJson(text, kResetJsonKey));
  CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(v, kResetJsonKey));
  TaskResetInfo info;
  ordered_json canonical_ranks = nullptr;
  if (auto it = v.find("RankList"); it != v.end() && !it->is_null()) {
    if (!it->is_array()) return absl::InvalidArgumentError("field \"RankList\" is not an array");
    canonical_ranks = ordered_json::array();
    for (const ordered_json& e : *it) {
      CLUSTERD_RETURN_IF_ERROR(go_json::ExpectObject(e, "RankList[]", true));
      TaskDevInfo d;
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(e, "RankId", &d.rank_id));
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(e, "LogicId", &d.logic_id));
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(e, "Status", &d.status));
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(e, "Policy", &d.policy));
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(e, "InitialPolicy", &d.initial_policy));
      std::vector<int64_t> codes;
      bool codes_null = false;
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64Array(e, "ErrorCode", &codes, &codes_null));
      if (!codes_null) d.error_code = std::move(codes);
      CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(e, "ErrorCodeHex", &d.error_code_hex));
      canonical_ranks.push_back(ToJson(d));
      info.rank_list.push_back(std::move(d));
    }
  }
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(v, "UpdateTime", &info.update_time));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(v, "RetryTime", &info.retry_time));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadBool(v, "FaultFlushing", &info.fault_flushing));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt32(v, "GracefulExit", &info.graceful_exit));
  CLUSTERD_RETURN_IF_ERROR(
      go_json::ReadBool(v, "RestartFaultProcess", &info.restart_fault_process));
  if (check_code.has_value()) {
    ordered_json canonical = ToJson(info);
    canonical["RankList"] = canonical_ranks;
    const std::string want = CheckCode(canonical);
    if (check_code->empty() || want != *check_code) {
      return absl::FailedPreconditionError(absl::StrCat(
          "reset.json: checkCode \"", absl::string_view(check_code->data(), check_code->size()),
          "\" does not match ", want));
    }
  }
  return info;
}

}  // namespace clusterd::model
