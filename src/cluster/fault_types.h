#pragma once

// The fault centre's internal records (fault-pipeline.md §7.1): what one node's device-info,
// switch-info and node-info ConfigMaps become once verified and split per code, and what the
// processors of §7.3 read and rewrite. Plain data; times are Unix milliseconds unless the name
// says otherwise.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/device_fault.h"
#include "model/device_info.h"
#include "model/fault_codes.h"
#include "model/fault_level.h"
#include "model/node_info.h"
#include "model/switch_info.h"

namespace clusterd::cluster {

// Codes the centre treats specially (fault-pipeline.md §3.3, §7.3).
// The UCE, its accompanying bus codes, HCCL retry and RoCE link down: model/fault_codes.h.
inline constexpr std::string_view kCodeStressA = "80818C05";
inline constexpr std::string_view kCodeStressB = "80818C06";
inline constexpr std::string_view kSwitchL2LinkDown = "[0x08520003,na,L2,na]";
// An empty code with level ManuallySeparateNPU becomes this pseudo-code (§7.1).
inline constexpr std::string_view kPseudoCodeManuallySeparate = "ManuallySeparateNPU";

// Parameter-plane (network) codes (§3.3), upper-case as the centre holds them.
bool IsParameterPlaneCode(std::string_view code);

// Levels as plain strings, because the centre passes through whatever a node wrote; these
// helpers rank them. Unknown names rank below NotHandleFault (least severe) and count as "not a
// fault" nowhere: they are kept and published as written.
int LevelRank(std::string_view level);  // 0 = ManuallySeparateNPU ... 8 NotHandleFault; unknown 11
std::string_view MoreSevereLevel(std::string_view a, std::string_view b);
// NotHandleFault, SubHealthFault, NormalNPU, NormalNetwork (§7.3 "add fault").
bool IsBenignLevel(std::string_view level);

// One fault of one NPU, one per code (§7.1).
struct NpuFault {
  std::string fault_type;    // CardUnhealthy, CardNetworkUnhealthy, PublicFault
  std::string npu_name;      // Ascend910-3
  std::string code;          // upper-case hex; kPseudoCodeManuallySeparate; "" (ManualFault)
  std::string level;         // the per-code level
  int64_t fault_time = 0;    // as reported: ms (public faults: s, §7.3 step 1); -1 pseudo-code
  int64_t received_ms = 0;   // clusterd's first receive time of (NPU, code)
  bool operator==(const NpuFault&) const = default;
};

// A node's device record (§7.1): faults one per code, and the NPU lists (sorted, unique).
struct DeviceRecord {
  std::string node;
  std::string cm_name;      // mindx-dl-deviceinfo-<node>
  std::string device_type;  // Ascend910, npu, Ascend310P, Ascend310
  std::vector<NpuFault> faults;
  std::vector<std::string> available;
  std::vector<std::string> unhealthy;
  std::vector<std::string> network_unhealthy;
  std::vector<std::string> recovering;
  int64_t update_time_s = 0;
  int32_t super_pod_id = -1;
  int32_t server_index = -1;
  int32_t rack_id = 0;
  // The node's names (deviceNameCustomization.json, seed 001 Table 7): the DeviceList base key
  // and the NPU name prefix, as the intake found them ("": huawei.com/<device_type> and
  // <device_type>-). Faults and lists keep the names the node wrote.
  std::string resource_name;
  std::string name_prefix;
  bool operator==(const DeviceRecord&) const = default;

  // NPU name for a physical id: "<device_type>-<id>", or the customised prefix and the id.
  std::string NpuName(int64_t physical_id) const;
  // The physical id an NPU name of this node ends with ("Ascend910-3" -> 3), or nullopt.
  std::optional<int64_t> PhysicalIdOf(std::string_view npu_name) const;
  // The five DeviceList keys of this node.
  model::DeviceListKeys Keys() const;
};

// A node's switch record, derived from the device CM's SwitchInfoCfg (§1.2.2, §1.4).
struct SwitchRecord {
  std::string node;
  std::string cm_name;  // mindx-dl-switchinfo-<node>
  model::SwitchInfo info;
  // The parsed events of info.fault_code (same order); unparsable elements are left out here
  // but kept in info.fault_code.
  std::vector<model::SwitchFaultEvent> events;
  // ClusterD receive time per FaultTimeAndLevelMap key.
  std::map<std::string, int64_t> received_ms;
  bool operator==(const SwitchRecord&) const = default;
};

// A node's NodeD record (§1.3, §1.4).
struct NodeRecord {
  std::string node;
  std::string cm_name;  // mindx-dl-nodeinfo-<node>
  model::NodeInfo info;
  int64_t update_time_ms = 0;
  bool operator==(const NodeRecord&) const = default;
};

// Sorted-unique string-set helpers for the NPU lists.
void SortedInsert(std::vector<std::string>& set, const std::string& name);
bool SortedErase(std::vector<std::string>& set, const std::string& name);
bool SortedContains(const std::vector<std::string>& set, const std::string& name);

// §7.3 "add fault": adds `fault` unless an identical one is held; a non-benign level removes
// the NPU from the available list and lists it as unhealthy (network faults: network
// unhealthy). Returns true when the record changed.
bool AddFault(DeviceRecord& record, NpuFault fault);
// §7.3 "delete fault": removes faults[index]; the NPU leaves its unhealthy list when no
// remaining fault of that kind has a non-benign level (it does not return to available).
void DeleteFaultAt(DeviceRecord& record, size_t index);

}  // namespace clusterd::cluster
