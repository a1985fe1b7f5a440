#include "diagnosis/super_pod_topology.h"

#include "diagnosis/net_fault.h"
#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace {

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

}  // namespace
}  // namespace clusterd::diagnosis
