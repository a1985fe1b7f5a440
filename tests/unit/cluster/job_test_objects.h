#pragma once

// Kubernetes-shaped objects for the job-registry tests: the worked example of
// jobs-ranktable-diagnosis.md §2.2 (AscendJob default/pt-2x8, 2 pods x 8 NPUs) and variations.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace clusterd::cluster::testing {

using Json = nlohmann::ordered_json;

inline constexpr char kJobUid[] = "7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11";

struct PodSpec {
  std::string name;
  std::string ns = "default";
  std::string uid;
  std::string node = "node-a";
  std::string host_ip = "192.168.0.11";
  std::string phase = "Running";
  std::string rank_index = "0";  // "" = no annotation
  std::string owner_uid = kJobUid;
  std::string owner_kind = "AscendJob";
  std::string owner_name = "pt-2x8";
  bool owner_controller = true;
  int devices = 8;
  std::string device_ip_prefix = "10.1.0.";  // device i gets prefix + (10 + i)
  bool needs_npu = true;
  std::string resource = "huawei.com/Ascend910";  // the container limit asking for NPUs
  bool with_allocation = true;
  std::string allocation_key = "ascend.kubectl.kubernetes.io/ascend-910-configuration";
  std::string allocation_override;  // raw annotation value, when set
  std::string container_id = "containerd://3f1e0c2a9b7d";
  std::vector<std::pair<std::string, std::string>> extra_annotations;
  std::vector<std::pair<std::string, std::string>> labels;
  std::string master_addr_env;
  bool data_trace_mount = false;
};

inline std::string AllocationJson(const PodSpec& p) {
  Json devices = Json::array();
  for (int i = 0; i < p.devices; ++i) {
    devices.push_back({{"device_id", std::to_string(i)},
                       {"device_ip", absl::StrCat(p.device_ip_prefix, 10 + i)},
                       {"super_device_id", "0"}});
  }
  Json alloc = {{"pod_name", p.name},   {"server_id", p.uid},    {"host_ip", p.host_ip},
                {"super_pod_id", -2},   {"devices", devices},    {"rack_id", -2},
                {"server_index", "-2"}, {"server_ip", p.host_ip}};
  return alloc.dump();
}

inline Json PodObject(const PodSpec& p) {
  Json annotations = Json::object();
  if (!p.rank_index.empty()) annotations["hccl/rankIndex"] = p.rank_index;
  if (p.with_allocation) {
    annotations[p.allocation_key] =
        p.allocation_override.empty() ? AllocationJson(p) : p.allocation_override;
  }
  for (const auto& [k, v] : p.extra_annotations) annotations[k] = v;
  Json labels = Json::object();
  for (const auto& [k, v] : p.labels) labels[k] = v;
  Json metadata = {{"name", p.name}, {"namespace", p.ns}};
  if (!p.uid.empty()) metadata["uid"] = p.uid;
  metadata["labels"] = labels;
  metadata["annotations"] = annotations;
  if (!p.owner_uid.empty()) {
    metadata["ownerReferences"] = Json::array({{{"apiVersion", "mindxdl.gitee.com/v1"},
                                                {"kind", p.owner_kind},
                                                {"name", p.owner_name},
                                                {"uid", p.owner_uid},
                                                {"controller", p.owner_controller}}});
  }
  Json container = {{"name", "ascend"}, {"image", "train:latest"}};
  if (p.needs_npu) container["resources"] = {{"limits", {{p.resource, "8"}}}};
  if (!p.master_addr_env.empty()) {
    container["env"] = Json::array({{{"name", "MASTER_ADDR"}, {"value", p.master_addr_env}}});
  }
  if (p.data_trace_mount) {
    container["volumeMounts"] = Json::array(
        {{{"name", "datatrace"}, {"mountPath", "/user/cluster-info/datatrace-config"}}});
  }
  Json status = {{"phase", p.phase}, {"hostIP", p.host_ip}, {"podIP", "172.16.0.1"}};
  status["containerStatuses"] =
      Json::array({{{"name", "ascend"}, {"containerID", p.container_id}}});
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", metadata},
              {"spec", {{"nodeName", p.node}, {"containers", Json::array({container})}}},
              {"status", status}};
}

// Pod `pt-2x8-master-0` (rank 0, node-a) or `pt-2x8-worker-0` (rank 1, node-b) of §2.2.
inline PodSpec ExamplePod(int rank) {
  PodSpec p;
  if (rank == 0) {
    p.name = "pt-2x8-master-0";
    p.uid = "5b0f2c1e-0000-4000-8000-000000000001";
    p.node = "node-a";
    p.host_ip = "192.168.0.11";
    p.device_ip_prefix = "10.1.0.";
    p.container_id = "containerd://3f1e0c2a9b7d";
  } else {
    p.name = "pt-2x8-worker-0";
    p.uid = "9c2e7d4f-0000-4000-8000-000000000002";
    p.node = "node-b";
    p.host_ip = "192.168.0.12";
    p.device_ip_prefix = "10.1.1.";
    p.container_id = "containerd://8a4c5d6e7f10";
  }
  p.rank_index = std::to_string(rank);
  return p;
}

struct PodGroupSpec {
  std::string name = "pt-2x8-pg";
  std::string ns = "default";
  std::string uid = "pg-uid-1";
  std::string owner_uid = kJobUid;
  std::string owner_kind = "AscendJob";
  std::string owner_name = "pt-2x8";
  int64_t min_member = 2;
  std::string min_resource = "huawei.com/Ascend910";
  std::vector<std::pair<std::string, std::string>> labels = {{"framework", "pytorch"}};
  std::vector<std::pair<std::string, std::string>> annotations;
};

inline Json PodGroupObject(const PodGroupSpec& g) {
  Json labels = Json::object();
  for (const auto& [k, v] : g.labels) labels[k] = v;
  Json annotations = Json::object();
  for (const auto& [k, v] : g.annotations) annotations[k] = v;
  Json metadata = {{"name", g.name},
                   {"namespace", g.ns},
                   {"uid", g.uid},
                   {"labels", labels},
                   {"annotations", annotations}};
  if (!g.owner_uid.empty()) {
    metadata["ownerReferences"] = Json::array({{{"apiVersion", "mindxdl.gitee.com/v1"},
                                                {"kind", g.owner_kind},
                                                {"name", g.owner_name},
                                                {"uid", g.owner_uid},
                                                {"controller", true}}});
  }
  Json spec = {{"minMember", g.min_member}};
  if (!g.min_resource.empty()) spec["minResources"] = {{g.min_resource, "16"}};
  return Json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", metadata},
              {"spec", spec}};
}

inline Json NodeObject(const std::string& name, const std::string& ip, const std::string& sn) {
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"annotations", {{"product-serial-number", sn}}}}},
      {"status", {{"addresses", Json::array({{{"type", "InternalIP"}, {"address", ip}}})}}}};
}

}  // namespace clusterd::cluster::testing
