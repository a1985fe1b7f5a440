// Decoding of pods, PodGroups and the device-allocation annotation (jobs-ranktable-diagnosis.md
// §1.3-§1.5).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/pod_device_allocation.h"
#include "model/pod_group_info.h"
#include "model/pod_info.h"

namespace clusterd::model {
namespace job_pod_info_test {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;

// The annotation example of §1.4.
constexpr char kAllocationExample[] =
    R"({"pod_name":"pt-2x8-master-0","server_id":"5b0f2c1e-pod-uid","host_ip":"192.168.0.11",)"
    R"("super_pod_id":-2,)"
    R"("devices":[{"device_id":"0","device_ip":"10.1.0.10","super_device_id":"0"},)"
    R"({"device_id":"1","device_ip":"10.1.0.11","super_device_id":"0"}],)"
    R"("rack_id":-2,"server_index":"-2","server_ip":"192.168.0.11"})";

TEST(PodDeviceAllocation, DecodesTheSpecExample) {
  auto alloc = ParsePodDeviceAllocation(kAllocationExample, "pod default/p");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(alloc->pod_name, "pt-2x8-master-0");
  EXPECT_EQ(alloc->server_id, "5b0f2c1e-pod-uid");
  EXPECT_EQ(alloc->host_ip, "192.168.0.11");
  EXPECT_EQ(alloc->super_pod_id, -2);
  EXPECT_EQ(alloc->rack_id, -2);
  EXPECT_EQ(alloc->server_index, "-2");
  ASSERT_EQ(alloc->devices.size(), 2u);
  EXPECT_EQ(alloc->devices[1].device_ip, "10.1.0.11");
  EXPECT_EQ(alloc->devices[1].super_device_id, "0");
}

TEST(PodDeviceAllocation, MissingFieldsKeepZeroValues) {
  auto alloc = ParsePodDeviceAllocation(R"({"devices":null})", "x");
  ASSERT_TRUE(alloc.ok());
  EXPECT_TRUE(alloc->devices.empty());
  EXPECT_EQ(alloc->super_pod_id, 0);
}

TEST(PodDeviceAllocation, MalformedTextIsAnErrorNamingThePod) {
  auto alloc = ParsePodDeviceAllocation("{", "pod default/p: annotation a");
  ASSERT_FALSE(alloc.ok());
  EXPECT_THAT(std::string(alloc.status().message()), HasSubstr("pod default/p: annotation a"));
}

TEST(PodDeviceAllocation, WrongFieldTypesAreErrors) {
  EXPECT_FALSE(ParsePodDeviceAllocation(R"({"super_pod_id":"-2"})", "x").ok());
  EXPECT_FALSE(ParsePodDeviceAllocation(R"({"devices":{}})", "x").ok());
  EXPECT_FALSE(ParsePodDeviceAllocation(R"({"devices":[{"device_ip":1}]})", "x").ok());
  EXPECT_FALSE(ParsePodDeviceAllocation(R"([1])", "x").ok());
  EXPECT_FALSE(
      ParsePodDeviceAllocation(R"({"devices":[{"levelList":[{"level":"0"}]}]})", "x").ok());
}

TEST(PodDeviceAllocation, DecodesLevelList) {
  auto alloc = ParsePodDeviceAllocation(
      R"({"devices":[{"device_id":"0","levelList":[{"level":3,"info":{"ROCE":{"net_layer":3,)"
      R"("net_instance_id":"c","net_type":"CLOS","net_attr":"","rank_addr_list":[{"addr_type":"IP",)"
      R"("addr":"1.2.3.4","ports":["0/1"],"plane_id":"p"}]}}}]}]})",
      "x");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  ASSERT_EQ(alloc->devices[0].level_list.size(), 1u);
  const RankLevelElement& e = alloc->devices[0].level_list[0].info.at("ROCE");
  EXPECT_EQ(e.net_layer, 3);
  EXPECT_EQ(
      SerializeRankLevelElement(e),
      R"({"net_layer":3,"net_instance_id":"c","net_type":"CLOS","net_attr":"",)"
      R"("rank_addr_list":[{"addr_type":"IP","addr":"1.2.3.4","ports":["0/1"],"plane_id":"p"}]})");
}

Json PodJson() {
  return Json::parse(R"({
    "metadata": {"name": "pt-0", "namespace": "default", "uid": "pod-uid",
      "labels": {"app": "pytorch", "jobID": "j"},
      "annotations": {"hccl/rankIndex": "3", "huawei.com/schedule_minAvailable": "4",
                      "podType": "backup", "backupSourcePodName": "pt-old"},
      "ownerReferences": [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid"},
                          {"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob", "name": "pt",
                           "uid": "job-uid", "controller": true}]},
    "spec": {"nodeName": "node-a", "containers": [
      {"name": "ascend", "resources": {"limits": {"huawei.com/Ascend910": "8"}},
       "env": [{"name": "MASTER_ADDR", "value": "10.0.0.1"}],
       "volumeMounts": [{"name": "d", "mountPath": "/user/cluster-info/datatrace-config"}]},
      {"name": "sidecar"}]},
    "status": {"phase": "Running", "hostIP": "192.168.0.11", "podIP": "172.16.0.9",
               "containerStatuses": [{"name": "ascend", "containerID": "containerd://abc"}]}
  })");
}

TEST(PodInfo, DecodesWhatTheRegistryReads) {
  auto pod = PodInfoFromObject(PodJson());
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->Key(), "default/pt-0");
  EXPECT_EQ(pod->uid, "pod-uid");
  ASSERT_TRUE(pod->controller.has_value());
  EXPECT_EQ(pod->controller->uid, "job-uid");
  EXPECT_EQ(pod->controller->kind, "AscendJob");
  EXPECT_EQ(pod->rank_index, 3);
  EXPECT_EQ(pod->min_available, 4);
  EXPECT_TRUE(pod->needs_npu);
  EXPECT_EQ(pod->container_count, 2);
  EXPECT_EQ(pod->master_addr_env, "10.0.0.1");
  EXPECT_TRUE(pod->mounts_data_trace);
  EXPECT_TRUE(pod->IsBackup());
  EXPECT_EQ(pod->container_ids.at("ascend"), "containerd://abc");
  EXPECT_EQ(pod->phase, "Running");
  EXPECT_EQ(pod->host_ip, "192.168.0.11");
  EXPECT_EQ(pod->pod_ip, "172.16.0.9");
  EXPECT_EQ(pod->Label("jobID"), "j");
  EXPECT_FALSE(pod->allocation_annotation_present);
  EXPECT_FALSE(DeviceAllocationComplete(*pod));
}

