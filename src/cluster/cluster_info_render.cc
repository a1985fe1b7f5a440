#include "cluster/cluster_info_render.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/canonical_json.h"
#include "model/device_info.h"
#include "model/npu_name_list.h"

namespace clusterd::cluster {

using nlohmann::ordered_json;

std::vector<model::DeviceFault> RegroupFaults(const std::vector<NpuFault>& faults) {
  // (npu, fault_type) -> per-code faults; std::map gives the plain string order of §1.4.
  std::map<std::pair<std::string, std::string>, std::vector<const NpuFault*>> groups;
  for (const NpuFault& f : faults) groups[{f.npu_name, f.fault_type}].push_back(&f);

  const std::string_view manual = model::FaultLevelName(model::FaultLevel::kManuallySeparateNPU);
  std::vector<model::DeviceFault> out;
  out.reserve(groups.size());
  for (auto& [key, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [](const NpuFault* a, const NpuFault* b) {
      if (a->level != b->level) return a->level < b->level;
      return a->code < b->code;
    });
    model::DeviceFault df;
    df.fault_type = key.second;
    df.npu_name = key.first;
    std::string_view level;
    std::vector<std::string> codes;
    for (const NpuFault* f : members) {
      level = MoreSevereLevel(level, f->level);
      if (f->level == manual) continue;
      if (df.fault_time_and_level_map.count(f->code) != 0) continue;
      codes.push_back(f->code);
      df.fault_time_and_level_map[f->code] = model::FaultTimeAndLevel{f->fault_time, f->level};
    }
    df.fault_code = absl::StrJoin(codes, ",");
    df.fault_level = std::string(level);
    df.large_model_fault_level = df.fault_level;
    df.fault_handling = df.fault_level;
    out.push_back(std::move(df));
  }
  return out;
}

namespace {

// The DeviceList of a node's entry: a Go map, so its keys sorted by byte value (of two equal
// keys the later one's value).
std::map<std::string, std::string> DeviceListOf(const DeviceRecord& record) {
  model::DeviceListKeys keys = record.Keys();
  std::map<std::string, std::string> list;
  list[std::move(keys.available)] = model::JoinNpuNames(record.available);
  list[std::move(keys.fault)] = model::RenderDeviceFaults(RegroupFaults(record.faults));
  list[std::move(keys.network_unhealthy)] = model::JoinNpuNames(record.network_unhealthy);
  list[std::move(keys.unhealthy)] = model::JoinNpuNames(record.unhealthy);
  list[std::move(keys.recovering)] = model::JoinNpuNames(record.recovering);
  return list;
}

}  // namespace

ordered_json DeviceEntryJson(const DeviceRecord& record) {
  ordered_json device_list = ordered_json::object();
  for (auto& [k, v] : DeviceListOf(record)) device_list[k] = std::move(v);
  ordered_json out;
  out["DeviceList"] = std::move(device_list);
  out["UpdateTime"] = record.update_time_s;
  out["CmName"] = record.cm_name;
  out["SuperPodID"] = record.super_pod_id;
  out["RackID"] = record.rack_id;
  out["ServerIndex"] = record.server_index;
  return out;
}

std::string RenderDeviceEntry(const DeviceRecord& record) {
  // The bytes CanonicalJson(DeviceEntryJson(record)) gives, written directly: every node's
  // entry is rendered at each of its changes and for the whole cluster at start-up (50,000
  // entries), where building and walking the JSON tree took most of the time.
  std::string out;
  out.reserve(256);
  out += R"({"DeviceList":{)";
  bool first = true;
  for (const auto& [key, value] : DeviceListOf(record)) {
    if (!first) out.push_back(',');
    first = false;
    out += QuoteGoString(key);
    out.push_back(':');
    out += QuoteGoString(value);
  }
  absl::StrAppend(&out, R"(},"UpdateTime":)", record.update_time_s, R"(,"CmName":)",
                  QuoteGoString(record.cm_name), R"(,"SuperPodID":)", record.super_pod_id,
                  R"(,"RackID":)", record.rack_id, R"(,"ServerIndex":)", record.server_index, "}");
  return out;
}

std::string RenderSwitchEntry(const SwitchRecord& record) {
  ordered_json out = model::ToJson(record.info);
  out["CmName"] = record.cm_name;
  return CanonicalJson(out);
}

std::string RenderNodeEntry(const NodeRecord& record) {
  ordered_json info = model::ToJson(record.info);
  ordered_json out;
  out["FaultDevList"] = info["FaultDevList"];
  out["NodeStatus"] = info["NodeStatus"];
  out["CmName"] = record.cm_name;
  out["UpdateTime"] = record.update_time_ms;
  return CanonicalJson(out);
}

std::string RenderEntryMap(const std::vector<std::pair<std::string, const std::string*>>& sorted) {
  if (sorted.empty()) return "";
  size_t size = 2;
  for (const auto& [key, entry] : sorted) size += key.size() + entry->size() + 4;
  std::string out;
  out.reserve(size);
  out.push_back('{');
  bool first = true;
  for (const auto& [key, entry] : sorted) {
    if (!first) out.push_back(',');
    first = false;
    out += QuoteGoString(key);
    out.push_back(':');
    out += *entry;
  }
  out.push_back('}');
  return out;
}

}  // namespace clusterd::cluster
