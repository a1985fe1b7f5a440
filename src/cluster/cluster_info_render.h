#pragma once

// The per-node entries of the cluster-level ConfigMaps (fault-pipeline.md §1.4): what one
// processed device, switch or node record looks like inside `cluster-info-device-<n>`,
// `cluster-info-switch-<n>` and `cluster-info-node-cm`. Pure functions; bytes are Go's
// encoding/json output (canonical JSON).
#include <string>
#include <vector>

#include "cluster/fault_types.h"
#include "model/device_fault.h"
#include "nlohmann/json.hpp"

namespace clusterd::cluster {

// Names, namespace and label of the cluster-level ConfigMaps.
inline constexpr std::string_view kClusterInfoNamespace = "mindx-dl";
inline constexpr std::string_view kClusterInfoDevicePrefix = "cluster-info-device-";
inline constexpr std::string_view kClusterInfoSwitchPrefix = "cluster-info-switch-";
inline constexpr std::string_view kClusterInfoNodeName = "cluster-info-node-cm";
inline constexpr std::string_view kConsumerVolcanoLabel = "mx-consumer-volcano";

// §1.4 regrouping: one DeviceFault per (NPU, fault_type); NPUs in plain string order, groups by
// fault_type; codes ordered by (per-code level name, code); ManuallySeparateNPU-level codes
// are left out of fault_code and the map but still make the entry's level.
std::vector<model::DeviceFault> RegroupFaults(const std::vector<NpuFault>& faults);

// The DeviceInfo value of one node inside cluster-info-device-<n>: DeviceList (exactly the five
// keys of the node's type), UpdateTime, CmName, SuperPodID, RackID, ServerIndex.
nlohmann::ordered_json DeviceEntryJson(const DeviceRecord& record);
std::string RenderDeviceEntry(const DeviceRecord& record);

// The record of one node inside cluster-info-switch-<n>: FaultCode, FaultLevel, UpdateTime,
// NodeStatus, FaultTimeAndLevelMap, CmName.
std::string RenderSwitchEntry(const SwitchRecord& record);

// The record of one node inside cluster-info-node-cm: FaultDevList, NodeStatus, CmName,
// UpdateTime (ms).
std::string RenderNodeEntry(const NodeRecord& record);

// A whole map value from already rendered entries, `{"<key>":<entry>,...}` with keys sorted as
// Go sorts map keys; "" for no entries (the value written for an empty or unused shard).
std::string RenderEntryMap(const std::vector<std::pair<std::string, const std::string*>>& sorted);

}  // namespace clusterd::cluster
