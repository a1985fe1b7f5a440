#include "cluster/fault_intake.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "model/config_map_names.h"
#include "model/device_info.h"
#include "model/node_info.h"
#include "model/npu_name_list.h"

namespace clusterd::cluster {
namespace {

// The string values of `data` (non-strings are a malformed ConfigMap), and their total size.
absl::StatusOr<std::map<std::string, std::string>> DataOf(const store::Object& cm,
                                                          const IntakeLimits& limits) {
  std::map<std::string, std::string> out;
  auto it = cm.find("data");
  if (it == cm.end() || it->is_null()) return out;
  if (!it->is_object()) return absl::InvalidArgumentError("data is not an object");
  size_t total = 0;
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("data key ", key, " is not a string"));
    }
    const auto& text = value.get_ref<const std::string&>();
    total += text.size();  // the values, as the API server's 1 MiB limit counts them
    if (total > limits.max_data_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("data is larger than ", limits.max_data_bytes, " bytes"));
    }
    out.emplace(key, text);
  }
  return out;
}

std::vector<std::string> SortedNames(const std::map<std::string, std::string>& list,
                                     const std::string& key) {
  std::vector<std::string> names;
  if (auto it = list.find(key); it != list.end()) names = model::SplitNpuNames(it->second);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool BadNpuName(std::string_view name) {
  return name.empty() || name.size() > 253 || name.find(',') != std::string_view::npos;
}

}  // namespace

std::string_view IntakeRejectionReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kFailedPrecondition:
      return "checkcode";
    case absl::StatusCode::kResourceExhausted:
      return "oversized";
    default:
      return "malformed";
  }
}

std::string NodeOfConfigMap(std::string_view cm_name, std::string_view prefix) {
  if (cm_name.size() <= prefix.size() || cm_name.substr(0, prefix.size()) != prefix) return "";
  return std::string(cm_name.substr(prefix.size()));
}

std::string DetectDeviceType(const std::map<std::string, std::string>& device_list) {
  bool ascend910 = false, ascend310p = false, ascend310 = false;
  for (const auto& [key, value] : device_list) {
    if (key == "huawei.com/npu") return "npu";
    if (absl::StrContains(key, "Ascend910")) ascend910 = true;
    if (key == "huawei.com/Ascend310P") ascend310p = true;
    if (absl::StrContains(key, "Ascend310")) ascend310 = true;
  }
  if (ascend910) return "Ascend910";
  if (ascend310p) return "Ascend310P";
  if (ascend310) return "Ascend310";
  return "npu";
}

