#pragma once

// ConfigMaps and records for the fault-centre tests, built with the model's renderers so that
// their checkCodes are right.
#include <map>
#include <string>
#include <vector>

#include "cluster/fault_types.h"
#include "model/device_fault.h"
#include "model/device_info.h"
#include "model/node_info.h"
#include "model/switch_info.h"
#include "nlohmann/json.hpp"

namespace clusterd::cluster::testing {

using Json = nlohmann::ordered_json;

inline Json ConfigMapObject(const std::string& ns, const std::string& name,
                            const std::map<std::string, std::string>& data,
                            const std::map<std::string, std::string>& labels = {}) {
  Json metadata = {{"name", name}, {"namespace", ns}};
  Json l = Json::object();
  for (const auto& [k, v] : labels) l[k] = v;
  metadata["labels"] = l;
  Json d = Json::object();
  for (const auto& [k, v] : data) d[k] = v;
  return Json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", metadata}, {"data", d}};
}

// One chip fault of an NPU as the npu-agent writes it.
inline model::DeviceFault ChipFault(const std::string& npu, const std::string& level,
                                    const std::vector<std::pair<std::string, int64_t>>& codes,
                                    const std::string& type = "CardUnhealthy") {
  model::DeviceFault f;
  f.fault_type = type;
  f.npu_name = npu;
  f.large_model_fault_level = level;
  f.fault_level = level;
  f.fault_handling = level;
  std::string joined;
  for (const auto& [code, time] : codes) {
    if (!joined.empty()) joined += ",";
    joined += code;
    f.fault_time_and_level_map[code] = model::FaultTimeAndLevel{time, level};
  }
  f.fault_code = joined;
  return f;
}

struct NodeSpec {
  std::string node = "node-1";
  int npus = 8;
  std::vector<model::DeviceFault> faults;
  std::vector<std::string> unhealthy;  // NPU names
  std::vector<std::string> network_unhealthy;
  std::vector<std::string> allocated;  // left out of the available list
  int64_t update_time = 1718000001;
  int32_t super_pod_id = -1;
  std::string switch_info;  // SwitchInfoCfg value; "" = key absent
  std::string type = "Ascend910";
  // A node renamed by deviceNameCustomization.json: DevicePublicType and DevicePublicNamePre.
  std::string resource_name;
  std::string name_prefix;
};

inline std::string DeviceInfoCfgText(const NodeSpec& s) {
  model::DeviceInfoCfg cfg;
  const auto keys = s.resource_name.empty() ? model::DeviceListKeys::For(s.type)
                                             : model::DeviceListKeys::WithBase(s.resource_name);
  std::string available;
  for (int i = 0; i < s.npus; ++i) {
    const std::string name =
        (s.name_prefix.empty() ? s.type + "-" : s.name_prefix) + std::to_string(i);
    bool skip = false;
    for (const auto& u : s.unhealthy) skip = skip || u == name;
    for (const auto& a : s.allocated) skip = skip || a == name;
    if (skip) continue;
    if (!available.empty()) available += ",";
    available += name;
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
  };
  cfg.device_info.device_list[keys.available] = available;
  cfg.device_info.device_list[keys.fault] = model::RenderDeviceFaults(s.faults);
  cfg.device_info.device_list[keys.network_unhealthy] = join(s.network_unhealthy);
  cfg.device_info.device_list[keys.recovering] = "";
  cfg.device_info.device_list[keys.unhealthy] = join(s.unhealthy);
  cfg.device_info.update_time = s.update_time;
  cfg.super_pod_id = s.super_pod_id;
  cfg.server_index = -1;
  return model::RenderDeviceInfoCfg(cfg);
}

inline Json DeviceInfoConfigMap(const NodeSpec& s) {
  std::map<std::string, std::string> data = {
      {"DeviceInfoCfg", DeviceInfoCfgText(s)},
      {"ManuallySeparateNPU", ""},
      {"UpgradeFaultReason", "{}"},
      {"Description", std::string(model::kDescriptionText)}};
  if (!s.switch_info.empty()) data["SwitchInfoCfg"] = s.switch_info;
  return ConfigMapObject("kube-system", "mindx-dl-deviceinfo-" + s.node, data,
                         {{"mx-consumer-cim", "true"}});
}

inline Json NodeInfoConfigMap(const std::string& node, const model::NodeInfo& info,
                              const std::string& update_time = "2024-06-10T06:13:20Z") {
  return ConfigMapObject("mindx-dl", "mindx-dl-nodeinfo-" + node,
                         {{"NodeInfo", model::RenderNodeInfoValue(info)}, {"updateTime", update_time}},
                         {{"mx-consumer-cim", "true"}});
}

inline NpuFault Fault(const std::string& npu, const std::string& code, const std::string& level,
                      int64_t time = 1718000000000, int64_t received = 1718000000000,
                      const std::string& type = "CardUnhealthy") {
  return NpuFault{type, npu, code, level, time, received};
}

inline DeviceRecord Record(const std::string& node = "node-1", int npus = 8) {
  DeviceRecord r;
  r.node = node;
  r.cm_name = "mindx-dl-deviceinfo-" + node;
  r.device_type = "Ascend910";
  for (int i = 0; i < npus; ++i) SortedInsert(r.available, "Ascend910-" + std::to_string(i));
  r.update_time_s = 1718000001;
  return r;
}

}  // namespace clusterd::cluster::testing
