#include "sim/sim_objects.h"

#include <cstdio>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check_code.h"
#include "sim/a5_network.h"

namespace clusterd::sim {

std::string NodeIp(int node_index) { return absl::StrCat("192.168.0.", 10 + node_index); }

std::string DeviceIp(int node_index, int npu) {
  return absl::StrCat("10.0.", node_index, ".", 10 + npu);
}

int ServerIndex(const ClusterSpec& cluster, int node_index) {
  return cluster.nodes_per_super_pod > 0 ? (node_index - 1) % cluster.nodes_per_super_pod
                                         : node_index - 1;
}

uint32_t SuperDeviceId(const ClusterSpec& cluster, int node_index, int npu) {
  const uint32_t server = static_cast<uint32_t>(ServerIndex(cluster, node_index)) & 0x3FF;
  const uint32_t phy = static_cast<uint32_t>(npu);
  const uint32_t die = (phy / 2) * 4 + phy % 2;
  return server << 22 | (die & 0x3F) << 16 | (phy & 0xFFFF);
}

std::string StableUid(std::string_view seed) {
  const std::string hex = Sha256Hex(seed);
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-4", hex.substr(13, 3), "-8",
                      hex.substr(17, 3), "-", hex.substr(20, 12));
}

Json NodeObject(const ClusterSpec& cluster, int node_index) {
  const std::string name = SimNodeName(node_index);
  Json labels = {{"kubernetes.io/hostname", name},
                 {"node.kubernetes.io/npu.chip.name", cluster.chip},
                 {"accelerator", "huawei-Ascend910"}};
  Json annotations = {{"product-serial-number", absl::StrCat("SN", 100000 + node_index)}};
  if (cluster.nodes_per_super_pod > 0) {
    annotations["superPodID"] = std::to_string((node_index - 1) / cluster.nodes_per_super_pod);
    if (cluster.chip == "Ascend910A3") {
      // What the device plugin publishes on A3 super-pod nodes (§1.3): the pingmesh topology of
      // §7.2 is built from these.
      annotations["serverType"] = "A3";
      annotations["serverIndex"] = std::to_string(ServerIndex(cluster, node_index));
      Json infos = Json::object();
      for (int npu = 0; npu < cluster.npus_per_node; ++npu) {
        infos[absl::StrCat("Ascend910-", npu)] = {
            {"IP", DeviceIp(node_index, npu)},
            {"SuperDeviceID", SuperDeviceId(cluster, node_index, npu)},
            {"levelList", Json::array()}};
      }
      annotations["baseDeviceInfos"] = infos.dump();
    } else if (IsA5(cluster)) {
      // An A5 super-pod node (jobs-ranktable-diagnosis.md §7.2: serverType npu with label
      // accelerator-type 950-SuperPod-Atlas-8): its rack, and each NPU's probe address and network
      // path, the fields clusterd's A5 root cause reads (docs/diagnosis.md).
      labels["accelerator-type"] = "950-SuperPod-Atlas-8";
      annotations["serverType"] = "npu";
      annotations["serverIndex"] = std::to_string(ServerIndex(cluster, node_index));
      annotations["rackID"] = std::to_string(RackOf(cluster, node_index));
      Json infos = Json::object();
      for (int npu = 0; npu < cluster.npus_per_node; ++npu) {
        const A5NetPath path = NetPathOf(cluster, node_index, npu);
        infos[absl::StrCat("Ascend910-", npu)] = {
            {"IP", DeviceIp(node_index, npu)},
            {"SuperDeviceID", SuperDeviceId(cluster, node_index, npu)},
            {"NetPlaneId", std::to_string(path.plane)},
            {"L1", std::to_string(path.l1)},
            {"L2", std::to_string(path.l2)}};
      }
      annotations["baseDeviceInfos"] = infos.dump();
    }
  }
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"uid", StableUid("node/" + name)},
        {"labels", labels},
        {"annotations", annotations}}},
      {"status",
       {{"addresses", Json::array({{{"type", "InternalIP"}, {"address", NodeIp(node_index)}},
                                   {{"type", "Hostname"}, {"address", name}}})},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})},
        {"allocatable",
         {{IsA5(cluster) ? "huawei.com/npu" : "huawei.com/Ascend910",
           std::to_string(cluster.npus_per_node)}}}}}};
}

Json AscendJobObject(const JobSpec& job, const std::string& uid) {
  return Json{{"apiVersion", "mindxdl.gitee.com/v1"},
              {"kind", "AscendJob"},
              {"metadata",
               {{"name", job.name},
                {"namespace", job.ns},
                {"uid", uid},
                {"labels", {{"framework", "pytorch"}}}}},
              {"spec", {{"replicaSpecs", {{"Worker", {{"replicas", job.pods}}}}}}},
              {"status", {{"conditions", Json::array()}}}};
}

std::string PodGroupName(const JobSpec& job) { return absl::StrCat(job.name, "-pg"); }

