#pragma once

// The Kubernetes objects of the simulated cluster, shaped as the real ones are: Nodes, the
// AscendJob that owns a training job, its Volcano PodGroup, its pods (with `hccl/rankIndex` and
// the device plugin's allocation annotation, jobs-ranktable-diagnosis.md §1.4) and the
// `reset-config-<job>` ConfigMap (recovery-protocol.md §11.1).
#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/scenario.h"

namespace clusterd::sim {

using Json = nlohmann::ordered_json;

inline constexpr char kAllocationAnnotation[] =
    "ascend.kubectl.kubernetes.io/ascend-910-configuration";
inline constexpr char kRankIndexAnnotation[] = "hccl/rankIndex";
inline constexpr char kAscendRealAnnotation[] = "huawei.com/AscendReal";
inline constexpr char kGroupNameAnnotation[] = "scheduling.k8s.io/group-name";

std::string NodeIp(int node_index);
std::string DeviceIp(int node_index, int npu);
// A3 super-pod layout: the node's index within its super pod (annotation `serverIndex`) and the
// SDID of one of its NPUs (`SuperDeviceID` in `baseDeviceInfos`; jobs-ranktable-diagnosis.md
// §1.3, §7.3): server << 22 | (4·(phy/2) + phy%2) << 16 | phy, the layout of the spec's example.
int ServerIndex(const ClusterSpec& cluster, int node_index);
uint32_t SuperDeviceId(const ClusterSpec& cluster, int node_index, int npu);
// A stable UID derived from `seed` (job and pod identities must be UIDs, §1.5).
std::string StableUid(std::string_view seed);

Json NodeObject(const ClusterSpec& cluster, int node_index);
Json AscendJobObject(const JobSpec& job, const std::string& uid);
std::string PodGroupName(const JobSpec& job);
Json PodGroupObject(const JobSpec& job, const std::string& job_uid);
std::string PodName(const JobSpec& job, int rank);

struct PodPlacement {
  int rank = 0;
  std::string name;
  std::string uid;
  int node_index = 0;
  std::vector<int> npus;
  bool backup = false;        // hot-switch backup pod (podType=backup)
  std::string backup_source;  // a backup's source pod (annotation backupSourcePodName)
};
Json PodObject(const ClusterSpec& cluster, const JobSpec& job, const std::string& job_uid,
               const PodPlacement& placement);
Json ResetConfigMap(const JobSpec& job);

}  // namespace clusterd::sim
