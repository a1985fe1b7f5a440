#include "diagnosis/super_pod_topology.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/check_code.h"
#include "common/json_util.h"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

std::string Annotation(const store::Object& node, const char* key) {
  const auto& md = node.value("metadata", Json::object());
  if (!md.contains("annotations") || !md["annotations"].is_object()) return "";
  return StringOr(md["annotations"], key, "");
}

std::string Label(const store::Object& node, const char* key) {
  const auto& md = node.value("metadata", Json::object());
  if (!md.contains("labels") || !md["labels"].is_object()) return "";
  return StringOr(md["labels"], key, "");
}

Json PodJson(const SuperPodDevice& pod, bool with_rack) {
  Json nodes = Json::object();
  for (const auto& [name, n] : pod.nodes) {  // std::map: sorted like Go's map keys
    Json devices = Json::object();
    for (const auto& [phy, sdid] : n.devices) devices[phy] = sdid;
    Json entry = Json{{"NodeName", n.node_name}, {"ServerID", n.server_id}, {"DeviceMap", devices}};
    if (with_rack && !n.rack_id.empty()) entry["RackID"] = n.rack_id;
    if (with_rack && !n.npu_info.empty()) {
      Json infos = Json::object();
      for (const auto& [phy, info] : n.npu_info) {
        Json i = Json{{"Addr", info.addr}, {"NetPlaneId", info.plane}};
        if (!info.l1.empty()) i["L1"] = info.l1;
        if (!info.l2.empty()) i["L2"] = info.l2;
        infos[phy] = std::move(i);
      }
      entry["NpuInfoMap"] = std::move(infos);
    }
    nodes[name] = entry;
  }
  Json j =
      Json{{"Version", pod.version}, {"SuperPodID", pod.super_pod_id}, {"NodeDeviceMap", nodes}};
  if (!pod.accelerator_type.empty()) j["AcceleratorType"] = pod.accelerator_type;
  return j;
}

// An A5 device's address and path; nullopt when it has none (no IP or no plane).
absl::StatusOr<std::optional<NpuNetInfo>> NpuNetInfoOf(const Json& info, bool has_rack) {
  NpuNetInfo out;
  for (auto [key, field] : {std::pair{"IP", &out.addr}, std::pair{"NetPlaneId", &out.plane},
                            std::pair{"L1", &out.l1}, std::pair{"L2", &out.l2}}) {
    if (!info.contains(key)) continue;
    if (!info[key].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(key, " is not a string"));
    }
    *field = info[key].get<std::string>();
  }
  if (out.plane.empty()) {
    if (!out.l1.empty() || !out.l2.empty()) {
      return absl::InvalidArgumentError("L1 / L2 without NetPlaneId");
    }
    return std::optional<NpuNetInfo>();
  }
  if (out.addr.empty()) return absl::InvalidArgumentError("NetPlaneId without IP");
  if (!out.l2.empty() && out.l1.empty()) return absl::InvalidArgumentError("L2 without L1");
  if (!has_rack) return absl::InvalidArgumentError("a network path on a node without rackID");
  return std::optional<NpuNetInfo>(std::move(out));
}

}  // namespace

std::map<std::string, SuperPodDevice> BuildSuperPods(const std::vector<store::Object>& nodes,
                                                     std::vector<std::string>* problems) {
  std::map<std::string, SuperPodDevice> out;
  for (const store::Object& node : nodes) {
    int64_t pod_id = -1;
    if (!absl::SimpleAtoi(Annotation(node, "superPodID"), &pod_id) || pod_id < 0) continue;
    const std::string server_type = Annotation(node, "serverType");
    const std::string accel = Label(node, "accelerator-type");
    const bool a5 = server_type == "npu" &&
                    (accel == "950-SuperPod-Atlas-8" || accel == "850-SuperPod-Atlas-8");
    if (server_type != "A3" && !a5) continue;
    SuperPodDevice& pod = out[std::to_string(pod_id)];
    pod.super_pod_id = std::to_string(pod_id);
    pod.version = a5 ? "A5" : "A3";
    if (a5) pod.accelerator_type = accel;
    SuperPodNodeEntry entry;
    entry.node_name = store::NameOf(node);
    entry.server_id = Annotation(node, "serverIndex");
    if (a5) entry.rack_id = Annotation(node, "rackID");
    auto infos = ParseJson(Annotation(node, "baseDeviceInfos"), "baseDeviceInfos");
    if (infos.ok() && infos->is_object()) {
      for (auto it = infos->begin(); it != infos->end(); ++it) {
        const std::string& key = it.key();
        const size_t dash = key.rfind('-');
        if (!absl::StartsWith(key, "Ascend") || dash == std::string::npos) continue;
        const auto& info = it.value();
        if (!info.is_object() || !info.contains("SuperDeviceID") ||
            !info["SuperDeviceID"].is_number_integer()) {
          continue;
        }
        const std::string phy = key.substr(dash + 1);
        entry.devices[phy] = std::to_string(info["SuperDeviceID"].get<uint64_t>());
        if (!a5) continue;
        auto net = NpuNetInfoOf(info, !entry.rack_id.empty());
        if (!net.ok()) {
          if (problems) {
            problems->push_back(absl::StrCat("node ", entry.node_name, " baseDeviceInfos ", key,
                                             ": ", net.status().message()));
          }
          continue;
        }
        if (*net) entry.npu_info[phy] = **net;
      }
    }
    pod.nodes[entry.node_name] = std::move(entry);
  }
  return out;
}

std::string SuperPodDeviceJson(const SuperPodDevice& pod) {
  return CanonicalJson(PodJson(pod, false));
}

std::string SuperPodFileJson(const SuperPodDevice& pod) { return PodJson(pod, true).dump(4); }

store::Object SuperPodConfigMap(const SuperPodDevice& pod) {
  return store::Object{{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata",
                        {{"name", absl::StrCat(std::string(kSuperPodPrefix), pod.super_pod_id)},
                         {"namespace", std::string(kPingmeshNamespace)},
                         {"labels", {{"app", "pingmesh"}}}}},
                       {"data", {{std::string(kSuperPodDeviceKey), SuperPodDeviceJson(pod)}}}};
}

std::string SuperPodContentHash(const SuperPodDevice& pod) {
  return Sha256Hex(SuperPodFileJson(pod));
}

}  // namespace clusterd::diagnosis

namespace clusterd::diagnosis {

std::vector<int64_t> RoceSuperPods(const std::map<std::string, SuperPodDevice>& pods) {
  std::vector<int64_t> out;
  for (const auto& [id, pod] : pods) {
    int64_t n = 0;
    if (pod.accelerator_type == "950-SuperPod-Atlas-8" && absl::SimpleAtoi(id, &n)) {
      out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string RoceListJson(const std::vector<int64_t>& ids) {
  return Json{{"superPodList", ids}}.dump(4);
}

}  // namespace clusterd::diagnosis
