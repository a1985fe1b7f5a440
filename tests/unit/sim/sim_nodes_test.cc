// SimNodes on the memory store: with a node filter, every node still writes its device-info
// ConfigMap, but only the chosen nodes run an agent that takes injected faults.
#include "sim/sim_nodes.h"

#include "absl/time/clock.h"
#include "agent/agent_event.h"
#include "gtest/gtest.h"
#include "model/config_map_names.h"
#include "store/object_store.h"

namespace clusterd::sim {
namespace sim_nodes_test {

TEST(SimNodes, NodesWithoutARunningAgentWriteTheirDeviceInfoOnceAndRefuseFaults) {
  auto store = store::OpenStore("memory");
  ASSERT_TRUE(store.ok());
  ClusterSpec cluster;
  cluster.nodes = 3;
  SimNodes nodes(**store, cluster, CLUSTERD_DATA_DIR);
  ASSERT_TRUE(nodes.Start([](int node) { return node == 2; }).ok());
  auto device_info = [&](int i) {
    return (*store)->Get(store::ObjectKey{std::string(store::kConfigMaps),
                                          std::string(model::kDeviceInfoNamespace),
                                          model::DeviceInfoConfigMapName(SimNodeName(i))});
  };
  // The quiet nodes wrote theirs during Start; the running agent writes on its own thread.
  EXPECT_TRUE(device_info(1).ok());
  EXPECT_TRUE(device_info(3).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!device_info(2).ok() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_TRUE(device_info(2).ok());
  faults::NpuFaultEvent fault;
  fault.npu = 0;
  fault.code = 0x80E3A201;
  EXPECT_FALSE(nodes.Inject(1, fault));
  EXPECT_TRUE(nodes.Inject(2, fault));
  EXPECT_FALSE(nodes.Inject(3, fault));
  EXPECT_FALSE(nodes.Inject(4, fault));  // no such node
  nodes.Stop();
}

}  // namespace sim_nodes_test
}  // namespace clusterd::sim
