// The simulated A5 network: where each NPU sits, what the Nodes publish of it for clusterd's
// root cause (docs/diagnosis.md, "A5 root cause"), and the links a slow_*_link fault names.
#include "sim/a5_network.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/sim_objects.h"

namespace clusterd::sim {
namespace a5_network_test {

// 8 nodes x 8 NPUs in 2 planes; 2 nodes per rack, 2 racks per L1, 2 L1 switches per L2.
ClusterSpec A5Cluster() {
  ClusterSpec c;
  c.chip = "npu";
  c.nodes = 8;
  c.npus_per_node = 8;
  c.nodes_per_super_pod = 8;
  c.net_planes = 2;
  c.nodes_per_rack = 2;
  c.racks_per_l1 = 2;
  c.l1_per_l2 = 2;
  return c;
}

TEST(A5Network, NpusSitInPlanesRacksAndSwitchesByTheLayout) {
  const ClusterSpec c = A5Cluster();
  EXPECT_EQ(RackCount(c), 4);
  EXPECT_EQ(L1Count(c), 2);
  const A5NetPath p = NetPathOf(c, 7, 3);  // node-7: rack 3, under L1 1
  EXPECT_EQ(p.plane, 1);
  EXPECT_EQ(p.rack, 3);
  EXPECT_EQ(p.l1, 1);
  EXPECT_EQ(p.l2, 0);
  ClusterSpec odd = c;
  odd.nodes = 7;  // a partial last rack still counts
  EXPECT_EQ(RackCount(odd), 4);
}

TEST(A5Network, NodesPublishTheirRackAndEveryNpusAddressAndPath) {
  const ClusterSpec c = A5Cluster();
  const Json node = NodeObject(c, 3);
  EXPECT_EQ(node["metadata"]["labels"].value("accelerator-type", ""), "950-SuperPod-Atlas-8");
  const Json& a = node["metadata"]["annotations"];
  EXPECT_EQ(a.value("serverType", ""), "npu");
  EXPECT_EQ(a.value("superPodID", ""), "0");
  EXPECT_EQ(a.value("serverIndex", ""), "2");
  EXPECT_EQ(a.value("rackID", ""), "1");
  auto infos = nlohmann::json::parse(a.value("baseDeviceInfos", "{}"));
  const auto& npu5 = infos["Ascend910-5"];
  EXPECT_EQ(npu5.value("IP", ""), DeviceIp(3, 5));
  EXPECT_EQ(npu5.value("NetPlaneId", ""), "1");
  EXPECT_EQ(npu5.value("L1", ""), "0");
  EXPECT_EQ(npu5.value("L2", ""), "0");
  EXPECT_EQ(npu5["SuperDeviceID"], SuperDeviceId(c, 3, 5));
  EXPECT_TRUE(node["status"]["allocatable"].contains("huawei.com/npu"));
}

TEST(A5Network, ALinkNamesTheNodesBelowItAndClusterdsElementIds) {
  const ClusterSpec c = A5Cluster();
  FaultSpec rack;
  rack.kind = "slow_l1_link";
  rack.plane = 0;
  rack.rack = 1;
  EXPECT_EQ(NodesUnderLink(c, rack), (std::vector<int>{3, 4}));
  EXPECT_EQ(LinkRootCause(c, rack), "link 0.rack-1->0.L1-0");
  FaultSpec l1;
  l1.kind = "slow_l2_link";
  l1.plane = 1;
  l1.l1 = 1;
  EXPECT_EQ(NodesUnderLink(c, l1), (std::vector<int>{5, 6, 7, 8}));
  EXPECT_EQ(LinkRootCause(c, l1), "link 1.L1-1->1.L2-0");
}

}  // namespace a5_network_test
}  // namespace clusterd::sim