TEST(PodInfo, AllocationAnnotationCompletesTheAllocationEvenWhenMalformed) {
  Json j = PodJson();
  j["metadata"]["annotations"]["ascend.kubectl.kubernetes.io/ascend-npu-configuration"] = "{";
  auto pod = PodInfoFromObject(j);
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE(pod->allocation_annotation_present);
  EXPECT_FALSE(pod->allocation.has_value());
  EXPECT_THAT(pod->allocation_problem, HasSubstr("ascend-npu-configuration"));
  EXPECT_TRUE(DeviceAllocationComplete(*pod));
  // The big annotations are decoded, not kept.
  EXPECT_EQ(pod->Annotation("ascend.kubectl.kubernetes.io/ascend-npu-configuration"), "");
}

TEST(PodInfo, The910AnnotationWinsOverTheNpuOne) {
  Json j = PodJson();
  j["metadata"]["annotations"]["ascend.kubectl.kubernetes.io/ascend-npu-configuration"] = "{";
  j["metadata"]["annotations"]["ascend.kubectl.kubernetes.io/ascend-910-configuration"] =
      kAllocationExample;
  auto pod = PodInfoFromObject(j);
  ASSERT_TRUE(pod.ok());
  ASSERT_TRUE(pod->allocation.has_value());
  EXPECT_EQ(pod->allocation->devices.size(), 2u);
}

TEST(PodInfo, RankIndexMustBeADecimalInteger) {
  for (const char* bad : {"x", "1.5", " 1", "", "-1", "0x1"}) {
    Json j = PodJson();
    j["metadata"]["annotations"]["hccl/rankIndex"] = bad;
    auto pod = PodInfoFromObject(j);
    ASSERT_TRUE(pod.ok());
    EXPECT_FALSE(pod->rank_index.has_value()) << bad;
    EXPECT_THAT(pod->rank_index_problem, HasSubstr("annotation hccl/rankIndex")) << bad;
  }
  Json j = PodJson();
  j["metadata"]["annotations"]["hccl/rankIndex"] = "+7";
  EXPECT_EQ(PodInfoFromObject(j)->rank_index, 7);
}

TEST(PodInfo, PodWithoutControllerOwnerHasNone) {
  Json j = PodJson();
  j["metadata"]["ownerReferences"][1]["controller"] = false;
  EXPECT_FALSE(PodInfoFromObject(j)->controller.has_value());
  j["metadata"].erase("ownerReferences");
  EXPECT_FALSE(PodInfoFromObject(j)->controller.has_value());
}

TEST(PodInfo, ObjectWithoutNameIsRejected) {
  EXPECT_FALSE(PodInfoFromObject(Json::parse(R"({"metadata":{}})")).ok());
  EXPECT_FALSE(PodInfoFromObject(Json::parse("[]")).ok());
}

TEST(PodGroupInfo, DecodesOwnerMinMemberAndResourceType) {
  auto pg = PodGroupInfoFromObject(Json::parse(R"({
    "metadata": {"name": "pg", "namespace": "ns", "uid": "pg-uid", "labels": {"framework": "mindspore"},
                 "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                      "name": "vj", "uid": "vj-uid", "controller": true}]},
    "spec": {"minMember": 4, "minResources": {"cpu": "1", "huawei.com/Ascend910": "32"}}})"));
  ASSERT_TRUE(pg.ok());
  EXPECT_EQ(pg->controller->uid, "vj-uid");
  EXPECT_EQ(pg->controller->kind, "Job");
  EXPECT_EQ(pg->min_member, 4);
  EXPECT_EQ(pg->resource_type, "Ascend910");
  EXPECT_EQ(pg->Label("framework"), "mindspore");
}

TEST(PodGroupInfo, ResourceTypeRules) {
  EXPECT_EQ(ResourceTypeOf(Json::parse(R"({"huawei.com/npu":"8"})")), "npu");
  EXPECT_EQ(ResourceTypeOf(Json::parse(R"({"huawei.com/Ascend310P":"8"})")), "Ascend310");
  EXPECT_EQ(ResourceTypeOf(Json::parse(R"({"cpu":"8"})")), "unknown");
  auto pg =
      PodGroupInfoFromObject(Json::parse(R"({"metadata":{"name":"p"},"spec":{"minMember":1}})"));
  EXPECT_EQ(pg->resource_type, "");
}

}  // namespace job_pod_info_test
}  // namespace clusterd::model
