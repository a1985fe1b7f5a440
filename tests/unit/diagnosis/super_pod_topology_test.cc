#include "diagnosis/super_pod_topology.h"

#include "diagnosis/net_fault.h"
#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace super_pod_topology_test {

store::Object Node(std::string name, std::string pod, std::string type, std::string server,
                   std::string infos, std::string accel = "") {
  store::Object n{{"apiVersion", "v1"},
                  {"kind", "Node"},
                  {"metadata",
                   {{"name", name},
                    {"annotations",
                     {{"superPodID", pod},
                      {"serverType", type},
                      {"serverIndex", server},
                      {"baseDeviceInfos", infos},
                      {"rackID", "r1"}}}}}};
  if (!accel.empty()) n["metadata"]["labels"] = {{"accelerator-type", accel}};
  return n;
}

TEST(SuperPodTopology, BuildsTheA3DeviceMapFromNodes) {
  auto pods = BuildSuperPods(
      {Node(
           "node-a", "0", "A3", "15",
           R"({"Ascend910-0":{"IP":"x","SuperDeviceID":62914560},"Ascend910-1":{"SuperDeviceID":62980097}})"),
       Node("node-b", "-1", "A3", "1", "{}"), Node("node-c", "x", "A3", "1", "{}"),
       Node("node-d", "0", "npu", "2", "{}", "module-a3-16-super-pod")});
  ASSERT_EQ(pods.size(), 1u);
  const SuperPodDevice& pod = pods.at("0");
  EXPECT_EQ(SuperPodDeviceJson(pod),
            R"({"Version":"A3","SuperPodID":"0","NodeDeviceMap":{"node-a":{"NodeName":"node-a",)"
            R"("ServerID":"15","DeviceMap":{"0":"62914560","1":"62980097"}}}})");
  store::Object cm = SuperPodConfigMap(pod);
  EXPECT_EQ(cm["metadata"]["name"], "super-pod-0");
  EXPECT_EQ(cm["metadata"]["namespace"], "cluster-system");
  EXPECT_EQ(cm["metadata"]["labels"]["app"], "pingmesh");
  // The file parses back into the topology the analysis uses.
  auto topo = ParseSuperPodTopology(SuperPodFileJson(pod), "file");
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->npu_by_sdid.at("62980097").node_name, "node-a");
  EXPECT_EQ(SuperPodContentHash(pod).size(), 64u);
}

TEST(SuperPodTopology, A5NodesCarryRackAndAcceleratorType) {
  auto pods = BuildSuperPods({Node("n5", "3", "npu", "7", R"({"Ascend910-2":{"SuperDeviceID":5}})",
                                   "950-SuperPod-Atlas-8")});
  ASSERT_EQ(pods.count("3"), 1u);
  EXPECT_EQ(pods["3"].version, "A5");
  EXPECT_NE(SuperPodFileJson(pods["3"]).find("\"RackID\": \"r1\""), std::string::npos);
  EXPECT_EQ(SuperPodDeviceJson(pods["3"]).find("RackID"), std::string::npos);
  EXPECT_NE(SuperPodDeviceJson(pods["3"]).find(R"("AcceleratorType":"950-SuperPod-Atlas-8")"),
            std::string::npos);
}

TEST(SuperPodTopology, A5NetworkPathsAndTheirRefusals) {
  std::vector<std::string> problems;
  auto pods = BuildSuperPods(
      {Node(
           "n5", "3", "npu", "7",
           R"({"Ascend910-0":{"IP":"10.0.0.1","SuperDeviceID":0,"NetPlaneId":"p","L1":"a","L2":"x"},)"
           R"("Ascend910-1":{"IP":"10.0.0.2","SuperDeviceID":1,"NetPlaneId":"p","L2":"x"},)"
           R"("Ascend910-2":{"IP":"10.0.0.3","SuperDeviceID":2,"NetPlaneId":7},)"
           R"("Ascend910-3":{"SuperDeviceID":3,"NetPlaneId":"p"},)"
           R"("Ascend910-4":{"IP":"10.0.0.5","SuperDeviceID":4}})",
           "950-SuperPod-Atlas-8"),
       Node("n6", "4", "npu", "1", R"({"Ascend910-0":{"IP":"1","SuperDeviceID":0}})",
            "850-SuperPod-Atlas-8")},
      &problems);
  const SuperPodNodeEntry& n = pods.at("3").nodes.at("n5");
  EXPECT_EQ(n.devices.size(), 5u);  // every SDID stays
  ASSERT_EQ(n.npu_info.size(), 1u);
  EXPECT_EQ(n.npu_info.at("0"), (NpuNetInfo{"10.0.0.1", "p", "a", "x"}));
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0], "node n5 baseDeviceInfos Ascend910-1: L2 without L1");
  EXPECT_EQ(problems[1], "node n5 baseDeviceInfos Ascend910-2: NetPlaneId is not a string");
  EXPECT_EQ(problems[2], "node n5 baseDeviceInfos Ascend910-3: NetPlaneId without IP");
  // The file carries the paths and parses back.
  auto topo = ParseSuperPodTopology(SuperPodFileJson(pods.at("3")), "super-pod-3.json");
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->paths.at("10.0.0.1"), (NpuNetPath{"p", "r1", "a", "x"}));
  // RoCE: only the 950 super pods.
  EXPECT_EQ(RoceSuperPods(pods), (std::vector<int64_t>{3}));
  EXPECT_EQ(RoceListJson({3, 12}), "{\n    \"superPodList\": [\n        3,\n        12\n    ]\n}");
}

TEST(SuperPodTopology, MalformedNpuInfoMapRefusesTheFileWithReason) {
  const std::string head =
      R"({"Version":"A5","SuperPodID":"3","NodeDeviceMap":{"n5":{"NodeName":"n5","RackID":"1",)";
  struct Case {
    std::string map, why;
  };
  for (const Case& c : std::vector<Case>{
           {R"("NpuInfoMap":[])", "not an object"},
           {R"("NpuInfoMap":{"0":{"Addr":"a"}})", "0: Addr and NetPlaneId are required"},
           {R"("NpuInfoMap":{"0":{"Addr":"a","NetPlaneId":"p","L2":"x"}})", "0: L2 without L1"},
           {R"("NpuInfoMap":{"0":{"Addr":1,"NetPlaneId":"p"}})", "0: Addr is not a string"},
           {R"("NpuInfoMap":{"0":{"Addr":"a","NetPlaneId":"p"},"1":{"Addr":"a","NetPlaneId":"p"}})",
            "1: address a appears twice"}}) {
    auto t = ParseSuperPodTopology(head + c.map + "}}}", "super-pod-3.json");
    ASSERT_FALSE(t.ok()) << c.map;
    EXPECT_EQ(t.status().message(), "super-pod-3.json: node n5 NpuInfoMap: " + c.why);
  }
}

}  // namespace super_pod_topology_test
}  // namespace clusterd::diagnosis
