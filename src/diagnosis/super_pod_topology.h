#pragma once

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

struct SuperPodNodeEntry {
  std::string node_name;
  std::string server_id;                       // serverIndex annotation
  std::string rack_id;                         // A5 only (rackID annotation)
  std::map<std::string, std::string> devices;  // phyId -> SDID (SuperDeviceID)
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
// baseDeviceInfos join with an empty device map. Keyed by super-pod id.
std::map<std::string, SuperPodDevice> BuildSuperPods(const std::vector<store::Object>& nodes);

// The ConfigMap value (compact Go JSON; the rack ids omitted) and the file
// super-pod-<id>/super-pod-<id>.json (4-space indented, rack ids included).
std::string SuperPodDeviceJson(const SuperPodDevice& pod);
std::string SuperPodFileJson(const SuperPodDevice& pod);
// cluster-system/super-pod-<id>, label app=pingmesh, key superPodDevice.
store::Object SuperPodConfigMap(const SuperPodDevice& pod);
// SHA-256 of the file content, to skip unchanged rewrites.
std::string SuperPodContentHash(const SuperPodDevice& pod);

}  // namespace clusterd::diagnosis
