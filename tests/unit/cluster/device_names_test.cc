// Customised device names on the cluster side (seed 001 Table 7, deviceNameCustomization.json):
// a renamed node's device-info is read by its DevicePublicType and DevicePublicNamePre, its
// faults are mapped onto the job whose pods hold the NPUs (allocation under
// PodConfigurationName, limits under DevicePublicType), and cluster-info shows the node's names.
#include <memory>

#include "cluster/cluster_info_render.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_config_files.h"
#include "cluster/fault_intake.h"
#include "cluster/job_registry.h"
#include "common/clock.h"
#include "common/json_util.h"
#include "fault_test_util.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "model/device_naming.h"
#include "store/memory/memory_store.h"

namespace clusterd::cluster {
namespace device_names_test {

using testing::ChipFault;
using testing::DeviceInfoConfigMap;
using testing::Json;
using testing::NodeSpec;

constexpr char kResource[] = "example.com/npu910";
constexpr char kPrefix[] = "npu910-";
constexpr char kPodConfiguration[] = "example.com/npu910-configuration";

model::DeviceNaming Naming(const std::string& prefix = kPrefix) {
  return model::DeviceNaming({{"Ascend910", kResource, prefix, kPodConfiguration},
                              {"Ascend310P", "example.com/infer310", "infer", ""}});
}

NodeSpec RenamedNode(const std::string& node, const std::string& prefix = kPrefix) {
  NodeSpec s;
  s.node = node;
  s.resource_name = kResource;
  s.name_prefix = prefix;
  s.faults = {ChipFault(prefix + "3", "SeparateNPU", {{"80E01801", 1718000000123}})};
  s.unhealthy = {prefix + "3"};
  return s;
}

TEST(ClusterDeviceNames, IntakeReadsARenamedNodeAndClusterInfoKeepsItsNames) {
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(RenamedNode("node-1")), {}, Naming());
  ASSERT_TRUE(intake.ok()) << intake.status();
  const DeviceRecord& d = intake->device;
  EXPECT_EQ(d.device_type, "Ascend910");
  EXPECT_EQ(d.resource_name, kResource);
  EXPECT_EQ(d.name_prefix, kPrefix);
  EXPECT_EQ(d.unhealthy, (std::vector<std::string>{"npu910-3"}));
  EXPECT_EQ(d.available.size(), 7u);
  ASSERT_EQ(d.faults.size(), 1u);
  EXPECT_EQ(d.faults[0].npu_name, "npu910-3");
  EXPECT_EQ(d.faults[0].level, "SeparateNPU");
  EXPECT_EQ(d.NpuName(3), "npu910-3");
  EXPECT_EQ(d.PhysicalIdOf("npu910-3"), 3);
  EXPECT_EQ(d.PhysicalIdOf("Ascend910-3"), std::nullopt);
  EXPECT_EQ(
      RenderDeviceEntry(d),
      R"({"DeviceList":{"example.com/npu910":"npu910-0,npu910-1,npu910-2,npu910-4,npu910-5,npu910-6,npu910-7","example.com/npu910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"npu910-3\",\"large_model_fault_level\":\"SeparateNPU\",\"fault_level\":\"SeparateNPU\",\"fault_handling\":\"SeparateNPU\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"SeparateNPU\"}}}]","example.com/npu910-NetworkUnhealthy":"","example.com/npu910-Recovering":"","example.com/npu910-Unhealthy":"npu910-3"},"UpdateTime":1718000001,"CmName":"mindx-dl-deviceinfo-node-1","SuperPodID":-1,"RackID":0,"ServerIndex":-1})");
}

