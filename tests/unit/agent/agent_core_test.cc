#include "agent/agent_core.h"

#include "agent/agent_metrics.h"
#include "agent/config_map_io.h"
#include "agent_test_util.h"
#include "common/check_code.h"
#include "gtest/gtest.h"
#include "model/device_info.h"

namespace clusterd::agent {
namespace agent_core_test {

using testing::AgentFixture;
using testing::TestOptions;

const absl::Time kStart = absl::FromUnixSeconds(1718000000);

TEST(AgentCore, ScriptedFaultProducesTheSpecExampleConfigMap) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 123, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"})");
  f.core->Step();  // the first cycle writes the healthy node at once
  EXPECT_EQ(f.core->device_info_writes(), 1);
  EXPECT_EQ(f.core->NextWakeup(), kStart + absl::Milliseconds(123));
  f.RunUntil(kStart + absl::Seconds(1));
  EXPECT_EQ(f.core->device_info_writes(), 2);
  const ConfigMapData data = f.DeviceInfo();
  // fault-pipeline.md §1.2.7, verbatim: the event is written one second after the first write.
  EXPECT_EQ(
      data.at("DeviceInfoCfg"),
      R"json({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"RestartBusiness\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718000001},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9"})json");
  EXPECT_EQ(data.size(), 4u);
  auto object = f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  ASSERT_TRUE(object.ok());
  EXPECT_EQ((*object)["metadata"]["labels"]["mx-consumer-cim"], "true");
}

TEST(AgentCore, AnAgentWithNothingToReportRewritesOnlyEveryFiveMinutes) {
  AgentFixture f;
  f.StartWithScript("");
  f.core->Step();
  EXPECT_EQ(f.core->device_info_writes(), 1);
  EXPECT_EQ(f.core->NextWakeup(), kStart + absl::Minutes(5));
  f.RunUntil(kStart + absl::Minutes(5) - absl::Milliseconds(1));
  EXPECT_EQ(f.core->device_info_writes(), 1);
  f.RunUntil(kStart + absl::Minutes(5));
  EXPECT_EQ(f.core->device_info_writes(), 2);
  EXPECT_EQ(model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))->device_info.update_time,
            1718000300);
  f.RunFor(absl::Hours(1));
  EXPECT_EQ(f.core->device_info_writes(), 14);
}

TEST(AgentCore, TimeOnlyChangesDoNotWrite) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 10000, "kind": "chip", "npu": 3, "code": "A2301001", "assertion": "occur"}
{"at_ms": 20000, "kind": "chip", "npu": 3, "code": "A2301001", "assertion": "occur"})");
  f.RunFor(absl::Seconds(30));
  EXPECT_EQ(f.core->device_info_writes(), 2);  // start, then the fault; the repeat changes nothing
}

TEST(AgentCore, WritesAreAtLeastOneSecondApartAndABlipIsStillReported) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 100, "kind": "chip", "npu": 0, "code": "A2301001", "assertion": "occur"}
{"at_ms": 300, "kind": "chip", "npu": 0, "code": "A2301001", "assertion": "recover"})");
  f.core->Step();
  f.RunUntil(kStart + absl::Milliseconds(999));
  EXPECT_EQ(f.core->device_info_writes(), 1);
  f.RunUntil(kStart + absl::Seconds(1));
  EXPECT_EQ(f.core->device_info_writes(), 2);
  EXPECT_EQ(model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))
                ->device_info.device_list.at("huawei.com/Ascend910-Unhealthy"),
            "Ascend910-0");
  f.RunUntil(kStart + absl::Seconds(2));
  EXPECT_EQ(f.core->device_info_writes(), 3);
  EXPECT_EQ(model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))
                ->device_info.device_list.at("huawei.com/Ascend910-Unhealthy"),
            "");
}

TEST(AgentCore, RoceTimeoutWakesTheAgentWithoutPolling) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "network", "npu": 3, "code": "81078603", "assertion": "occur"})");
  f.core->Step();
  EXPECT_EQ(f.core->NextWakeup(), kStart + absl::Milliseconds(20001));
  f.RunUntil(kStart + absl::Milliseconds(20001));
  EXPECT_EQ(f.core->device_info_writes(), 2);
  EXPECT_EQ(model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))
                ->device_info.device_list.at("huawei.com/Ascend910-NetworkUnhealthy"),
            "Ascend910-3");
  EXPECT_NE(f.DeviceInfo().at("UpgradeFaultReason").find("FaultDuration"), std::string::npos);
}

