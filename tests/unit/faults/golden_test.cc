// Golden device-info ConfigMap contents: for a set of fault situations the data the agent
// writes equals hand-checked text, and CheckCode equals a SHA-256 computed here, independently
// of the model code, over the DeviceInfo part of the expected text.
#include "absl/strings/str_replace.h"
#include "common/check_code.h"
#include "engine_test_util.h"
#include "faults/switch_fault_engine.h"
#include "gtest/gtest.h"
#include "model/device_info.h"

namespace clusterd::faults {
namespace golden_test {

using namespace testing;

// `expected` spells the check code as <CC>.
void ExpectDeviceInfoCfg(const std::string& actual, const std::string& expected) {
  const std::string prefix = R"({"DeviceInfo":)";
  ASSERT_EQ(expected.rfind(prefix, 0), 0u);
  const size_t end = expected.find(R"(,"SuperPodID":)");
  ASSERT_NE(end, std::string::npos);
  const std::string device_info = expected.substr(prefix.size(), end - prefix.size());
  const std::string want = absl::StrReplaceAll(expected, {{"<CC>", Sha256Hex(device_info)}});
  EXPECT_EQ(actual, want);
  auto parsed = model::ParseDeviceInfoCfg(actual);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
}

TEST(GoldenDeviceInfo, SpecExampleOneRestartBusinessFault) {
  DeviceFaultEngine engine(Options(8), ShippedPolicy(), kT0);
  engine.Submit(Event(3, 0x80E01801, Assertion::kOccur, 1718000000123));
  engine.RunCycle(1718000000200);
  const DeviceInfoContent c = BuildDeviceInfoContent(engine, nullptr, {}, 1718000001000);
  // fault-pipeline.md §1.2.7, verbatim.
  EXPECT_EQ(
      c.data.at("DeviceInfoCfg"),
      R"json({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"RestartBusiness\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718000001},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9"})json");
  EXPECT_EQ(c.data.size(), 4u);  // no SwitchInfoCfg on 910B
  EXPECT_EQ(c.data.at("ManuallySeparateNPU"), "");
  EXPECT_EQ(c.data.at("UpgradeFaultReason"), "{}");
  EXPECT_EQ(c.data.at("Description"),
            "The field[xxx.com/xxx] is sunset. Volcano has the ability to maintain the usage "
            "status of chips on its own, and can temporarily use this field by configuring the "
            "Volcano parameter 'self-maintain-available-card'");
}

TEST(GoldenDeviceInfo, HealthyNodeWithoutFaults) {
  DeviceFaultEngine engine(Options(8), ShippedPolicy(), kT0);
  engine.RunCycle(kT0);
  const DeviceInfoContent c = BuildDeviceInfoContent(engine, nullptr, {}, kT0 + 1000);
  ExpectDeviceInfoCfg(
      c.data.at("DeviceInfoCfg"),
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":""},"UpdateTime":1718000001},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"<CC>"})");
}

TEST(GoldenDeviceInfo, A3NodeWithRoceTimeoutAndSwitchFault) {
  DeviceFaultEngine engine(Options(16, "Ascend910A3"), ShippedPolicy(), kT0);
  SwitchFaultEngine switches;
  SwitchFaultInput sw;
  sw.assembled_code = "[0x00f1fef5,155914,npu,na]";
  sw.chip_id = 1;
  sw.port_id = 7;
  sw.peer_port_id = 3;
  sw.severity = 2;
  sw.alarm_time_ms = kT0;
  switches.Submit(sw);
  engine.Submit(Event(0, kRoceLinkDown, Assertion::kOccur, kT0));
  engine.RunCycle(kT0);
  switches.RunCycle(kT0);
  engine.RunCycle(kT0 + 21000);
  switches.RunCycle(kT0 + 21000);
  const DeviceInfoContent c =
      BuildDeviceInfoContent(engine, &switches, {5, 2, std::nullopt}, kT0 + 30000);
  ExpectDeviceInfoCfg(
      c.data.at("DeviceInfoCfg"),
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-10,Ascend910-11,Ascend910-12,Ascend910-13,Ascend910-14,Ascend910-15,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7,Ascend910-8,Ascend910-9","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardNetworkUnhealthy\",\"npu_name\":\"Ascend910-0\",\"large_model_fault_level\":\"PreSeparateNPU\",\"fault_level\":\"PreSeparateNPU\",\"fault_handling\":\"PreSeparateNPU\",\"fault_code\":\"81078603\",\"fault_time_and_level_map\":{\"81078603\":{\"fault_time\":1718000020000,\"fault_level\":\"PreSeparateNPU\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"Ascend910-0","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":""},"UpdateTime":1718000030},"SuperPodID":5,"ServerIndex":2,"CheckCode":"<CC>"})");
  EXPECT_EQ(
      c.data.at("SwitchInfoCfg"),
      R"({"FaultCode":["{\"EventType\":15859445,\"AssembledFaultCode\":\"[0x00f1fef5,155914,npu,na]\",\"PeerPortDevice\":1,\"PeerPortId\":3,\"SwitchChipId\":1,\"SwitchPortId\":7,\"Severity\":2,\"Assertion\":1,\"AlarmRaisedTime\":1718000000000}"],"FaultLevel":"RestartRequest","UpdateTime":1718000030,"NodeStatus":"UnHealthy","FaultTimeAndLevelMap":{"[0x00f1fef5,155914,npu,na]_1_7":{"fault_time":1718000000000,"fault_level":"RestartRequest"}}})");
  EXPECT_EQ(c.data.at("ManuallySeparateNPU"), "");
  EXPECT_EQ(
      c.data.at("UpgradeFaultReason"),
      R"({"Ascend910-0":[{"upgrade_time":1718000020000,"fault_code":"81078603","fault_level":"PreSeparateNPU","upgrade_type":"FaultDuration"}]})");
}