Json PodGroupObject(const JobSpec& job, const std::string& job_uid) {
  Json labels = {{"framework", "pytorch"}};
  if (job.process_recover) labels["process-recover-enable"] = "on";
  if (job.hot_switch) labels["subHealthyStrategy"] = "hotSwitch";
  Json annotations = Json::object();
  if (!job.strategies.empty()) annotations["recover-strategy"] = absl::StrJoin(job.strategies, ",");
  return Json{
      {"apiVersion", "scheduling.volcano.sh/v1beta1"},
      {"kind", "PodGroup"},
      {"metadata",
       {{"name", PodGroupName(job)},
        {"namespace", job.ns},
        {"uid", StableUid("podgroup/" + job_uid)},
        {"labels", labels},
        {"annotations", annotations},
        {"ownerReferences", Json::array({{{"apiVersion", "mindxdl.gitee.com/v1"},
                                          {"kind", "AscendJob"},
                                          {"name", job.name},
                                          {"uid", job_uid},
                                          {"controller", true}}})}}},
      {"spec",
       {{"minMember", job.pods},
        {"minResources", {{"huawei.com/Ascend910", std::to_string(job.pods * job.npus_per_pod)}}}}},
      {"status", {{"phase", "Running"}}}};
}

std::string PodName(const JobSpec& job, int rank) {
  return absl::StrCat(job.name, rank == 0 ? "-master-" : "-worker-", rank == 0 ? 0 : rank - 1);
}

Json PodObject(const ClusterSpec& cluster, const JobSpec& job, const std::string& job_uid,
               const PodPlacement& p) {
  const int super_pod =
      cluster.nodes_per_super_pod > 0 ? (p.node_index - 1) / cluster.nodes_per_super_pod : -2;
  Json devices = Json::array();
  for (int npu : p.npus) {
    devices.push_back({{"device_id", std::to_string(npu)},
                       {"device_ip", DeviceIp(p.node_index, npu)},
                       {"super_device_id", cluster.nodes_per_super_pod > 0
                                               ? std::to_string(p.node_index * 100 + npu)
                                               : std::string("0")}});
  }
  const std::string host_ip = NodeIp(p.node_index);
  Json allocation = {
      {"pod_name", p.name},
      {"server_id", p.uid},
      {"host_ip", host_ip},
      {"super_pod_id", super_pod},
      {"devices", devices},
      {"rack_id", -2},
      {"server_index", cluster.nodes_per_super_pod > 0
                           ? std::to_string((p.node_index - 1) % cluster.nodes_per_super_pod)
                           : std::string("-2")},
      {"server_ip", host_ip}};
  std::vector<std::string> real;
  for (int npu : p.npus) real.push_back(absl::StrCat("Ascend910-", npu));
  Json annotations = {{kRankIndexAnnotation, std::to_string(p.rank)},
                      {kAllocationAnnotation, allocation.dump()},
                      {kAscendRealAnnotation, absl::StrJoin(real, ",")},
                      {kGroupNameAnnotation, PodGroupName(job)},
                      {"huawei.com/Ascend910", absl::StrJoin(real, ",")}};
  if (p.backup) {
    annotations["podType"] = "backup";
    // As the operator writes it (jobs-ranktable-diagnosis.md §1.3): the rank table leaves the
    // backup out while its source pod exists.
    if (!p.backup_source.empty()) annotations["backupSourcePodName"] = p.backup_source;
  }
  Json container = {
      {"name", "ascend"},
      {"image", "train:latest"},
      {"resources", {{"limits", {{"huawei.com/Ascend910", std::to_string(p.npus.size())}}}}}};
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", p.name},
        {"namespace", job.ns},
        {"uid", p.uid},
        {"labels", {{"job-name", job.name}, {"app", "training"}}},
        {"annotations", annotations},
        {"ownerReferences", Json::array({{{"apiVersion", "mindxdl.gitee.com/v1"},
                                          {"kind", "AscendJob"},
                                          {"name", job.name},
                                          {"uid", job_uid},
                                          {"controller", true}}})}}},
      {"spec", {{"nodeName", SimNodeName(p.node_index)}, {"containers", Json::array({container})}}},
      {"status",
       {{"phase", "Running"},
        {"hostIP", host_ip},
        {"podIP", absl::StrCat("172.16.", p.node_index, ".", 10 + p.rank)},
        {"containerStatuses",
         Json::array({{{"name", "ascend"},
                       {"containerID", absl::StrCat("containerd://", p.uid.substr(0, 12))}}})}}}};
}

Json ResetConfigMap(const JobSpec& job) {
  const std::string body = R"({"status":"initializing"})";
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", absl::StrCat("reset-config-", job.name)},
                {"namespace", job.ns},
                {"labels", {{"reset", "true"}}}}},
              {"data", {{"reset.json", body}, {"checkCode", Sha256Hex(body)}}}};
}

}  // namespace clusterd::sim
