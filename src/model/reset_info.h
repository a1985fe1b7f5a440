#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// `reset-config-<job>` keys (fault-pipeline.md §1.5).
inline constexpr std::string_view kResetJsonKey = "reset.json";
inline constexpr std::string_view kResetCheckCodeKey = "checkCode";
inline constexpr std::string_view kRestartTypeKey = "restartType";
inline constexpr std::string_view kRestartTypeHotReset = "hotReset";
inline constexpr std::string_view kRestartTypePodReschedule = "podReschedule";

// TaskDevInfo Status values.
inline constexpr std::string_view kRankStatusUnrecovered = "unrecovered";
inline constexpr std::string_view kRankStatusRecovered = "recovered";
inline constexpr std::string_view kRankStatusFailed = "failed";
inline constexpr std::string_view kRankStatusFault = "fault";  // written by ClusterD

// Reset policies (§3.6).
inline constexpr std::string_view kPolicyEmpty = "empty";
inline constexpr std::string_view kPolicyIgnore = "ignore";
inline constexpr std::string_view kPolicyRestartRequest = "restart_request";
inline constexpr std::string_view kPolicyRestart = "restart";
inline constexpr std::string_view kPolicyFreeReset = "free_reset";
inline constexpr std::string_view kPolicyReset = "reset";
inline constexpr std::string_view kPolicyIsolate = "isolate";

struct TaskDevInfo {
  int rank_id = 0;
  int32_t logic_id = 0;
  std::string status;
  std::string policy;
  std::string initial_policy;
  // nullopt renders `null` (ClusterD's writes); the device plugin writes [].
  std::optional<std::vector<int64_t>> error_code;
  std::string error_code_hex;  // upper-case hex, comma-joined
  bool operator==(const TaskDevInfo&) const = default;
};

// reset.json, fields in wire order.
struct TaskResetInfo {
  std::vector<TaskDevInfo> rank_list;
  int64_t update_time = 0;  // s
  int retry_time = 0;
  bool fault_flushing = false;
  int graceful_exit = 0;
  bool restart_fault_process = false;
  bool operator==(const TaskResetInfo&) const = default;
};

nlohmann::ordered_json ToJson(const TaskResetInfo& info);
// The reset.json value; its checkCode is Sha256Hex of exactly these bytes.
std::string RenderTaskResetInfo(const TaskResetInfo& info);
std::string TaskResetInfoCheckCode(const TaskResetInfo& info);
// Parses reset.json; when `check_code` is given it is verified against the canonical form.
absl::StatusOr<TaskResetInfo> ParseTaskResetInfo(
    std::string_view text, std::optional<std::string_view> check_code = std::nullopt);

}  // namespace clusterd::model
