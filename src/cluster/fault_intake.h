#pragma once

// Intake of the node-side ConfigMaps into the fault centre's records (fault-pipeline.md §7.1):
// verification (checkCode, size, shape), device-type detection, the split into one fault per
// code and the carry-over of clusterd's first receive times. Pure functions.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/fault_types.h"
#include "model/device_naming.h"
#include "store/object_store.h"

namespace clusterd::cluster {

struct IntakeLimits {
  // A ConfigMap whose data values add up to more than this is rejected ("oversized"): the
  // Kubernetes limit for a whole object is 1 MiB.
  size_t max_data_bytes = 1 << 20;
  // Faults (after the per-code split) one node may carry; more is tampering or a bug.
  size_t max_faults_per_node = 4096;
};

// A device-info ConfigMap as the centre holds it.
struct DeviceIntake {
  DeviceRecord device;
  std::optional<SwitchRecord> switch_record;  // when the CM has a non-empty SwitchInfoCfg
  // Individual entries that were dropped (the rest of the CM is used), e.g. a fault whose NPU
  // name is empty or contains a comma. One line each, for the log and the metric.
  std::vector<std::string> dropped;
};

// Why an intake failed, as a metric label: "checkcode" (empty or wrong CheckCode; the status is
// FailedPrecondition), "oversized" (ResourceExhausted), "malformed" (anything else).
std::string_view IntakeRejectionReason(const absl::Status& status);

// The node of `mindx-dl-deviceinfo-<node>` / `mindx-dl-nodeinfo-<node>`; "" if the name does
// not have the prefix.
std::string NodeOfConfigMap(std::string_view cm_name, std::string_view prefix);

// §1.4 type detection over the DeviceList keys: `huawei.com/npu` -> npu; a key containing
// Ascend910 -> Ascend910; the key `huawei.com/Ascend310P` -> Ascend310P; a key containing
// Ascend310 -> Ascend310; otherwise npu. Deterministic (the original tests keys in map order).
std::string DetectDeviceType(const std::map<std::string, std::string>& device_list);

// Decodes and verifies a device-info ConfigMap (§1.2, §2, §7.1). Receive times are left 0: the
// caller carries them over with CarryReceiveTimes. A node whose DeviceList keys are a
// customised DevicePublicType of `naming` (deviceNameCustomization.json) is of that entry's
// type, and its record keeps the entry's resource name and NPU name prefix; any other node is
// read by the fixed names, so nodes with and without the file can share a cluster.
absl::StatusOr<DeviceIntake> DeviceIntakeFromConfigMap(
    const store::Object& config_map, const IntakeLimits& limits = {},
    const model::DeviceNaming& naming = model::DeviceNaming::Fixed());

// Decodes and verifies a node-info ConfigMap (§1.3).
absl::StatusOr<NodeRecord> NodeRecordFromConfigMap(const store::Object& config_map,
                                                   const IntakeLimits& limits = {});

// §7.1: every (NPU, code) keeps the receive time it had in `previous` (null: none); new ones get
// `now_ms`. Keyed by (NPU, code) only, so a level change keeps the time.
void CarryReceiveTimes(const DeviceRecord* previous, DeviceRecord& next, int64_t now_ms);
// The same for switch faults, keyed by the FaultTimeAndLevelMap key.
void CarryReceiveTimes(const SwitchRecord* previous, SwitchRecord& next, int64_t now_ms);

}  // namespace clusterd::cluster
