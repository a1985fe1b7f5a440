#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// Data keys of `kube-system/mindx-dl-deviceinfo-<node>` (fault-pipeline.md §1.2).
inline constexpr std::string_view kDeviceInfoCfgKey = "DeviceInfoCfg";
inline constexpr std::string_view kSwitchInfoCfgKey = "SwitchInfoCfg";
inline constexpr std::string_view kManuallySeparateNpuKey = "ManuallySeparateNPU";
inline constexpr std::string_view kUpgradeFaultReasonKey = "UpgradeFaultReason";
inline constexpr std::string_view kDescriptionKey = "Description";
// §1.2.5, constant.
inline constexpr std::string_view kDescriptionText =
    "The field[xxx.com/xxx] is sunset. Volcano has the ability to maintain the usage status of "
    "chips on its own, and can temporarily use this field by configuring the Volcano parameter "
    "'self-maintain-available-card'";

// SuperPodID / ServerIndex conventions.
inline constexpr int32_t kSuperPodInvalid = -1;      // driver reported 0xffffffff
inline constexpr int32_t kSuperPodUnsupported = -2;  // unsupported or query failed

// The `DeviceInfo` record, the part CheckCode covers.
struct NodeDeviceInfo {
  std::map<std::string, std::string> device_list;  // sorted by key, as Go renders a map
  int64_t update_time = 0;                         // Unix seconds
  bool operator==(const NodeDeviceInfo&) const = default;
};

// The whole `DeviceInfoCfg` value.
struct DeviceInfoCfg {
  NodeDeviceInfo device_info;
  int32_t super_pod_id = kSuperPodInvalid;
  int32_t server_index = kSuperPodInvalid;
  std::string check_code;
  std::optional<int32_t> rack_id;  // written only when set (A5 1D/2D super pods)
  bool operator==(const DeviceInfoCfg&) const = default;
};

// `huawei.com/<type>` and its suffixed keys.
struct DeviceListKeys {
  std::string available;
  std::string unhealthy;
  std::string network_unhealthy;
  std::string recovering;
  std::string fault;
  static DeviceListKeys For(std::string_view device_type);
  // The keys built on `base` (the resource name, e.g. a customised DevicePublicType).
  static DeviceListKeys WithBase(std::string base);
};

nlohmann::ordered_json ToJson(const NodeDeviceInfo& info);
// SHA-256 of the canonical DeviceInfo record (§2).
std::string DeviceInfoCheckCode(const NodeDeviceInfo& info);

// Canonical JSON of `cfg`, with CheckCode recomputed from cfg.device_info (whatever
// cfg.check_code holds is ignored).
std::string RenderDeviceInfoCfg(const DeviceInfoCfg& cfg);

// Parses a DeviceInfoCfg value and verifies its CheckCode the way ClusterD does (§2): the
// DeviceInfo part is decoded into the fixed schema, re-serialised canonically and hashed; an
// empty or different CheckCode is FailedPrecondition, malformed text InvalidArgument.
absl::StatusOr<DeviceInfoCfg> ParseDeviceInfoCfg(std::string_view text);

}  // namespace clusterd::model
