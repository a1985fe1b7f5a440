// Intake of device-info and node-info ConfigMaps (fault-pipeline.md §7.1, §2) and the per-node
// entries of the cluster-info ConfigMaps (§1.4), with the worked examples as golden text.
#include "cluster/fault_intake.h"

#include "cluster/cluster_info_render.h"
#include "fault_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace fault_intake_test {

using testing::ChipFault;
using testing::ConfigMapObject;
using testing::DeviceInfoConfigMap;
using testing::Json;
using testing::NodeSpec;

// §1.2.7, verbatim.
constexpr char kSpecDeviceInfoCfg[] =
    R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"RestartBusiness\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718000001},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9"})";

// §1.4, verbatim.
constexpr char kSpecClusterInfoDevice[] =
    R"({"mindx-dl-deviceinfo-node-1":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"RestartBusiness\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718000001,"CmName":"mindx-dl-deviceinfo-node-1","SuperPodID":-1,"RackID":0,"ServerIndex":-1}})";

constexpr char kSpecClusterInfoNode[] =
    R"({"mindx-dl-nodeinfo-node-2":{"FaultDevList":[{"DeviceType":"PSU","DeviceId":1,"FaultCode":["2C000031"],"FaultLevel":"SeparateFault"}],"NodeStatus":"UnHealthy","CmName":"mindx-dl-nodeinfo-node-2","UpdateTime":1718000000000}})";

Json SpecDeviceInfoCm(const std::string& cfg = kSpecDeviceInfoCfg) {
  return ConfigMapObject("kube-system", "mindx-dl-deviceinfo-node-1",
                         {{"DeviceInfoCfg", cfg},
                          {"ManuallySeparateNPU", ""},
                          {"UpgradeFaultReason", "{}"},
                          {"Description", std::string(model::kDescriptionText)}},
                         {{"mx-consumer-cim", "true"}});
}

std::string Shard(const std::string& key, const std::string& entry) {
  return RenderEntryMap({{key, &entry}});
}

TEST(FaultIntake, SpecExampleRendersTheSpecClusterInfoEntry) {
  auto intake = DeviceIntakeFromConfigMap(SpecDeviceInfoCm());
  ASSERT_TRUE(intake.ok()) << intake.status();
  const DeviceRecord& d = intake->device;
  EXPECT_EQ(d.node, "node-1");
  EXPECT_EQ(d.device_type, "Ascend910");
  ASSERT_EQ(d.faults.size(), 1u);
  EXPECT_EQ(d.faults[0].code, "80E01801");
  EXPECT_EQ(d.faults[0].level, "RestartBusiness");
  EXPECT_EQ(d.faults[0].fault_time, 1718000000123);
  EXPECT_EQ(Shard(d.cm_name, RenderDeviceEntry(d)), kSpecClusterInfoDevice);
}

TEST(FaultIntake, NodeInfoRendersTheSpecClusterInfoNodeEntry) {
  model::NodeInfo info;
  info.fault_dev_list = {model::FaultDev{"PSU", 1, {"2C000031"}, "SeparateFault"}};
  info.node_status = "UnHealthy";
  auto record = NodeRecordFromConfigMap(testing::NodeInfoConfigMap("node-2", info));
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->update_time_ms, 1718000000000);
  EXPECT_EQ(Shard(record->cm_name, RenderNodeEntry(*record)), kSpecClusterInfoNode);
}

TEST(FaultIntake, TamperedCheckCodeIsRejectedAsCheckcode) {
  std::string tampered = kSpecDeviceInfoCfg;
  tampered.replace(tampered.find("Ascend910-3\"}"), 11, "Ascend910-5");
  auto intake = DeviceIntakeFromConfigMap(SpecDeviceInfoCm(tampered));
  ASSERT_FALSE(intake.ok());
  EXPECT_EQ(IntakeRejectionReason(intake.status()), "checkcode");
  EXPECT_NE(intake.status().message().find("mindx-dl-deviceinfo-node-1"), absl::string_view::npos);
}

