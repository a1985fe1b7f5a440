#include "model/device_info.h"

#include <string>

#include "common/check_code.h"
#include "gtest/gtest.h"
#include "model/device_fault.h"

namespace clusterd::model {
namespace device_info_test {

// fault-pipeline.md §1.2.7, verbatim.
constexpr std::string_view kExample =
    R"json({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"RestartBusiness\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718000001},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9"})json";

DeviceInfoCfg ExampleCfg() {
  DeviceFault fault;
  fault.fault_type = std::string(kFaultTypeCardUnhealthy);
  fault.npu_name = "Ascend910-3";
  fault.large_model_fault_level = fault.fault_level = fault.fault_handling = "RestartBusiness";
  fault.fault_code = "80E01801";
  fault.fault_time_and_level_map["80E01801"] = {1718000000123, "RestartBusiness"};
  const DeviceListKeys keys = DeviceListKeys::For("Ascend910");
  DeviceInfoCfg cfg;
  cfg.device_info.device_list = {
      {keys.available,
       "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7"},
      {keys.fault, RenderDeviceFaults({fault})},
      {keys.network_unhealthy, ""},
      {keys.recovering, ""},
      {keys.unhealthy, "Ascend910-3"},
  };
  cfg.device_info.update_time = 1718000001;
  return cfg;
}

TEST(DeviceInfoCfg, RendersTheSpecExampleByteForByte) {
  EXPECT_EQ(RenderDeviceInfoCfg(ExampleCfg()), kExample);
}

TEST(DeviceInfoCfg, CheckCodeIsTheSha256OfTheDeviceInfoRecord) {
  const std::string device_info_cj =
      std::string(kExample.substr(std::string_view("{\"DeviceInfo\":").size(), 635));
  ASSERT_EQ(device_info_cj.back(), '}');
  EXPECT_EQ(Sha256Hex(device_info_cj),
            "1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9");
  EXPECT_EQ(DeviceInfoCheckCode(ExampleCfg().device_info), Sha256Hex(device_info_cj));
}

TEST(DeviceInfoCfg, EmptyDeviceListHashesToTheSpecValue) {
  NodeDeviceInfo info;
  info.update_time = 1718000001;
  EXPECT_EQ(DeviceInfoCheckCode(info),
            "505bf4418504c2e140dd2f7e7a3fdf25873be6ad3fa70e6c857d5b69bd2e6709");
}

TEST(DeviceInfoCfg, ParsesAndVerifiesTheSpecExample) {
  auto cfg = ParseDeviceInfoCfg(kExample);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  DeviceInfoCfg want = ExampleCfg();
  want.check_code = "1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9";
  EXPECT_EQ(*cfg, want);
  auto faults = ParseDeviceFaults(cfg->device_info.device_list.at("huawei.com/Ascend910-Fault"));
  ASSERT_TRUE(faults.ok()) << faults.status();
  ASSERT_EQ(faults->size(), 1u);
  EXPECT_EQ((*faults)[0].fault_time_and_level_map.at("80E01801").fault_time, 1718000000123);
}

TEST(DeviceInfoCfg, VerificationIgnoresKeyOrderAndUnknownFields) {
  const std::string text =
      R"({"CheckCode":"505bf4418504c2e140dd2f7e7a3fdf25873be6ad3fa70e6c857d5b69bd2e6709",)"
      R"("Extra":1,"DeviceInfo":{"UpdateTime":1718000001,"DeviceList":{},"X":"y"}})";
  auto cfg = ParseDeviceInfoCfg(text);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->super_pod_id, 0);  // absent: Go zero value
}

TEST(DeviceInfoCfg, NullDeviceListIsNotTheSameAsEmpty) {
  const std::string text =
      R"({"DeviceInfo":{"DeviceList":null,"UpdateTime":1718000001},)"
      R"("CheckCode":"505bf4418504c2e140dd2f7e7a3fdf25873be6ad3fa70e6c857d5b69bd2e6709"})";
  EXPECT_EQ(ParseDeviceInfoCfg(text).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(DeviceInfoCfg, RejectsEmptyOrWrongCheckCode) {
  std::string tampered(kExample);
  tampered.replace(tampered.find("1718000001}"), 10, "1718000002");
  EXPECT_EQ(ParseDeviceInfoCfg(tampered).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      ParseDeviceInfoCfg(R"({"DeviceInfo":{"DeviceList":{},"UpdateTime":1}})").status().code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST(DeviceInfoCfg, RejectsMalformedTextAndWrongTypes) {
  EXPECT_EQ(ParseDeviceInfoCfg("{").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDeviceInfoCfg(R"({"DeviceInfo":{"UpdateTime":"1"}})").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDeviceInfoCfg(R"({"SuperPodID":4294967295})").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceInfoCfg, RackIdIsWrittenOnlyWhenSet) {
  DeviceInfoCfg cfg;
  cfg.device_info.update_time = 5;
  EXPECT_EQ(RenderDeviceInfoCfg(cfg).find("RackID"), std::string::npos);
  cfg.rack_id = 3;
  const std::string text = RenderDeviceInfoCfg(cfg);
  EXPECT_NE(text.find(R"("CheckCode":")"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 12), R"(,"RackID":3})");
  auto parsed = ParseDeviceInfoCfg(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->rack_id, 3);
}

TEST(DeviceFaults, EmptyListRendersAsEmptyArrayAndParsesBack) {
  EXPECT_EQ(RenderDeviceFaults({}), "[]");
  EXPECT_TRUE(ParseDeviceFaults("[]")->empty());
  EXPECT_TRUE(ParseDeviceFaults("")->empty());
  EXPECT_FALSE(ParseDeviceFaults("{}").ok());
}

TEST(DeviceFaults, FaultCodesAreSplitWithEverySpaceStripped) {
  EXPECT_EQ(SplitFaultCodes("80E01801      ,  80C98009    "),
            (std::vector<std::string>{"80E01801", "80C98009"}));
  EXPECT_EQ(SplitFaultCodes("80E0 1801"), (std::vector<std::string>{"80E01801"}));
  EXPECT_EQ(SplitFaultCodes("80E01801,80C98009"),
            (std::vector<std::string>{"80E01801", "80C98009"}));
  // An empty field stays one empty code (the code-less ManuallySeparateNPU entry).
  EXPECT_EQ(SplitFaultCodes(""), (std::vector<std::string>{""}));
  EXPECT_EQ(SplitFaultCodes("   "), (std::vector<std::string>{""}));
}

}  // namespace device_info_test
}  // namespace clusterd::model