TEST(ClusterDeviceNames, NodesWithTheFixedNamesShareTheCluster) {
  NodeSpec fixed;
  fixed.faults = {ChipFault("Ascend910-5", "SeparateNPU", {{"80E01801", 1718000000123}})};
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(fixed), {}, Naming());
  ASSERT_TRUE(intake.ok()) << intake.status();
  EXPECT_EQ(intake->device.device_type, "Ascend910");
  EXPECT_EQ(intake->device.resource_name, "");
  EXPECT_EQ(intake->device.PhysicalIdOf("Ascend910-5"), 5);
  EXPECT_EQ(intake->device.faults.at(0).npu_name, "Ascend910-5");
  EXPECT_EQ(intake->device, DeviceIntakeFromConfigMap(DeviceInfoConfigMap(fixed))->device);
}

TEST(ClusterDeviceNames, ARenamed310PNodeIsOfItsType) {
  NodeSpec s;
  s.type = "Ascend310P";
  s.resource_name = "example.com/infer310";
  s.name_prefix = "infer";
  s.npus = 16;
  s.unhealthy = {"infer13"};
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(s), {}, Naming());
  ASSERT_TRUE(intake.ok()) << intake.status();
  EXPECT_EQ(intake->device.device_type, "Ascend310P");
  EXPECT_EQ(intake->device.unhealthy, (std::vector<std::string>{"infer13"}));
  // A prefix without a hyphen: the whole prefix is stripped, so infer13 is 13, not 3.
  EXPECT_EQ(intake->device.PhysicalIdOf("infer13"), 13);
  EXPECT_EQ(intake->device.PhysicalIdOf("infer"), std::nullopt);
  EXPECT_EQ(intake->device.PhysicalIdOf("inferx1"), std::nullopt);
}

TEST(ClusterDeviceNames, PodsAndPodGroupsAreReadUnderTheCustomisedNames) {
  testing::PodSpec spec = testing::ExamplePod(1);
  spec.resource = kResource;
  spec.allocation_key = kPodConfiguration;
  absl::StatusOr<model::PodInfo> pod = model::PodInfoFromObject(testing::PodObject(spec), Naming());
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(pod->needs_npu);
  EXPECT_TRUE(pod->allocation_annotation_present);
  ASSERT_TRUE(pod->allocation.has_value());
  EXPECT_EQ(pod->allocation->devices.size(), 8u);
  EXPECT_TRUE(model::DeviceAllocationComplete(*pod));
  // Without the file the pod asks for nothing clusterd knows, and carries no allocation.
  pod = model::PodInfoFromObject(testing::PodObject(spec));
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE(pod->needs_npu);
  EXPECT_FALSE(pod->allocation.has_value());

  testing::PodGroupSpec pg;
  pg.min_resource = kResource;
  EXPECT_EQ(model::PodGroupInfoFromObject(testing::PodGroupObject(pg), Naming())->resource_type,
            "Ascend910");
  EXPECT_EQ(model::PodGroupInfoFromObject(testing::PodGroupObject(pg))->resource_type, "unknown");
}

// The fault centre and the job registry over a memory store on a manual clock.
class FaultCentreDeviceNamesTest : public ::testing::Test {
 protected:
  class Sink final : public JobFaultSink {
   public:
    void OnJobFaults(const JobFaultRanks& f) override { got.push_back(f); }
    void OnJobGone(const std::string&) override {}
    std::vector<JobFaultRanks> got;
  };

  FaultCentreDeviceNamesTest()
      : clock_(absl::FromUnixMillis(1718000100000)), store_(MemOptions()) {}
  store::MemoryStore::Options MemOptions() {
    store::MemoryStore::Options o;
    o.clock = &clock_;
    return o;
  }