TEST(AgentCore, OperatorDeletingTheNameReleasesTheNpu) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 2000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "recover"}
{"at_ms": 4000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 6000, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "recover"})");
  f.RunFor(absl::Seconds(10));
  ConfigMapData data = f.DeviceInfo();
  ASSERT_EQ(data.at("ManuallySeparateNPU"), "Ascend910-3");
  const int writes = f.core->device_info_writes();

  // The operator removes the name with an editor; the watch tells the core.
  auto object = *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  object["data"]["ManuallySeparateNPU"] = "";
  ASSERT_TRUE(f.store->Update("configmaps", object).ok());
  f.core->ObserveDeviceInfo(DataOf(object));
  EXPECT_LE(f.core->NextWakeup(), f.clock.Now());
  f.core->Step();
  EXPECT_EQ(f.core->device_info_writes(), writes + 1);
  data = f.DeviceInfo();
  EXPECT_EQ(data.at("ManuallySeparateNPU"), "");
  EXPECT_EQ(data.at("UpgradeFaultReason"), "{}");
  EXPECT_EQ(model::ParseDeviceInfoCfg(data.at("DeviceInfoCfg"))
                ->device_info.device_list.at("huawei.com/Ascend910-Unhealthy"),
            "");
}

TEST(AgentCore, NamesAddedByHandAreDroppedOnTheNextWrite) {
  AgentFixture f;
  f.StartWithScript("");
  f.core->Step();
  auto object = *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  object["data"]["ManuallySeparateNPU"] = "Ascend910-1";
  ASSERT_TRUE(f.store->Update("configmaps", object).ok());
  f.core->ObserveDeviceInfo(DataOf(object));
  f.RunFor(absl::Seconds(1));
  EXPECT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "");
}

TEST(AgentCore, RestartKeepsManualSeparationFromTheConfigMap) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
{"at_ms": 2000, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
{"at_ms": 4000, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"})");
  f.RunFor(absl::Seconds(10));
  ASSERT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "Ascend910-5");
  const std::string reasons = f.DeviceInfo().at("UpgradeFaultReason");

  // A new agent process on the same store.
  f.core = std::make_unique<AgentCore>(TestOptions(), *f.store, f.clock);
  ASSERT_TRUE(f.core->Start().ok());
  f.core->Step();
  EXPECT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "Ascend910-5");
  EXPECT_EQ(f.DeviceInfo().at("UpgradeFaultReason"), reasons);
  EXPECT_FALSE(f.core->engine().npus()[5].chip_healthy);
}

// A device-info ConfigMap as the Ascend Device Plugin leaves it: no npu-agent mark.
void WriteDevicePluginConfigMap(store::ObjectStore& store) {
  ASSERT_TRUE(WriteConfigMap(store, {"kube-system",
                                     "mindx-dl-deviceinfo-node-1",
                                     {},
                                     {{"DeviceInfoCfg", "from the device plugin"},
                                      {"ManuallySeparateNPU", "Ascend910-3"}}})
                  .ok());
}

TEST(AgentCore, AConfigMapAnotherWriterOwnsIsNeverOverwritten) {
  AgentFixture f;
  WriteDevicePluginConfigMap(*f.store);
  const store::Object before =
      *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  const uint64_t refusals = AgentMetrics::Refusals("deviceinfo").Value();
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 1, "code": "80E01801", "assertion": "occur"})");
  f.RunFor(absl::Seconds(65));
  EXPECT_EQ(*f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"}), before);
  EXPECT_EQ(f.core->device_info_writes(), 0);
  // Refused at the first cycle and rechecked every 30 s, not on every wakeup.
  EXPECT_GE(AgentMetrics::Refusals("deviceinfo").Value(), refusals + 2);
  EXPECT_LE(AgentMetrics::Refusals("deviceinfo").Value(), refusals + 4);
  // The other writer's manual separation is not taken as the agent's own.
  EXPECT_TRUE(f.core->engine().npus()[3].chip_healthy);

  // Once the owner deletes it, the name is the agent's.
  ASSERT_TRUE(DeleteConfigMap(*f.store, "kube-system", "mindx-dl-deviceinfo-node-1").ok());
  f.RunFor(absl::Seconds(31));
  EXPECT_EQ(f.core->device_info_writes(), 1);
  auto object = *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  EXPECT_EQ(object["metadata"]["annotations"]["clusterd.io/written-by"], "npu-agent");
}

