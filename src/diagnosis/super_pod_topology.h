#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "store/object_store.h"

namespace clusterd::diagnosis {

// The super-pod topology ClusterD publishes for pingmesh (jobs-ranktable-diagnosis.md §7.2),
// built from the Nodes. Pure.

inline constexpr std::string_view kPingmeshNamespace = "cluster-system";
inline constexpr std::string_view kSuperPodPrefix = "super-pod-";
inline constexpr std::string_view kSuperPodDeviceKey = "superPodDevice";

// A5: one NPU's probe address and its place in the network (the NpuInfoMap entry, from the
// device's baseDeviceInfos fields IP, NetPlaneId, L1 and L2; the rack is the node's).
struct NpuNetInfo {
  std::string addr;
  std::string plane;
  std::string l1;
  std::string l2;
  bool operator==(const NpuNetInfo&) const = default;
};

struct SuperPodNodeEntry {
  std::string node_name;
  std::string server_id;                       // serverIndex annotation
  std::string rack_id;                         // A5 only (rackID annotation)
  std::map<std::string, std::string> devices;  // phyId -> SDID (SuperDeviceID)
  std::map<std::string, NpuNetInfo> npu_info;  // A5 only: phyId -> address and path
  bool operator==(const SuperPodNodeEntry&) const = default;
};

struct SuperPodDevice {
  std::string version;  // "A3" or "A5"
  std::string super_pod_id;
  std::map<std::string, SuperPodNodeEntry> nodes;  // by node name
  std::string accelerator_type;                    // A5 only
  bool operator==(const SuperPodDevice&) const = default;
};

// Members: nodes whose annotation superPodID is an integer ≥ 0 and whose serverType is A3, or
// `npu` with label accelerator-type 950-SuperPod-Atlas-8 / 850-SuperPod-Atlas-8 (A5). Devices
// from baseDeviceInfos (keys Ascend910-<phyId>, SuperDeviceID); nodes with unreadable
// baseDeviceInfos join with an empty device map. Keyed by super-pod id. On A5 an NPU whose
// network fields are malformed (not strings, L1 or L2 without a plane, L2 without L1, a path
// on a node without rackID) keeps its SDID but loses its path; each such refusal is described
// in `problems` (node, device and reason).
std::map<std::string, SuperPodDevice> BuildSuperPods(const std::vector<store::Object>& nodes,
                                                     std::vector<std::string>* problems = nullptr);

// The ConfigMap value (compact Go JSON; the rack ids omitted) and the file
// super-pod-<id>/super-pod-<id>.json (4-space indented, rack ids and the A5 NpuInfoMap
// {"<phyId>":{"Addr","NetPlaneId","L1"?,"L2"?}} included).
std::string SuperPodDeviceJson(const SuperPodDevice& pod);
std::string SuperPodFileJson(const SuperPodDevice& pod);
// cluster-system/super-pod-<id>, label app=pingmesh, key superPodDevice.
store::Object SuperPodConfigMap(const SuperPodDevice& pod);
// SHA-256 of the file content, to skip unchanged rewrites.
std::string SuperPodContentHash(const SuperPodDevice& pod);

// A5 cross-super-pod RoCE (§7.2): super-pod-roce/super-pod-roce.json =
// {"superPodList":[<ids of the 950-SuperPod-Atlas-8 super pods, ascending>]} (4-space indented).
inline constexpr std::string_view kRoceDir = "super-pod-roce";
inline constexpr std::string_view kRoceKey = "roce";
std::vector<int64_t> RoceSuperPods(const std::map<std::string, SuperPodDevice>& pods);
std::string RoceListJson(const std::vector<int64_t>& ids);

}  // namespace clusterd::diagnosis
