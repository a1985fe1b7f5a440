#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "model/node_info.h"
#include "model/switch_info.h"

namespace clusterd::faults {

// What decides whether the device-info ConfigMap changed (fault-pipeline.md §1.2.6): the
// DeviceList with every `"fault_time":<digits>,` removed, the switch record's FaultCode set,
// FaultLevel and NodeStatus, ManuallySeparateNPU and the escalation reasons. Times alone never
// cause a write.
struct DeviceInfoFingerprint {
  std::map<std::string, std::string> device_list;
  bool has_switch = false;
  std::set<std::string> switch_codes;
  std::string switch_level;
  std::string switch_status;
  std::string manually_separate;
  std::string reasons;
  bool operator==(const DeviceInfoFingerprint&) const = default;
};

DeviceInfoFingerprint Fingerprint(const std::map<std::string, std::string>& device_list,
                                  const std::optional<model::SwitchInfo>& switch_info,
                                  std::string_view manually_separate, std::string_view reasons);

// `text` without any `"fault_time":<digits>,` substring.
std::string StripFaultTimes(std::string_view text);

// Node-info change test (§1.3): devices compared by (type, id) with level and code set,
// order-insensitive, and the node status.
bool SameNodeInfo(const model::NodeInfo& a, const model::NodeInfo& b);

// When the next write may happen (Unix ms, never before now): the first write at
// once, a changed content `min_spacing_ms` after the last write, an unchanged one when the
// last write is `refresh_ms` old.
std::optional<int64_t> NextWriteMs(bool changed, std::optional<int64_t> last_write_ms,
                                   int64_t min_spacing_ms, int64_t refresh_ms, int64_t now_ms);

// §1.2.6 / §1.3 / §10 timings.
inline constexpr int64_t kWriteSpacingMs = 1000;
inline constexpr int64_t kDeviceInfoRefreshMs = 5 * 60 * 1000;
inline constexpr int64_t kNodeInfoRefreshMs = 30 * 60 * 1000;

}  // namespace clusterd::faults