TEST(AgentCore, TakeOverReplacesAnotherWritersConfigMap) {
  AgentOptions options = TestOptions();
  options.take_over = true;
  AgentFixture f(options);
  WriteDevicePluginConfigMap(*f.store);
  f.StartWithScript("");
  f.core->Step();
  const ConfigMapData data = f.DeviceInfo();
  EXPECT_TRUE(model::ParseDeviceInfoCfg(data.at("DeviceInfoCfg")).ok());
  auto object = *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  EXPECT_EQ(object["metadata"]["annotations"]["clusterd.io/written-by"], "npu-agent");
}

TEST(AgentCore, FirstWriteReplacesWhatItsOwnConfigMapHeld) {
  AgentFixture f;
  store::Object cm = ConfigMapObject({"kube-system",
                                      "mindx-dl-deviceinfo-node-1",
                                      {},
                                      {{"DeviceInfoCfg", "garbage"}, {"Extra", "x"}}});
  cm["metadata"]["annotations"]["clusterd.io/written-by"] = "npu-agent";
  ASSERT_TRUE(f.store->Create("configmaps", cm).ok());
  f.StartWithScript("");
  f.core->Step();
  const ConfigMapData data = f.DeviceInfo();
  EXPECT_FALSE(data.contains("Extra"));
  EXPECT_TRUE(model::ParseDeviceInfoCfg(data.at("DeviceInfoCfg")).ok());
}

TEST(AgentCore, NodeDsNodeInfoIsNeitherDeletedNorOverwritten) {
  AgentFixture f;
  ASSERT_TRUE(WriteConfigMap(*f.store, {"mindx-dl",
                                        "mindx-dl-nodeinfo-node-1",
                                        {},
                                        {{"NodeInfo", "from NodeD"}, {"updateTime", "t"}}})
                  .ok());
  const uint64_t refusals = AgentMetrics::Refusals("nodeinfo").Value();
  // Healthy at first (the agent would delete its own node-info), then a node fault.
  f.StartWithScript(
      R"({"at_ms": 2000, "kind": "node", "device_type": "CPU", "device_id": 0, "code": "0000001D", "assertion": "occur"})");
  f.RunFor(absl::Seconds(5));
  ASSERT_TRUE(f.NodeInfo().has_value());
  EXPECT_EQ(f.NodeInfo()->at("NodeInfo"), "from NodeD");
  EXPECT_EQ(f.core->node_info_writes(), 0);
  EXPECT_GE(AgentMetrics::Refusals("nodeinfo").Value(), refusals + 2);
}

TEST(AgentCore, FaultConfigMapOverridesTheShippedPolicyWithoutRestart) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"})");
  f.RunFor(absl::Seconds(1));
  EXPECT_EQ(f.core->engine().npus()[3].level[0], model::FaultLevel::kRestartBusiness);

  ASSERT_TRUE(
      WriteConfigMap(*f.store, {"kube-system",
                                "mindx-dl-fault-config",
                                {},
                                {{"faultCode.json", R"({"SeparateNPUCodes":["80E01801"]})"},
                                 {"faultCustomization.json", R"({"FaultFrequency":"bad"})"}}})
          .ok());
  const uint64_t format_errors_before =
      AgentMetrics::PolicyIssues("faultCustomization.json", "format_error").Value();
  f.core->NoteFaultConfigChanged();
  f.RunFor(absl::Seconds(1));
  EXPECT_EQ(f.core->engine().npus()[3].level[0], model::FaultLevel::kSeparateNPU);
  EXPECT_NE(f.DeviceInfo().at("DeviceInfoCfg").find(R"(\"fault_handling\":\"SeparateNPU\")"),
            std::string::npos);
  // The malformed customisation fell back to the shipped file, with one log line and a count.
  EXPECT_EQ(AgentMetrics::PolicyIssues("faultCustomization.json", "format_error").Value(),
            format_errors_before + 1);
  EXPECT_NE(f.core->engine().policy().customization.Frequency(0x80E18005), nullptr);

  // Deleting the ConfigMap goes back to the shipped files.
  ASSERT_TRUE(DeleteConfigMap(*f.store, "kube-system", "mindx-dl-fault-config").ok());
  f.core->NoteFaultConfigChanged();
  f.RunFor(absl::Seconds(1));
  EXPECT_EQ(f.core->engine().npus()[3].level[0], model::FaultLevel::kRestartBusiness);
}

