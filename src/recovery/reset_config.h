#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "store/object_store.h"

namespace clusterd::recovery {

// The four writes of the reset ConfigMap (§11.1).
enum class ResetOperation { kClear, kNotifyFaultFlushing, kFault, kRestartAllProcess };
std::string_view ResetOperationName(ResetOperation op);  // clear, notifyFaultFlushing, ...
std::optional<ResetOperation> ParseResetOperation(std::string_view name);

// reset.json (TaskResetInfo), fields in wire order.
struct TaskResetInfo {
  std::vector<int64_t> rank_list;  // written with Status "fault", other fields fixed
  int64_t update_time = 0;         // unix seconds
  int64_t retry_time = 0;
  bool fault_flushing = false;
  int64_t graceful_exit = 0;  // always 0
  bool restart_fault_process = false;
  bool operator==(const TaskResetInfo&) const = default;
};

// The canonical value of reset.json (keys in order, RankList [] when empty, ErrorCode null).
nlohmann::ordered_json ResetInfoJson(const TaskResetInfo& info);
// reset.json exactly as written; checkCode is Sha256Hex of these bytes.
std::string RenderResetJson(const TaskResetInfo& info);

// The new reset.json for `op`, given the current reset.json text. Fails when the old text is
// not a JSON object, or when its RankList has an entry with Policy "reset" or "restart"
// (hot-reset mode cannot be combined with process recovery). `{"status":"initializing"}` is a
// valid old body (RetryTime 0). `ranks` is used by kFault only.
absl::StatusOr<TaskResetInfo> ApplyResetOperation(std::string_view old_reset_json,
                                                  ResetOperation op,
                                                  const std::vector<int64_t>& ranks,
                                                  bool restart_fault_process, absl::Time now);

// The full updated ConfigMap: `old_config_map` with its metadata (resourceVersion included, so
// the update is conditional) and its data replaced by exactly reset.json and checkCode.
absl::StatusOr<store::Object> ResetConfigMapUpdate(const store::Object& old_config_map,
                                                   ResetOperation op,
                                                   const std::vector<int64_t>& ranks,
                                                   bool restart_fault_process, absl::Time now);

// "reset-config-<jobName>".
std::string ResetConfigMapName(std::string_view job_name);

}  // namespace clusterd::recovery