TEST(GoldenDeviceInfo, ManuallySeparatedNpuAfterRecovery) {
  DeviceFaultEngine engine(Options(8), ShippedPolicy(), kT0);
  for (int i = 0; i < 3; ++i) {
    At(engine, 3, 0x80E18005, Assertion::kOccur, kT0 + i * kHour);
    At(engine, 3, 0x80E18005, Assertion::kRecover, kT0 + i * kHour + 60 * kS);
  }
  const DeviceInfoContent c =
      BuildDeviceInfoContent(engine, nullptr, {}, kT0 + 2 * kHour + 60 * kS);
  ExpectDeviceInfoCfg(
      c.data.at("DeviceInfoCfg"),
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"ManuallySeparateNPU\",\"fault_level\":\"ManuallySeparateNPU\",\"fault_handling\":\"ManuallySeparateNPU\",\"fault_code\":\"80E18005\",\"fault_time_and_level_map\":{\"80E18005\":{\"fault_time\":1718007200000,\"fault_level\":\"ManuallySeparateNPU\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718007260},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"<CC>"})");
  EXPECT_EQ(c.data.at("ManuallySeparateNPU"), "Ascend910-3");
  EXPECT_EQ(
      c.data.at("UpgradeFaultReason"),
      R"({"Ascend910-3":[{"upgrade_time":1718007200000,"fault_code":"80e18005","fault_level":"ManuallySeparateNPU","upgrade_type":"FaultFrequency"}]})");
}

TEST(GoldenDeviceInfo, Ascend310PWritesThreeKeys) {
  DeviceFaultEngine engine(Options(4, "Ascend310P"), ShippedPolicy(), kT0);
  At(engine, 1, 0xA2301001, Assertion::kOccur, kT0);
  const DeviceInfoContent c =
      BuildDeviceInfoContent(engine, nullptr, {-2, -2, std::nullopt}, kT0 + 1000);
  ExpectDeviceInfoCfg(
      c.data.at("DeviceInfoCfg"),
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend310P":"Ascend310P-0,Ascend310P-2,Ascend310P-3","huawei.com/Ascend310P-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend310P-1\",\"large_model_fault_level\":\"SeparateNPU\",\"fault_level\":\"SeparateNPU\",\"fault_handling\":\"SeparateNPU\",\"fault_code\":\"A2301001\",\"fault_time_and_level_map\":{\"A2301001\":{\"fault_time\":1718000000000,\"fault_level\":\"SeparateNPU\"}}}]","huawei.com/Ascend310P-Unhealthy":"Ascend310P-1"},"UpdateTime":1718000001},"SuperPodID":-2,"ServerIndex":-2,"CheckCode":"<CC>"})");
}

TEST(GoldenDeviceInfo, A5WritesTheZeroSwitchRecord) {
  DeviceFaultEngine engine(Options(2, "A5"), ShippedPolicy(), kT0);
  engine.RunCycle(kT0);
  const DeviceInfoContent c = BuildDeviceInfoContent(engine, nullptr, {}, kT0 + 1000);
  ExpectDeviceInfoCfg(
      c.data.at("DeviceInfoCfg"),
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/npu":"npu-0,npu-1","huawei.com/npu-Fault":"[]","huawei.com/npu-NetworkUnhealthy":"","huawei.com/npu-Recovering":"","huawei.com/npu-Unhealthy":""},"UpdateTime":1718000001},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"<CC>"})");
  EXPECT_EQ(
      c.data.at("SwitchInfoCfg"),
      R"({"FaultCode":null,"FaultLevel":"","UpdateTime":0,"NodeStatus":"","FaultTimeAndLevelMap":null})");
}

TEST(GoldenDeviceInfo, FingerprintIgnoresTimeOnlyChanges) {
  DeviceFaultEngine engine(Options(8), ShippedPolicy(), kT0);
  At(engine, 3, 0x80E01801, Assertion::kOccur, kT0);
  const DeviceInfoContent a = BuildDeviceInfoContent(engine, nullptr, {}, kT0 + 1000);
  const DeviceInfoContent b = BuildDeviceInfoContent(engine, nullptr, {}, kT0 + 9000);
  EXPECT_NE(a.data, b.data);  // UpdateTime and CheckCode moved
  EXPECT_EQ(a.fingerprint, b.fingerprint);
}

}  // namespace golden_test
}  // namespace clusterd::faults