TEST(AgentCore, NodeFaultsWriteNodeInfoAndItIsDeletedWhenHealthy) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 500, "kind": "node", "device_type": "CPU", "device_id": 0, "code": "0000001D", "assertion": "occur"}
{"at_ms": 5000, "kind": "node", "device_type": "CPU", "device_id": 0, "code": "0000001D", "assertion": "recover"})");
  f.core->Step();
  EXPECT_FALSE(f.NodeInfo().has_value());  // healthy: nothing written
  f.RunFor(absl::Seconds(1));
  auto node = f.NodeInfo();
  ASSERT_TRUE(node.has_value());
  // fault-pipeline.md §1.3 example.
  EXPECT_EQ(
      node->at("NodeInfo"),
      R"({"NodeInfo":{"FaultDevList":[{"DeviceType":"CPU","DeviceId":0,"FaultCode":["0000001D"],"FaultLevel":"PreSeparateFault"}],"NodeStatus":"PreSeparate"},"CheckCode":"d089a10b52bc734b9b3bec6fdc2bd0486b9cedaf4d465c40be2f8888fff595a4"})");
  EXPECT_EQ(node->at("updateTime"), "2024-06-10T06:13:21Z");
  f.RunFor(absl::Seconds(5));
  EXPECT_FALSE(f.NodeInfo().has_value());
  EXPECT_EQ(f.core->node_info_writes(), 1);
}

TEST(AgentCore, NodeFaultConfigMapChangesLevelsAndAnInvalidOneKeepsThePrevious) {
  AgentFixture f;
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "node", "device_type": "Fan", "device_id": 2, "code": "DEADBEEF", "assertion": "occur"})");
  f.RunFor(absl::Seconds(1));
  EXPECT_FALSE(f.NodeInfo().has_value());  // unconfigured code: dropped
  ASSERT_TRUE(
      WriteConfigMap(*f.store, {"mindx-dl",
                                "mindx-dl-node-fault-config",
                                {},
                                {{"NodeDConfiguration.json",
                                  R"({"FaultTypeCode":{"SeparateFaultCodes":["DEADBEEF"]}})"}}})
          .ok());
  f.core->NoteNodeFaultConfigChanged();
  f.RunFor(absl::Seconds(1));
  ASSERT_TRUE(f.NodeInfo().has_value());
  EXPECT_NE(f.NodeInfo()->at("NodeInfo").find("SeparateFault"), std::string::npos);
  ASSERT_TRUE(WriteConfigMap(*f.store, {"mindx-dl",
                                        "mindx-dl-node-fault-config",
                                        {},
                                        {{"NodeDConfiguration.json",
                                          R"({"FaultTypeCode":{"SeparateFaultCodes":["bad"]}})"}}})
                  .ok());
  f.core->NoteNodeFaultConfigChanged();
  f.RunFor(absl::Seconds(1));
  EXPECT_TRUE(f.NodeInfo().has_value());  // previous configuration kept
}

TEST(AgentCore, A3ReportsSwitchFaults) {
  AgentFixture f(TestOptions("Ascend910A3", 16));
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "switch", "chip_id": 0, "port_id": 1, "code": "[0x00f1fef5,155912,cpu,na]", "assertion": "occur", "severity": 3})");
  f.RunFor(absl::Seconds(1));
  const std::string sw = f.DeviceInfo().at("SwitchInfoCfg");
  EXPECT_NE(sw.find(R"("FaultLevel":"Separate")"), std::string::npos);
  EXPECT_NE(sw.find(R"("NodeStatus":"UnHealthy")"), std::string::npos);
}

TEST(AgentCore, SwitchEventsOnA910BNodeAreRejected) {
  AgentFixture f;
  ASSERT_TRUE(f.core->Start().ok());
  faults::SwitchFaultInput in;
  in.assembled_code = "[0x00f1fef5,155912,cpu,na]";
  EXPECT_FALSE(f.core->Inject(in));
  faults::NpuFaultEvent bad;
  bad.npu = 9;
  EXPECT_FALSE(f.core->Inject(bad));
}

TEST(AgentCore, StartFailsWithoutPolicyFiles) {
  AgentOptions options = TestOptions();
  options.files = PolicyFiles::InDirectory("/nonexistent");
  AgentFixture f(options);
  EXPECT_FALSE(f.core->Start().ok());
}

}  // namespace agent_core_test
}  // namespace clusterd::agent
