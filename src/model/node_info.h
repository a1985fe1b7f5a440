#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// Data keys of `mindx-dl/mindx-dl-nodeinfo-<node>` (fault-pipeline.md §1.3).
inline constexpr std::string_view kNodeInfoKey = "NodeInfo";
inline constexpr std::string_view kNodeInfoUpdateTimeKey = "updateTime";

// NodeD levels (§3.5) and the node statuses they map to.
inline constexpr std::string_view kNodeLevelNotHandle = "NotHandleFault";
inline constexpr std::string_view kNodeLevelPreSeparate = "PreSeparateFault";
inline constexpr std::string_view kNodeLevelSeparate = "SeparateFault";
inline constexpr std::string_view kNodeDeviceTypeUnknown = "UNKNOWN";

struct FaultDev {
  std::string device_type;  // CPU, Memory, PSU, ..., UNKNOWN
  int64_t device_id = 0;
  std::vector<std::string> fault_code;  // 8-character upper-case hex
  std::string fault_level;
  bool operator==(const FaultDev&) const = default;
};

// The inner record CheckCode covers.
struct NodeInfo {
  std::vector<FaultDev> fault_dev_list;  // rendered [] when empty, never null
  std::string node_status;               // Healthy, PreSeparate, UnHealthy
  bool operator==(const NodeInfo&) const = default;
};

nlohmann::ordered_json ToJson(const NodeInfo& info);
std::string NodeInfoCheckCode(const NodeInfo& info);

// The `NodeInfo` key value: {"NodeInfo":{...},"CheckCode":"..."}.
std::string RenderNodeInfoValue(const NodeInfo& info);
// Parses the `NodeInfo` key value and verifies CheckCode (empty or wrong: FailedPrecondition).
absl::StatusOr<NodeInfo> ParseNodeInfoValue(std::string_view text);

// `updateTime`: RFC 3339, whole seconds, "Z" for UTC, "+08:00" style otherwise (Go's
// time.RFC3339).
std::string FormatNodeInfoUpdateTime(absl::Time t, absl::TimeZone zone);
// Unix ms of an `updateTime` value; 0 when missing or unparsable (§1.3).
int64_t ParseNodeInfoUpdateTimeMs(std::string_view text);

}  // namespace clusterd::model