TEST(FaultIntake, EmptyCheckCodeIsRejected) {
  std::string cfg = kSpecDeviceInfoCfg;
  cfg.replace(cfg.find("1797da"), 64, "");
  auto intake = DeviceIntakeFromConfigMap(SpecDeviceInfoCm(cfg));
  ASSERT_FALSE(intake.ok());
  EXPECT_EQ(IntakeRejectionReason(intake.status()), "checkcode");
}

TEST(FaultIntake, MalformedAndNonStringDataAreRejectedAsMalformed) {
  auto bad_json = DeviceIntakeFromConfigMap(SpecDeviceInfoCm("{\"DeviceInfo\":"));
  ASSERT_FALSE(bad_json.ok());
  EXPECT_EQ(IntakeRejectionReason(bad_json.status()), "malformed");

  Json cm = SpecDeviceInfoCm();
  cm["data"]["Description"] = 42;
  auto non_string = DeviceIntakeFromConfigMap(cm);
  ASSERT_FALSE(non_string.ok());
  EXPECT_EQ(IntakeRejectionReason(non_string.status()), "malformed");

  Json no_cfg = SpecDeviceInfoCm();
  no_cfg["data"].erase("DeviceInfoCfg");
  EXPECT_FALSE(DeviceIntakeFromConfigMap(no_cfg).ok());
}

TEST(FaultIntake, OversizedConfigMapIsRejected) {
  Json cm = SpecDeviceInfoCm();
  cm["data"]["Padding"] = std::string(1 << 20, 'x');
  auto intake = DeviceIntakeFromConfigMap(cm);
  ASSERT_FALSE(intake.ok());
  EXPECT_EQ(IntakeRejectionReason(intake.status()), "oversized");
}

// The API server keeps a ConfigMap of 1 MiB of values whatever its keys: so does the intake.
TEST(FaultIntake, AConfigMapTheServerKeepsIsNotOversized) {
  Json cm = SpecDeviceInfoCm();
  size_t values = 0;
  for (const auto& [key, value] : cm["data"].items()) values += value.get<std::string>().size();
  cm["data"]["Padding"] = std::string((size_t{1} << 20) - values, 'x');
  auto intake = DeviceIntakeFromConfigMap(cm);
  EXPECT_TRUE(intake.ok()) << intake.status();
}

TEST(FaultIntake, SplitsOneFaultPerCodeWithPerCodeLevels) {
  NodeSpec spec;
  model::DeviceFault f = ChipFault("Ascend910-2", "SeparateNPU",
                                   {{"80E01801", 1718000000001}, {"80CB8009", 1718000000002}});
  f.fault_time_and_level_map["80E01801"].fault_level = "RestartBusiness";
  f.fault_time_and_level_map.erase("80CB8009");  // falls back to the entry level and time 0
  spec.faults = {f};
  spec.unhealthy = {"Ascend910-2"};
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(spec));
  ASSERT_TRUE(intake.ok()) << intake.status();
  const auto& faults = intake->device.faults;
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].code, "80E01801");
  EXPECT_EQ(faults[0].level, "RestartBusiness");
  EXPECT_EQ(faults[0].fault_time, 1718000000001);
  EXPECT_EQ(faults[1].code, "80CB8009");
  EXPECT_EQ(faults[1].level, "SeparateNPU");
  EXPECT_EQ(faults[1].fault_time, 0);
  EXPECT_EQ(intake->device.unhealthy, std::vector<std::string>{"Ascend910-2"});
}