absl::StatusOr<DeviceIntake> DeviceIntakeFromConfigMap(const store::Object& config_map,
                                                       const IntakeLimits& limits,
                                                       const model::DeviceNaming& naming) {
  const std::string name = store::NameOf(config_map);
  DeviceIntake out;
  out.device.cm_name = name;
  out.device.node = NodeOfConfigMap(name, model::kDeviceInfoPrefix);
  if (out.device.node.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("configmap ", name, " is not a device-info CM"));
  }
  CLUSTERD_ASSIGN_OR_RETURN(auto data, DataOf(config_map, limits));
  auto cfg_it = data.find(std::string(model::kDeviceInfoCfgKey));
  if (cfg_it == data.end()) {
    return absl::InvalidArgumentError(absl::StrCat("configmap ", name, ": no DeviceInfoCfg"));
  }
  absl::StatusOr<model::DeviceInfoCfg> cfg = model::ParseDeviceInfoCfg(cfg_it->second);
  if (!cfg.ok()) return Annotate(cfg.status(), absl::StrCat("configmap ", name));

  const auto& list = cfg->device_info.device_list;
  DeviceRecord& d = out.device;
  const model::DeviceNameEntry* renamed = nullptr;
  for (const auto& [key, value] : list) {
    if ((renamed = naming.EntryOfDeviceListKey(key)) != nullptr) break;
  }
  if (renamed != nullptr) {
    d.device_type = renamed->resource_type;
    d.resource_name = renamed->device_public_type;
    d.name_prefix = renamed->device_public_name_pre;
  } else {
    d.device_type = DetectDeviceType(list);
  }
  d.update_time_s = cfg->device_info.update_time;
  d.super_pod_id = cfg->super_pod_id;
  d.server_index = cfg->server_index;
  d.rack_id = cfg->rack_id.value_or(0);
  const model::DeviceListKeys keys = d.Keys();
  d.available = SortedNames(list, keys.available);
  d.unhealthy = SortedNames(list, keys.unhealthy);
  d.network_unhealthy = SortedNames(list, keys.network_unhealthy);
  d.recovering = SortedNames(list, keys.recovering);

  // A 310 node spells its fault key like a 310P node (§1.2.1 quirk); the original then reads
  // its faults from an absent key half of the time. We read the key that is there.
  auto fault_it = list.find(keys.fault);
  if (fault_it == list.end() && d.device_type == "Ascend310" && renamed == nullptr) {
    fault_it = list.find("huawei.com/Ascend310P-Fault");
  }
  if (fault_it != list.end()) {
    absl::StatusOr<std::vector<model::DeviceFault>> faults =
        model::ParseDeviceFaults(fault_it->second);
    if (!faults.ok()) {
      return Annotate(faults.status(), absl::StrCat("configmap ", name, " ", fault_it->first));
    }
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const model::DeviceFault& f : *faults) {
      if (BadNpuName(f.npu_name)) {
        out.dropped.push_back(absl::StrCat("fault with invalid NPU name \"", f.npu_name, "\""));
        continue;
      }
      const std::string entry_level = !f.fault_level.empty() ? f.fault_level : f.fault_handling;
      std::vector<std::string> codes = model::SplitFaultCodes(f.fault_code);
      for (std::string& code : codes) {
        NpuFault nf;
        nf.fault_type = f.fault_type;
        nf.npu_name = f.npu_name;
        nf.level = entry_level;
        if (auto m = f.fault_time_and_level_map.find(code); m != f.fault_time_and_level_map.end()) {
          if (!m->second.fault_level.empty()) nf.level = m->second.fault_level;
          nf.fault_time = m->second.fault_time;
        }
        if (code.empty() &&
            nf.level == model::FaultLevelName(model::FaultLevel::kManuallySeparateNPU)) {
          code = std::string(kPseudoCodeManuallySeparate);
          nf.fault_time = -1;
        }
        nf.code = std::move(code);
        if (!seen.emplace(nf.fault_type, nf.npu_name, nf.code).second) continue;
        d.faults.push_back(std::move(nf));
        if (d.faults.size() > limits.max_faults_per_node) {
          return absl::ResourceExhaustedError(absl::StrCat("configmap ", name, ": more than ",
                                                           limits.max_faults_per_node, " faults"));
        }
      }
    }
  }

  auto sw_it = data.find(std::string(model::kSwitchInfoCfgKey));
  if (sw_it != data.end() && !sw_it->second.empty()) {
    absl::StatusOr<model::SwitchInfo> info = model::ParseSwitchInfo(sw_it->second);
    if (!info.ok())
      return Annotate(info.status(), absl::StrCat("configmap ", name, " SwitchInfoCfg"));
    SwitchRecord sw;
    sw.node = d.node;
    sw.cm_name = absl::StrCat(Sv(model::kSwitchInfoPrefix), d.node);
    sw.info = *std::move(info);
    if (sw.info.fault_code.has_value()) {
      for (const std::string& text : *sw.info.fault_code) {
        absl::StatusOr<model::SwitchFaultEvent> event = model::ParseSwitchFaultEvent(text);
        if (!event.ok()) {
          out.dropped.push_back(
              absl::StrCat("unparsable switch fault event: ", event.status().message()));
          continue;
        }
        sw.events.push_back(*std::move(event));
      }
    }
    out.switch_record = std::move(sw);
  }
  return out;
}

absl::StatusOr<NodeRecord> NodeRecordFromConfigMap(const store::Object& config_map,
                                                   const IntakeLimits& limits) {
  const std::string name = store::NameOf(config_map);
  NodeRecord out;
  out.cm_name = name;
  out.node = NodeOfConfigMap(name, model::kNodeInfoPrefix);
  if (out.node.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("configmap ", name, " is not a node-info CM"));
  }
  CLUSTERD_ASSIGN_OR_RETURN(auto data, DataOf(config_map, limits));
  auto it = data.find(std::string(model::kNodeInfoKey));
  if (it == data.end()) {
    return absl::InvalidArgumentError(absl::StrCat("configmap ", name, ": no NodeInfo"));
  }
  absl::StatusOr<model::NodeInfo> info = model::ParseNodeInfoValue(it->second);
  if (!info.ok()) return Annotate(info.status(), absl::StrCat("configmap ", name));
  out.info = *std::move(info);
  if (auto t = data.find(std::string(model::kNodeInfoUpdateTimeKey)); t != data.end()) {
    out.update_time_ms = model::ParseNodeInfoUpdateTimeMs(t->second);
  }
  return out;
}

void CarryReceiveTimes(const DeviceRecord* previous, DeviceRecord& next, int64_t now_ms) {
  std::map<std::pair<std::string_view, std::string_view>, int64_t> times;
  if (previous != nullptr) {
    for (const NpuFault& f : previous->faults) {
      times.emplace(std::make_pair(std::string_view(f.npu_name), std::string_view(f.code)),
                    f.received_ms);
    }
  }
  for (NpuFault& f : next.faults) {
    auto it = times.find({f.npu_name, f.code});
    f.received_ms = it != times.end() ? it->second : now_ms;
  }
}

void CarryReceiveTimes(const SwitchRecord* previous, SwitchRecord& next, int64_t now_ms) {
  next.received_ms.clear();
  if (!next.info.fault_time_and_level_map.has_value()) return;
  for (const auto& [key, value] : *next.info.fault_time_and_level_map) {
    int64_t t = now_ms;
    if (previous != nullptr) {
      if (auto it = previous->received_ms.find(key); it != previous->received_ms.end()) {
        t = it->second;
      }
    }
    next.received_ms[key] = t;
  }
}

}  // namespace clusterd::cluster
