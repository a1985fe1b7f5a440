#pragma once

#include <string>
#include <string_view>

namespace clusterd::model {

// Names, namespaces and labels of the node-side ConfigMaps (fault-pipeline.md §1.1).
inline constexpr std::string_view kDeviceInfoNamespace = "kube-system";
inline constexpr std::string_view kDeviceInfoPrefix = "mindx-dl-deviceinfo-";
inline constexpr std::string_view kNodeInfoNamespace = "mindx-dl";
inline constexpr std::string_view kNodeInfoPrefix = "mindx-dl-nodeinfo-";
inline constexpr std::string_view kSwitchInfoPrefix = "mindx-dl-switchinfo-";
inline constexpr std::string_view kConsumerCimLabel = "mx-consumer-cim";

// Operator policy overrides.
inline constexpr std::string_view kFaultConfigNamespace = "kube-system";
inline constexpr std::string_view kFaultConfigName = "mindx-dl-fault-config";
inline constexpr std::string_view kFaultCodeKey = "faultCode.json";
inline constexpr std::string_view kSwitchFaultCodeKey = "SwitchFaultCode.json";
inline constexpr std::string_view kFaultCustomizationKey = "faultCustomization.json";
inline constexpr std::string_view kPollIntervalKey = "PollInterval";
inline constexpr std::string_view kNodeFaultConfigNamespace = "mindx-dl";
inline constexpr std::string_view kNodeFaultConfigName = "mindx-dl-node-fault-config";
inline constexpr std::string_view kNodeDConfigurationKey = "NodeDConfiguration.json";

inline constexpr std::string_view kResetConfigPrefix = "reset-config-";
inline constexpr std::string_view kResetLabel = "reset";

inline std::string DeviceInfoConfigMapName(std::string_view node) {
  return std::string(kDeviceInfoPrefix) + std::string(node);
}
inline std::string NodeInfoConfigMapName(std::string_view node) {
  return std::string(kNodeInfoPrefix) + std::string(node);
}
inline std::string ResetConfigMapName(std::string_view job) {
  return std::string(kResetConfigPrefix) + std::string(job);
}

}  // namespace clusterd::model
