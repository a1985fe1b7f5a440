// deviceNameCustomization.json on the node side (seed 001 Table 7, fault-pipeline.md §1.2.1):
// the renaming reaches DeviceList, ManuallySeparateNPU and UpgradeFaultReason, survives a
// restart and an operator release, and the allocation annotation is read under its new key.
#include "agent/agent_core.h"
#include "agent/config_map_io.h"
#include "agent_test_util.h"
#include "gtest/gtest.h"
#include "model/device_info.h"
#include "model/device_naming.h"

namespace clusterd::agent {
namespace device_names_test {

using testing::AddGraceJob;
using testing::AgentFixture;
using testing::TestOptions;

model::DeviceNaming Naming() {
  auto entries = model::ParseDeviceNameCustomization(R"([
  {"ResourceType": "Ascend910", "DevicePublicType": "example.com/npu910",
   "DevicePublicNamePre": "npu910-", "PodConfigurationName": "example.com/npu910-configuration"},
  {"ResourceType": "Ascend310", "DevicePublicType": "example.com/infer310",
   "DevicePublicNamePre": "infer"}])",
                                                     "deviceNameCustomization.json");
  EXPECT_TRUE(entries.ok()) << entries.status();
  return model::DeviceNaming(*entries);
}

AgentOptions RenamedOptions(const std::string& chip = "Ascend910") {
  AgentOptions o = TestOptions(chip);
  o.naming = Naming();
  o.naming_file = "deviceNameCustomization.json";
  return o;
}

std::map<std::string, std::string> DeviceList(AgentFixture& f) {
  return model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))->device_info.device_list;
}

TEST(AgentDeviceNames, DeviceListUsesTheCustomisedResourceAndNpuNames) {
  AgentFixture f(RenamedOptions());
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"})");
  f.core->Step();
  const std::map<std::string, std::string> list = DeviceList(f);
  EXPECT_EQ(list.at("example.com/npu910"),
            "npu910-0,npu910-1,npu910-2,npu910-4,npu910-5,npu910-6,npu910-7");
  EXPECT_EQ(list.at("example.com/npu910-Unhealthy"), "npu910-3");
  EXPECT_EQ(list.at("example.com/npu910-NetworkUnhealthy"), "");
  EXPECT_EQ(list.at("example.com/npu910-Recovering"), "");
  EXPECT_EQ(
      list.at("example.com/npu910-Fault"),
      R"([{"fault_type":"CardUnhealthy","npu_name":"npu910-3","large_model_fault_level":"RestartBusiness","fault_level":"RestartBusiness","fault_handling":"RestartBusiness","fault_code":"80E01801","fault_time_and_level_map":{"80E01801":{"fault_time":1718000000000,"fault_level":"RestartBusiness"}}}])");
  EXPECT_EQ(list.size(), 5u);  // no huawei.com/ key is left
}

TEST(AgentDeviceNames, ManualSeparationAndReasonsUseTheNamesAndSurviveARestart) {
  AgentFixture f(RenamedOptions());
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
{"at_ms": 2000, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
{"at_ms": 4000, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"})");
  f.RunFor(absl::Seconds(10));
  ASSERT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "npu910-5");
  const std::string reasons = f.DeviceInfo().at("UpgradeFaultReason");
  EXPECT_EQ(reasons.rfind(R"({"npu910-5":[)", 0), 0u) << reasons;

  // A new agent process with the same file reads its names back.
  f.core = std::make_unique<AgentCore>(RenamedOptions(), *f.store, f.clock);
  ASSERT_TRUE(f.core->Start().ok());
  f.core->Step();
  EXPECT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "npu910-5");
  EXPECT_EQ(f.DeviceInfo().at("UpgradeFaultReason"), reasons);
  EXPECT_EQ(DeviceList(f).at("example.com/npu910-Unhealthy"), "npu910-5");

  // The operator releases the NPU by deleting its (customised) name.
  auto object = *f.store->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  object["data"]["ManuallySeparateNPU"] = "";
  ASSERT_TRUE(f.store->Update("configmaps", object).ok());
  f.core->ObserveDeviceInfo(DataOf(object));
  f.RunFor(absl::Seconds(1));
  EXPECT_EQ(f.DeviceInfo().at("ManuallySeparateNPU"), "");
  EXPECT_EQ(f.DeviceInfo().at("UpgradeFaultReason"), "{}");
  EXPECT_EQ(DeviceList(f).at("example.com/npu910-Unhealthy"), "");
}

TEST(AgentDeviceNames, ARenamed310NodeWritesAllItsKeysUnderTheNewName) {
  AgentFixture f(RenamedOptions("Ascend310"));
  f.StartWithScript(
      R"({"at_ms": 0, "kind": "chip", "npu": 1, "code": "80E01801", "assertion": "occur"})");
  f.core->Step();
  const std::map<std::string, std::string> list = DeviceList(f);
  // The fixed-name quirk (huawei.com/Ascend310P-Fault on 310 nodes) does not survive renaming.
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list.at("example.com/infer310"), "infer0,infer2,infer3,infer4,infer5,infer6,infer7");
  EXPECT_EQ(list.at("example.com/infer310-Unhealthy"), "infer1");
  EXPECT_NE(list.at("example.com/infer310-Fault").find(R"("npu_name":"infer1")"),
            std::string::npos);
}

TEST(AgentDeviceNames, TypesWithoutAnEntryKeepTheirNames) {
  AgentFixture f(RenamedOptions("Ascend310P"));
  f.StartWithScript("");
  f.core->Step();
  EXPECT_EQ(DeviceList(f).at("huawei.com/Ascend310P"),
            "Ascend310P-0,Ascend310P-1,Ascend310P-2,Ascend310P-3,Ascend310P-4,Ascend310P-5,"
            "Ascend310P-6,Ascend310P-7");
}

TEST(AgentDeviceNames, PodsAreReadUnderThePodConfigurationName) {
  AgentFixture f(RenamedOptions());
  AddGraceJob(*f.store, "example.com/npu910-configuration");
  f.StartWithScript("");
  f.core->Step();
  // NPUs 2 and 3 are in use by the pod, so they are not available.
  EXPECT_EQ(DeviceList(f).at("example.com/npu910"),
            "npu910-0,npu910-1,npu910-4,npu910-5,npu910-6,npu910-7");

  // The fixed key is still read (a pod allocated before the file was installed).
  AgentFixture fixed_key(RenamedOptions());
  AddGraceJob(*fixed_key.store);
  fixed_key.StartWithScript("");
  fixed_key.core->Step();
  EXPECT_EQ(DeviceList(fixed_key).at("example.com/npu910"),
            "npu910-0,npu910-1,npu910-4,npu910-5,npu910-6,npu910-7");
}

}  // namespace device_names_test
}  // namespace clusterd::agent
