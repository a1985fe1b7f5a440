#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/device_fault.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// Switch (UnifiedBus) fault levels and node statuses (fault-pipeline.md §1.2.2, §3.5).
inline constexpr std::string_view kSwitchLevelNotHandle = "NotHandle";
inline constexpr std::string_view kSwitchLevelSubHealth = "SubHealthFault";
inline constexpr std::string_view kSwitchLevelRestartRequest = "RestartRequest";
inline constexpr std::string_view kSwitchLevelPreSeparate = "PreSeparate";
inline constexpr std::string_view kSwitchLevelSeparate = "Separate";
inline constexpr std::string_view kNodeStatusHealthy = "Healthy";
inline constexpr std::string_view kNodeStatusSubHealthy = "SubHealthy";
inline constexpr std::string_view kNodeStatusPreSeparate = "PreSeparate";
inline constexpr std::string_view kNodeStatusUnHealthy = "UnHealthy";

// PeerPortDevice values.
inline constexpr uint32_t kPeerCpu = 0;
inline constexpr uint32_t kPeerNpu = 1;
inline constexpr uint32_t kPeerL2 = 2;
inline constexpr uint32_t kPeerNa = 0xFFFF;

// One switch fault event; its canonical JSON is an element of SwitchInfo.fault_code.
struct SwitchFaultEvent {
  uint32_t event_type = 0;
  std::string assembled_fault_code;  // "[0x00f1fef5,155912,cpu,na]"
  uint32_t peer_port_device = 0;
  uint32_t peer_port_id = 0;
  uint32_t switch_chip_id = 0;
  uint32_t switch_port_id = 0;
  uint32_t severity = 0;          // 0 info .. 3 critical
  uint32_t assertion = 0;         // 0 recover, 1 occur, 2 notice
  int64_t alarm_raised_time = 0;  // ms
  bool operator==(const SwitchFaultEvent&) const = default;
};

// The SwitchInfoCfg record. `fault_code` and `fault_time_and_level_map` are nullopt in the
// zero record (rendered `null`).
struct SwitchInfo {
  std::optional<std::vector<std::string>> fault_code;
  std::string fault_level;
  int64_t update_time = 0;  // s
  std::string node_status;
  std::optional<FaultTimeAndLevelMap> fault_time_and_level_map;
  bool operator==(const SwitchInfo&) const = default;
};

// {"FaultCode":null,"FaultLevel":"","UpdateTime":0,"NodeStatus":"","FaultTimeAndLevelMap":null}
SwitchInfo ZeroSwitchInfo();

nlohmann::ordered_json ToJson(const SwitchFaultEvent& event);
std::string RenderSwitchFaultEvent(const SwitchFaultEvent& event);
absl::StatusOr<SwitchFaultEvent> ParseSwitchFaultEvent(std::string_view text);

nlohmann::ordered_json ToJson(const SwitchInfo& info);
std::string RenderSwitchInfo(const SwitchInfo& info);
// "" gives the zero record.
absl::StatusOr<SwitchInfo> ParseSwitchInfo(std::string_view text);

}  // namespace clusterd::model
