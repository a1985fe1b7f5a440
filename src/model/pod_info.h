#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/device_naming.h"
#include "model/pod_device_allocation.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// Pod labels and annotations the job registry reads (jobs-ranktable-diagnosis.md §1.3).
inline constexpr std::string_view kAnnotationRankIndex = "hccl/rankIndex";
inline constexpr std::string_view kAnnotationAscendReal = "huawei.com/AscendReal";
inline constexpr std::string_view kAnnotationScheduleMinAvailable =
    "huawei.com/schedule_minAvailable";
inline constexpr std::string_view kAnnotationGroupName = "scheduling.k8s.io/group-name";
inline constexpr std::string_view kAnnotationSchedulePolicy = "huawei.com/schedule_policy";
inline constexpr std::string_view kSchedulePolicySoftShare = "chip1-softShareDev";
inline constexpr std::string_view kAnnotationIsSharedTor = "isSharedTor";
inline constexpr std::string_view kAnnotationSharedTorIp = "sharedTorIp";
inline constexpr std::string_view kAnnotationPodType = "podType";
inline constexpr std::string_view kPodTypeBackup = "backup";
inline constexpr std::string_view kAnnotationBackupSourcePodName = "backupSourcePodName";
inline constexpr std::string_view kAnnotationSuperPodId = "super-pod-id";
inline constexpr std::string_view kAnnotationHardwareType = "mind-cluster/hardware-type";
inline constexpr std::string_view kLabelApp = "app";
inline constexpr std::string_view kLabelMindIeJobId = "jobID";
inline constexpr std::string_view kLabelVolcanoJobName = "volcano.sh/job-name";
inline constexpr std::string_view kLabelJobName = "job-name";
inline constexpr std::string_view kEnvMasterAddr = "MASTER_ADDR";
// Where pods mount the data-trace switch file (§5.2).
inline constexpr std::string_view kDataTraceMountPath = "/user/cluster-info/datatrace-config";
// A container limit whose name contains this means the pod needs an NPU allocation (§1.4); so
// does a customised DevicePublicType (DeviceNaming::IsNpuResource).
inline constexpr std::string_view kNpuResourcePrefix = "huawei.com/";

inline constexpr std::string_view kPodPhaseRunning = "Running";
inline constexpr std::string_view kPodPhaseSucceeded = "Succeeded";
inline constexpr std::string_view kPodPhaseFailed = "Failed";

// metadata.ownerReferences[] entry.
struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  nlohmann::ordered_json raw;  // the entry as stored, copied verbatim where the original does
  bool operator==(const OwnerReference& o) const {
    return api_version == o.api_version && kind == o.kind && name == o.name && uid == o.uid &&
           controller == o.controller;
  }
};

// The controller owner (controller: true) of a Kubernetes object, if any. Malformed
// ownerReferences are treated as absent.
std::optional<OwnerReference> ControllerOwnerOf(const nlohmann::ordered_json& object);

// What the registry needs of one pod, decoded once per watch event. Problems with individual
// annotations do not fail the decoding; they are recorded so that the pod is skipped where the
// spec says so and the problem is logged and counted once.
struct PodInfo {
  std::string ns;
  std::string name;
  std::string uid;
  std::string node_name;
  std::string phase;
  std::string host_ip;  // status.hostIP
  std::string pod_ip;   // status.podIP
  std::optional<OwnerReference> controller;
  std::map<std::string, std::string> labels;
  // Annotations except the two (large) allocation annotations, which are decoded below.
  std::map<std::string, std::string> annotations;

  std::optional<int64_t> rank_index;  // hccl/rankIndex, when present and a decimal integer
  std::string rank_index_problem;     // why rank_index is absent ("" = annotation absent)

  bool allocation_annotation_present = false;
  std::optional<PodDeviceAllocation> allocation;  // decoded, when present and well formed
  std::string allocation_problem;                 // decoding error, if any

  bool needs_npu = false;  // some container limit names a huawei.com/ resource
  int container_count = 0;
  std::map<std::string, std::string> container_ids;  // status.containerStatuses name -> ID
  std::string master_addr_env;                       // env MASTER_ADDR of any container
  bool mounts_data_trace = false;                    // some container mounts kDataTraceMountPath
  int64_t min_available = 0;  // huawei.com/schedule_minAvailable (0 if absent/invalid)

  bool IsBackup() const;     // podType=backup (hot switch)
  bool IsSoftShare() const;  // schedule_policy=chip1-softShareDev
  std::string Annotation(std::string_view key) const;
  std::string Label(std::string_view key) const;
  std::string Key() const { return ns + "/" + name; }
};

// Decodes a pod. Fails only when the object has no metadata.name. `naming` says which container
// limits ask for NPUs and which annotations hold the allocation (deviceNameCustomization.json
// renames the resource and the Ascend910 annotation).
absl::StatusOr<PodInfo> PodInfoFromObject(const nlohmann::ordered_json& pod,
                                          const DeviceNaming& naming = DeviceNaming::Fixed());

// §1.4: the pod has >= 1 container and either needs no NPU or carries an allocation annotation.
bool DeviceAllocationComplete(const PodInfo& pod);

}  // namespace clusterd::model
