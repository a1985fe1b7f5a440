#include "common/check_code.h"

#include <string>

#include "common/canonical_json.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace check_code_test {

using nlohmann::ordered_json;

// fault-pipeline.md §2, worked example: CJ(DeviceInfo) of the §1.2.7 device-info ConfigMap.
constexpr std::string_view kDeviceInfoCj =
    R"json({"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":1718000000123,\"fault_level\":\"RestartBusiness\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":1718000001})json";
constexpr std::string_view kDeviceInfoCheckCode =
    "1797da2c22c9dca9cc2266de8b5a9563eb32160f8be643bade5a067398416af9";

// The §1.2.7 DeviceInfo built the way a writer does: records in schema field order, the
// DeviceList map through SortedObject, the fault list serialised into a string.
ordered_json ExampleDeviceInfo() {
  ordered_json level;
  level["fault_time"] = 1718000000123;
  level["fault_level"] = "RestartBusiness";
  ordered_json fault;
  fault["fault_type"] = "CardUnhealthy";
  fault["npu_name"] = "Ascend910-3";
  fault["large_model_fault_level"] = "RestartBusiness";
  fault["fault_level"] = "RestartBusiness";
  fault["fault_handling"] = "RestartBusiness";
  fault["fault_code"] = "80E01801";
  fault["fault_time_and_level_map"] = SortedObject(ordered_json{{"80E01801", level}});

  ordered_json device_list;  // deliberately unsorted
  device_list["huawei.com/Ascend910-Unhealthy"] = "Ascend910-3";
  device_list["huawei.com/Ascend910-Fault"] = CanonicalJson(ordered_json::array({fault}));
  device_list["huawei.com/Ascend910-Recovering"] = "";
  device_list["huawei.com/Ascend910"] =
      "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7";
  device_list["huawei.com/Ascend910-NetworkUnhealthy"] = "";

  ordered_json device_info;
  device_info["DeviceList"] = SortedObject(device_list);
  device_info["UpdateTime"] = 1718000001;
  return device_info;
}

TEST(Sha256Hex, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(CheckCode, DeviceInfoWorkedExampleBytesHashToTheSpecValue) {
  EXPECT_EQ(kDeviceInfoCj.size(), 635u);
  EXPECT_EQ(Sha256Hex(kDeviceInfoCj), kDeviceInfoCheckCode);
}

TEST(CheckCode, DeviceInfoBuiltFromPartsReproducesTheExactBytes) {
  const ordered_json device_info = ExampleDeviceInfo();
  EXPECT_EQ(CanonicalJson(device_info), kDeviceInfoCj);
  EXPECT_EQ(CheckCode(device_info), kDeviceInfoCheckCode);
}

TEST(CheckCode, DeviceInfoReserialisedAfterParsingIsUnchanged) {
  // Verification parses the stored text and re-serialises it; for canonical input that is
  // the identity.
  const auto parsed = ordered_json::parse(kDeviceInfoCj);
  EXPECT_EQ(CanonicalJson(parsed), kDeviceInfoCj);
  EXPECT_EQ(CheckCode(parsed), kDeviceInfoCheckCode);
}

TEST(CheckCode, EmptyDeviceListWorkedExample) {
  ordered_json device_info;
  device_info["DeviceList"] = ordered_json::object();
  device_info["UpdateTime"] = 1718000001;
  EXPECT_EQ(CanonicalJson(device_info), R"({"DeviceList":{},"UpdateTime":1718000001})");
  EXPECT_EQ(CheckCode(device_info),
            "505bf4418504c2e140dd2f7e7a3fdf25873be6ad3fa70e6c857d5b69bd2e6709");
}

TEST(CheckCode, HtmlCharacterWorkedExample) {
  EXPECT_EQ(CanonicalJson(ordered_json("a<b")), R"("a\u003cb")");
  EXPECT_EQ(CheckCode(ordered_json("a<b")),
            "16b62e7d00f6a7239d2f0ff265ebf12aed369c2278a50883ed51a7b443858be6");
}

TEST(CheckCode, NodeInfoExampleOfSection13) {
  ordered_json fault_dev;
  fault_dev["DeviceType"] = "CPU";
  fault_dev["DeviceId"] = 0;
  fault_dev["FaultCode"] = ordered_json::array({"0000001D"});
  fault_dev["FaultLevel"] = "PreSeparateFault";
  ordered_json node_info;
  node_info["FaultDevList"] = ordered_json::array({fault_dev});
  node_info["NodeStatus"] = "PreSeparate";
  EXPECT_EQ(CanonicalJson(node_info),
            R"({"FaultDevList":[{"DeviceType":"CPU","DeviceId":0,"FaultCode":["0000001D"],)"
            R"("FaultLevel":"PreSeparateFault"}],"NodeStatus":"PreSeparate"})");
  EXPECT_EQ(CheckCode(node_info),
            "d089a10b52bc734b9b3bec6fdc2bd0486b9cedaf4d465c40be2f8888fff595a4");
}

TEST(CheckCode, NullAndEmptyListHashDifferently) {
  EXPECT_NE(CheckCode(ordered_json{{"FaultDevList", nullptr}}),
            CheckCode(ordered_json{{"FaultDevList", ordered_json::array()}}));
}

}  // namespace check_code_test
}  // namespace clusterd