  void SetUp() override {
    JobRegistry::Options registry;
    registry.naming = Naming(prefix_);
    registry_ = std::make_unique<JobRegistry>(store_, clock_, registry);
    testing::PodGroupSpec pg;
    pg.min_resource = kResource;
    ASSERT_TRUE(store_.Create("podgroups", testing::PodGroupObject(pg)).ok());
    for (int rank : {0, 1}) {
      testing::PodSpec pod = testing::ExamplePod(rank);
      pod.resource = kResource;
      pod.allocation_key = kPodConfiguration;
      ASSERT_TRUE(store_.Create("pods", testing::PodObject(pod)).ok());
    }
    ASSERT_TRUE(registry_->Start().ok());
    registry_->controller().RunUntilIdleForTest();
    auto job = registry_->FindJob(testing::kJobUid);
    ASSERT_TRUE(job.has_value());
    ASSERT_EQ(job->previous_servers.size(), 2u);

    files_ = std::make_unique<FaultConfigFiles>(
        FaultConfigFiles::Options{.data_dir = CLUSTERD_DATA_DIR}, clock_);
    FaultCentre::Options o;
    o.config = files_.get();
    o.watch_store = false;
    o.write_burst = 1'000'000'000;
    o.naming = Naming(prefix_);
    centre_ = std::make_unique<FaultCentre>(store_, clock_, registry_.get(), o);
    centre_->AddJobFaultSink(&sink_);
    ASSERT_TRUE(centre_->Start().ok());
  }
  void TearDown() override {
    centre_->Stop();
    registry_->Stop();
  }
  void PutDeviceInfo(const NodeSpec& spec) {
    absl::StatusOr<store::Object> stored = store_.Create("configmaps", DeviceInfoConfigMap(spec));
    ASSERT_TRUE(stored.ok()) << stored.status();
    centre_->Observe("configmaps", store::WatchEvent{store::WatchEventType::kAdded, *stored});
    centre_->controller().RunUntilIdleForTest();
    centre_->FlushWrites();
  }

  std::string prefix_ = kPrefix;
  ManualClock clock_;
  store::MemoryStore store_;
  Sink sink_;
  std::unique_ptr<JobRegistry> registry_;
  std::unique_ptr<FaultConfigFiles> files_;
  std::unique_ptr<FaultCentre> centre_;
};

TEST_F(FaultCentreDeviceNamesTest, AFaultOnARenamedNodeReachesTheJobHoldingTheNpu) {
  PutDeviceInfo(RenamedNode("node-b"));
  ASSERT_EQ(sink_.got.size(), 1u);
  const JobFaultRanks& f = sink_.got[0];
  EXPECT_EQ(f.job_id, testing::kJobUid);
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].rank_id, 11);  // pod rank 1 x 8 devices + NPU 3
  EXPECT_EQ(f.ranks[0].pod_rank, 1);
  EXPECT_EQ(f.ranks[0].level, "SeparateNPU");
  EXPECT_EQ(f.health, "UnHealthy");

  const std::vector<FaultViewRow> rows = centre_->FaultRows("", testing::kJobUid);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].npu, "npu910-3");
  EXPECT_EQ(rows[0].node, "node-b");

  auto cm = store_.Get({"configmaps", "mindx-dl", "cluster-info-device-0"});
  ASSERT_TRUE(cm.ok()) << cm.status();
  const std::string shard = StringOr(cm->at("data"), "cluster-info-device-0", "");
  EXPECT_NE(shard.find(R"("example.com/npu910-Unhealthy":"npu910-3")"), std::string::npos) << shard;
  EXPECT_EQ(shard.find("huawei.com/"), std::string::npos) << shard;
}

// A prefix ending in a digit: "npu9" + 3 = "npu93" is NPU 3 (not 93, as the digits after the
// last letter would say).
class FaultCentreDigitPrefixTest : public FaultCentreDeviceNamesTest {
 protected:
  FaultCentreDigitPrefixTest() { prefix_ = "npu9"; }
};

TEST_F(FaultCentreDigitPrefixTest, TheWholePrefixIsStrippedBeforeTheId) {
  PutDeviceInfo(RenamedNode("node-b", "npu9"));
  ASSERT_EQ(sink_.got.size(), 1u);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[0].ranks[0].rank_id, 11);
  const std::vector<FaultViewRow> rows = centre_->FaultRows("", testing::kJobUid);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].npu, "npu93");
}

}  // namespace device_names_test
}  // namespace clusterd::cluster