// Some writers pad the codes of `fault_code`; the original strips every space before splitting,
// so the codes find their times and levels in fault_time_and_level_map.
TEST(FaultIntake, PaddedFaultCodesAreSplitWithoutSpacesAndFindTheirTimesAndLevels) {
  NodeSpec spec;
  model::DeviceFault f = ChipFault("Ascend910-2", "RestartNPU",
                                   {{"80E01801", 1718000000001}, {"80C98009", 1718000000002}});
  f.fault_time_and_level_map["80E01801"].fault_level = "RestartBusiness";
  f.fault_code = "80E01801      ,  80C98009    ";
  spec.faults = {f};
  spec.unhealthy = {"Ascend910-2"};
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(spec));
  ASSERT_TRUE(intake.ok()) << intake.status();
  const auto& faults = intake->device.faults;
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].code, "80E01801");
  EXPECT_EQ(faults[0].level, "RestartBusiness");
  EXPECT_EQ(faults[0].fault_time, 1718000000001);
  EXPECT_EQ(faults[1].code, "80C98009");
  EXPECT_EQ(faults[1].level, "RestartNPU");
  EXPECT_EQ(faults[1].fault_time, 1718000000002);
}

TEST(FaultIntake, EmptyCodeWithManualLevelBecomesThePseudoCode) {
  NodeSpec spec;
  spec.faults = {ChipFault("Ascend910-1", "ManuallySeparateNPU", {})};
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(spec));
  ASSERT_TRUE(intake.ok()) << intake.status();
  ASSERT_EQ(intake->device.faults.size(), 1u);
  EXPECT_EQ(intake->device.faults[0].code, "ManuallySeparateNPU");
  EXPECT_EQ(intake->device.faults[0].fault_time, -1);
}

TEST(FaultIntake, FaultWithAnInvalidNpuNameIsDroppedAndTheRestKept) {
  NodeSpec spec;
  spec.faults = {ChipFault("", "SeparateNPU", {{"80E01801", 1}}),
                 ChipFault("Ascend910-1,Ascend910-2", "SeparateNPU", {{"80E01801", 1}}),
                 ChipFault("Ascend910-3", "SeparateNPU", {{"80E01801", 1}})};
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(spec));
  ASSERT_TRUE(intake.ok()) << intake.status();
  ASSERT_EQ(intake->device.faults.size(), 1u);
  EXPECT_EQ(intake->device.faults[0].npu_name, "Ascend910-3");
  EXPECT_EQ(intake->dropped.size(), 2u);
}

TEST(FaultIntake, TooManyFaultsAreRejected) {
  NodeSpec spec;
  std::vector<std::pair<std::string, int64_t>> codes;
  for (int i = 0; i < 50; ++i) codes.emplace_back("8000" + std::to_string(1000 + i), 1);
  spec.faults = {ChipFault("Ascend910-0", "SeparateNPU", codes)};
  IntakeLimits limits;
  limits.max_faults_per_node = 10;
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(spec), limits);
  ASSERT_FALSE(intake.ok());
  EXPECT_EQ(IntakeRejectionReason(intake.status()), "oversized");
}

TEST(FaultIntake, DetectsTheDeviceType) {
  EXPECT_EQ(DetectDeviceType({{"huawei.com/npu", ""}, {"huawei.com/npu-Fault", "[]"}}), "npu");
  EXPECT_EQ(DetectDeviceType({{"huawei.com/Ascend910", ""}, {"huawei.com/Ascend910-Fault", ""}}),
            "Ascend910");
  EXPECT_EQ(DetectDeviceType({{"huawei.com/Ascend310P", ""}, {"huawei.com/Ascend310P-Fault", ""}}),
            "Ascend310P");
  EXPECT_EQ(DetectDeviceType({{"huawei.com/Ascend310", ""}, {"huawei.com/Ascend310P-Fault", ""}}),
            "Ascend310");
  EXPECT_EQ(DetectDeviceType({}), "npu");
}

