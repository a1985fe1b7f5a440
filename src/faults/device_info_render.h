#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "faults/device_fault_engine.h"
#include "faults/switch_fault_engine.h"
#include "faults/write_gate.h"
#include "model/device_fault.h"

namespace clusterd::faults {

// The `-Fault` entries of the engine's last cycle (fault-pipeline.md §1.2.1): per NPU in
// enumeration order, a CardNetworkUnhealthy entry then a CardUnhealthy entry, each present when
// the NPU has a current code of that plane or is unhealthy in it.
std::vector<model::DeviceFault> BuildDeviceFaults(const DeviceFaultEngine& engine);

// The whole DeviceList of the engine's last cycle: available / Unhealthy / NetworkUnhealthy /
// Recovering name lists (sorted as strings, like the original's sorted sets) and the `-Fault`
// string; 310 and 310P carry only the available, Unhealthy and fault keys.
std::map<std::string, std::string> BuildDeviceList(const DeviceFaultEngine& engine);

// Everything the device-info ConfigMap carries after a cycle.
struct DeviceInfoContent {
  std::map<std::string, std::string> data;  // ConfigMap data keys -> values
  DeviceInfoFingerprint fingerprint;        // what §1.2.6 compares between writes
  std::vector<std::string> manually_separated;
};

struct DeviceInfoIdentity {
  int32_t super_pod_id = -1;
  int32_t server_index = -1;
  std::optional<int32_t> rack_id;
};

// The data of `kube-system/mindx-dl-deviceinfo-<node>` (§1.2): DeviceInfoCfg (UpdateTime =
// now, CheckCode computed), SwitchInfoCfg for A3/A5 (`switches` null: the zero record),
// ManuallySeparateNPU, UpgradeFaultReason and Description.
DeviceInfoContent BuildDeviceInfoContent(const DeviceFaultEngine& engine,
                                         const SwitchFaultEngine* switches,
                                         const DeviceInfoIdentity& identity, int64_t now_ms);

}  // namespace clusterd::faults
