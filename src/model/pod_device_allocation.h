#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/rank_table.h"

namespace clusterd::model {

// Pod annotations carrying the device plugin's allocation (jobs-ranktable-diagnosis.md §1.4):
// the 910 key is read first, the npu key is the fallback.
inline constexpr std::string_view kAnnotationAscend910Configuration =
    "ascend.kubectl.kubernetes.io/ascend-910-configuration";
inline constexpr std::string_view kAnnotationAscendNpuConfiguration =
    "ascend.kubectl.kubernetes.io/ascend-npu-configuration";

struct AllocatedDevice {
  std::string device_id;
  std::string device_ip;  // "-1" when the plugin could not read it
  std::string super_device_id;
  std::vector<RankLevel> level_list;  // A5 multi-layer network info (`levelList`)
  bool operator==(const AllocatedDevice&) const = default;
};

// The decoded allocation annotation. `server_id` is the pod UID, not an IP.
struct PodDeviceAllocation {
  std::string pod_name;
  std::string server_id;
  std::string host_ip;
  int64_t super_pod_id = 0;              // -1/-2: not a super-pod member
  std::vector<AllocatedDevice> devices;  // physical id ascending, as written
  int64_t rack_id = 0;
  std::string server_index;
  std::string server_ip;
  bool operator==(const PodDeviceAllocation&) const = default;
};

// Decodes the annotation value with Go encoding/json rules (missing fields keep zero values,
// wrong types are errors). `what` names the pod and annotation in errors.
absl::StatusOr<PodDeviceAllocation> ParsePodDeviceAllocation(std::string_view text,
                                                             std::string_view what);

}  // namespace clusterd::model