TEST(FaultIntake, Ascend310NodeFaultsAreReadFromThe310PSpelledKey) {
  model::DeviceInfoCfg cfg;
  cfg.device_info.device_list = {
      {"huawei.com/Ascend310", "Ascend310-0"},
      {"huawei.com/Ascend310-Unhealthy", "Ascend310-1"},
      {"huawei.com/Ascend310P-Fault",
       model::RenderDeviceFaults({ChipFault("Ascend310-1", "SeparateNPU", {{"80E01801", 5}})})}};
  cfg.device_info.update_time = 1718000001;
  Json cm = ConfigMapObject("kube-system", "mindx-dl-deviceinfo-n310",
                            {{"DeviceInfoCfg", model::RenderDeviceInfoCfg(cfg)}});
  auto intake = DeviceIntakeFromConfigMap(cm);
  ASSERT_TRUE(intake.ok()) << intake.status();
  EXPECT_EQ(intake->device.device_type, "Ascend310");
  ASSERT_EQ(intake->device.faults.size(), 1u);
  EXPECT_EQ(intake->device.unhealthy, std::vector<std::string>{"Ascend310-1"});
}

TEST(FaultIntake, ReceiveTimesAreKeptPerNpuAndCodeAndNewOnReappearance) {
  DeviceRecord prev = testing::Record();
  prev.faults = {testing::Fault("Ascend910-1", "80E01801", "RestartBusiness", 1, 1000)};
  DeviceRecord next = prev;
  next.faults[0].level = "SeparateNPU";  // level change keeps the time
  next.faults.push_back(testing::Fault("Ascend910-2", "80E01801", "RestartBusiness", 1, 0));
  CarryReceiveTimes(&prev, next, 5000);
  EXPECT_EQ(next.faults[0].received_ms, 1000);
  EXPECT_EQ(next.faults[1].received_ms, 5000);

  DeviceRecord gone = testing::Record();
  CarryReceiveTimes(&next, gone, 6000);
  DeviceRecord back = prev;
  CarryReceiveTimes(&gone, back, 7000);
  EXPECT_EQ(back.faults[0].received_ms, 7000);
}

TEST(FaultIntake, SwitchRecordIsDerivedFromSwitchInfoCfg) {
  NodeSpec spec;
  spec.switch_info =
      R"({"FaultCode":["{\"EventType\":1,\"AssembledFaultCode\":\"[0x00f1fef5,155912,npu,na]\",\"PeerPortDevice\":1,\"PeerPortId\":3,\"SwitchChipId\":0,\"SwitchPortId\":5,\"Severity\":2,\"Assertion\":1,\"AlarmRaisedTime\":1718000000000}"],"FaultLevel":"Separate","UpdateTime":1718000001,"NodeStatus":"UnHealthy","FaultTimeAndLevelMap":{"[0x00f1fef5,155912,npu,na]_0_5":{"fault_time":1718000000000,"fault_level":"Separate"}}})";
  auto intake = DeviceIntakeFromConfigMap(DeviceInfoConfigMap(spec));
  ASSERT_TRUE(intake.ok()) << intake.status();
  ASSERT_TRUE(intake->switch_record.has_value());
  const SwitchRecord& sw = *intake->switch_record;
  EXPECT_EQ(sw.cm_name, "mindx-dl-switchinfo-node-1");
  ASSERT_EQ(sw.events.size(), 1u);
  EXPECT_EQ(sw.events[0].switch_port_id, 5u);
  EXPECT_EQ(
      RenderSwitchEntry(sw),
      R"({"FaultCode":["{\"EventType\":1,\"AssembledFaultCode\":\"[0x00f1fef5,155912,npu,na]\",\"PeerPortDevice\":1,\"PeerPortId\":3,\"SwitchChipId\":0,\"SwitchPortId\":5,\"Severity\":2,\"Assertion\":1,\"AlarmRaisedTime\":1718000000000}"],"FaultLevel":"Separate","UpdateTime":1718000001,"NodeStatus":"UnHealthy","FaultTimeAndLevelMap":{"[0x00f1fef5,155912,npu,na]_0_5":{"fault_time":1718000000000,"fault_level":"Separate"}},"CmName":"mindx-dl-switchinfo-node-1"})");
}

}  // namespace fault_intake_test
}  // namespace clusterd::cluster
