#include "recovery/reset_config.h"

#include <array>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/canonical_json.h"
#include "common/check_code.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

using nlohmann::ordered_json;

constexpr std::array<std::string_view, 4> kOperationNames = {"clear", "notifyFaultFlushing",
                                                             "fault", "restartAllProcess"};

}  // namespace

std::string_view ResetOperationName(ResetOperation op) {
  return kOperationNames[static_cast<int>(op)];
}

std::optional<ResetOperation> ParseResetOperation(std::string_view name) {
  for (size_t i = 0; i < kOperationNames.size(); ++i) {
    if (kOperationNames[i] == name) return static_cast<ResetOperation>(i);
  }
  return std::nullopt;
}

ordered_json ResetInfoJson(const TaskResetInfo& info) {
  ordered_json out;
  out["RankList"] = ordered_json::array();
  for (int64_t rank : info.rank_list) {
    ordered_json entry;
    entry["RankId"] = rank;
    entry["LogicId"] = 0;
    entry["Status"] = "fault";
    entry["Policy"] = "";
    entry["InitialPolicy"] = "";
    entry["ErrorCode"] = nullptr;
    entry["ErrorCodeHex"] = "";
    out["RankList"].push_back(std::move(entry));
  }
  out["UpdateTime"] = info.update_time;
  out["RetryTime"] = info.retry_time;
  out["FaultFlushing"] = info.fault_flushing;
  out["GracefulExit"] = info.graceful_exit;
  out["RestartFaultProcess"] = info.restart_fault_process;
  return out;
}

std::string RenderResetJson(const TaskResetInfo& info) {
  return CanonicalJson(ResetInfoJson(info));
}

absl::StatusOr<TaskResetInfo> ApplyResetOperation(std::string_view old_reset_json,
                                                  ResetOperation op,
                                                  const std::vector<int64_t>& ranks,
                                                  bool restart_fault_process, absl::Time now) {
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json old, ParseJson(old_reset_json, kResetJsonKey));
  if (!old.is_object()) {
    return absl::InvalidArgumentError("reset.json is not a JSON object");
  }
  const auto list = old.find("RankList");
  if (list != old.end() && list->is_array()) {
    for (const ordered_json& entry : *list) {
      const std::string policy = StringOr(entry, "Policy", "");
      if (policy == "reset" || policy == "restart") {
        return absl::FailedPreconditionError(
            absl::StrCat("reset.json has a rank with policy \"", policy,
                         "\": hot reset and process recovery cannot be combined"));
      }
    }
  }
  TaskResetInfo info;
  // RetryTime is a Go int read as 32 bits by the agents (model::TaskResetInfo); a value that is
  // no integer, negative, or so large that the next restart would leave that range (INT64_MAX
  // made `+ 1` overflow) counts from 0, like a missing one.
  if (auto retry = GetInt64(old, "RetryTime");
      retry.ok() && *retry >= 0 && *retry < std::numeric_limits<int32_t>::max()) {
    info.retry_time = *retry;
  }
  info.update_time = absl::ToUnixSeconds(now);
  switch (op) {
    case ResetOperation::kClear:
      break;
    case ResetOperation::kNotifyFaultFlushing:
      info.fault_flushing = true;
      break;
    case ResetOperation::kFault:
      info.rank_list = ranks;
      info.restart_fault_process = restart_fault_process;
      break;
    case ResetOperation::kRestartAllProcess:
      info.retry_time += 1;
      break;
  }
  return info;
}

absl::StatusOr<store::Object> ResetConfigMapUpdate(const store::Object& old_config_map,
                                                   ResetOperation op,
                                                   const std::vector<int64_t>& ranks,
                                                   bool restart_fault_process, absl::Time now) {
  const std::string what = absl::StrCat("configmap ", store::NamespaceOf(old_config_map), "/",
                                        store::NameOf(old_config_map));
  const auto data = old_config_map.find("data");
  if (data == old_config_map.end() || !data->is_object()) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": no data"));
  }
  const auto old_json = data->find(std::string(kResetJsonKey));
  if (old_json == data->end() || !old_json->is_string()) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": no ", Sv(kResetJsonKey)));
  }
  absl::StatusOr<TaskResetInfo> info =
      ApplyResetOperation(old_json->get<std::string>(), op, ranks, restart_fault_process, now);
  if (!info.ok()) return Annotate(info.status(), what);
  const std::string text = RenderResetJson(*info);
  store::Object updated = old_config_map;
  updated["data"] = store::Object::object();
  updated["data"][std::string(kResetJsonKey)] = text;
  updated["data"][std::string(kCheckCodeKey)] = CheckCode(ResetInfoJson(*info));
  return updated;
}

std::string ResetConfigMapName(std::string_view job_name) {
  return absl::StrCat(Sv(kResetConfigPrefix), Sv(job_name));
}

}  // namespace clusterd::recovery
