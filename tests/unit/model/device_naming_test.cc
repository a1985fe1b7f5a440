// deviceNameCustomization.json (seed 001 Table 7): the parser's rules and the names it gives.
#include "model/device_naming.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"

namespace clusterd::model {
namespace device_naming_test {

constexpr char kFile[] = "/etc/npu/deviceNameCustomization.json";

// A valid file: 910 and 310P renamed, one entry per line.
constexpr char kValid[] = R"([
  {"ResourceType": "Ascend910", "DevicePublicType": "example.com/npu910",
   "DevicePublicNamePre": "npu910-", "PodConfigurationName": "example.com/npu910-configuration"},
  {"ResourceType": "Ascend310P", "DevicePublicType": "example.com/infer1",
   "DevicePublicNamePre": "infer"}
])";

std::string ErrorOf(const std::string& text) {
  auto parsed = ParseDeviceNameCustomization(text, kFile);
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

// One entry whose `field` is `value` (the others valid for Ascend910).
std::string OneEntry(const std::string& field, const std::string& value) {
  std::string text = R"([{"ResourceType": "Ascend910", "DevicePublicType": "example.com/npu910",
  "DevicePublicNamePre": "npu-", "PodConfigurationName": "example.com/npu-configuration"}])";
  const std::string key = "\"" + field + "\": \"";
  const size_t at = text.find(key);
  EXPECT_NE(at, std::string::npos);
  const size_t end = text.find('"', at + key.size());
  return text.replace(at + key.size(), end - at - key.size(), value);
}

TEST(DeviceNameCustomization, ParsesAnArrayOfEntries) {
  auto parsed = ParseDeviceNameCustomization(kValid, kFile);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0], (DeviceNameEntry{"Ascend910", "example.com/npu910", "npu910-",
                                           "example.com/npu910-configuration"}));
  EXPECT_EQ((*parsed)[1], (DeviceNameEntry{"Ascend310P", "example.com/infer1", "infer", ""}));
  EXPECT_TRUE(ParseDeviceNameCustomization("[]", kFile)->empty());
}

TEST(DeviceNameCustomization, MalformedJsonNamesTheFileLineAndColumn) {
  const std::string text =
      "[\n  {\"ResourceType\": \"Ascend910\",\n   \"DevicePublicType\" \"x\"}\n]";
  const std::string error = ErrorOf(text);
  // The position is where the parser stopped: the last character of the unexpected "x".
  EXPECT_EQ(error.rfind(std::string(kFile) + ":3:25: malformed JSON: ", 0), 0u) << error;
  EXPECT_EQ(ErrorOf("").rfind(std::string(kFile) + ":1:1: malformed JSON", 0), 0u);
}

TEST(DeviceNameCustomization, UnknownKeysAreRefusedWithTheirLine) {
  const std::string text = absl::StrReplaceAll(
      kValid, {{"\"DevicePublicNamePre\": \"infer\"", "\"DevicePublicNamePrefix\": \"infer\""}});
  EXPECT_EQ(ErrorOf(text),
            std::string(kFile) +
                ":5:4: entry 2: unknown key \"DevicePublicNamePrefix\" (known: ResourceType, "
                "DevicePublicType, DevicePublicNamePre, PodConfigurationName)");
  // Exact spelling: Go's decoder would match resourcetype, this parser does not.
  EXPECT_NE(ErrorOf(R"([{"resourceType": "Ascend910"}])").find("unknown key \"resourceType\""),
            std::string::npos);
}

TEST(DeviceNameCustomization, TheFileIsAnArrayOfObjectsOfStrings) {
  EXPECT_EQ(ErrorOf(R"({"ResourceType": "Ascend910"})"),
            std::string(kFile) + ":1:1: the file must hold a JSON array of entries, not object");
  EXPECT_EQ(ErrorOf("[\n  \"Ascend910\"\n]"),
            std::string(kFile) + ":2:3: entry 1 is string, not an object");
  EXPECT_EQ(ErrorOf(R"([{"ResourceType": 910}])"),
            std::string(kFile) + ":1:3: entry 1: ResourceType is number, not a string");
}

TEST(DeviceNameCustomization, MandatoryFields) {
  EXPECT_EQ(ErrorOf(R"([{"DevicePublicType": "example.com/npu910", "DevicePublicNamePre": "n-"}])"),
            std::string(kFile) + ":1:2: entry 1: ResourceType is missing or empty");
  EXPECT_EQ(ErrorOf(R"([{"ResourceType": "Ascend310", "DevicePublicNamePre": "n-"}])"),
            std::string(kFile) + ":1:2: entry 1: DevicePublicType is missing or empty");
  EXPECT_EQ(ErrorOf(R"([{"ResourceType": "Ascend310", "DevicePublicType": "example.com/npu310"}])"),
            std::string(kFile) + ":1:2: entry 1: DevicePublicNamePre is missing or empty");
  // PodConfigurationName is mandatory for Ascend910 only.
  EXPECT_EQ(
      ErrorOf(
          R"([{"ResourceType": "Ascend910", "DevicePublicType": "example.com/npu910", "DevicePublicNamePre": "n-"}])"),
      std::string(kFile) +
          ":1:2: entry 1: PodConfigurationName is missing (mandatory for ResourceType Ascend910)");
  EXPECT_TRUE(
      ParseDeviceNameCustomization(
          R"([{"ResourceType": "Ascend310", "DevicePublicType": "example.com/npu310", "DevicePublicNamePre": "n-"}])",
          kFile)
          .ok());
}

TEST(DeviceNameCustomization, ResourceTypeIsOneOfThreeAndAppearsOnce) {
  for (const char* type : {"Ascend910", "Ascend310", "Ascend310P"}) {
    EXPECT_TRUE(ParseDeviceNameCustomization(OneEntry("ResourceType", type), kFile).ok()) << type;
  }
  for (const char* type : {"npu", "Ascend910B", "ascend910", "Ascend910A3"}) {
    EXPECT_NE(ErrorOf(OneEntry("ResourceType", type))
                  .find(std::string("ResourceType \"") + type +
                        "\" is not Ascend910, Ascend310 or Ascend310P"),
              std::string::npos)
        << type;
  }
  const std::string twice = R"([
{"ResourceType": "Ascend310", "DevicePublicType": "example.com/a310", "DevicePublicNamePre": "a-"},
{"ResourceType": "Ascend310", "DevicePublicType": "example.com/b310", "DevicePublicNamePre": "b-"}])";
  EXPECT_EQ(ErrorOf(twice),
            std::string(kFile) +
                ":3:2: entry 2: ResourceType Ascend310 is already customised by entry 1");
}

TEST(DeviceNameCustomization, DevicePublicTypeFormatAndLength) {
  for (const char* good :
       {"example.com/npu910", "a.b/cdefgh", "A1.B2/C3D4E5F6", "abcdefghij.klmnopqrstu/vwxyz0123"}) {
    EXPECT_TRUE(ParseDeviceNameCustomization(OneEntry("DevicePublicType", good), kFile).ok())
        << good;
  }
  // Not xxx.xxx/xxx of letters and digits.
  for (const char* bad : {"examplecom/npu910", "example.com-npu910", "example.com/npu-910",
                          "ex.ample.com/npu910", "example.com/npu/910", ".example/npu910x",
                          "example./npu910xx", "example.com/", "example_1.com/npu910"}) {
    EXPECT_NE(ErrorOf(OneEntry("DevicePublicType", bad))
                  .find("must have the form xxx.xxx/xxx with letters and digits only"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicType", "a.b/cdefg")).find("10 to 32"),
            std::string::npos);  // 9
  EXPECT_NE(
      ErrorOf(OneEntry("DevicePublicType", "abcdefghij.klmnopqrstu/vwxyz01234")).find("10 to 32"),
      std::string::npos);  // 33
  EXPECT_EQ(ErrorOf(OneEntry("DevicePublicType", "a.b/c")),
            std::string(kFile) +
                ":1:32: entry 1: DevicePublicType \"a.b/c\" must be 10 to 32 characters long");
}

TEST(DeviceNameCustomization, DevicePublicNamePreRules) {
  for (const char* good : {"np", "npu-", "NPU3-x", "a-b-c-d-e-f-g-hi"}) {
    EXPECT_TRUE(ParseDeviceNameCustomization(OneEntry("DevicePublicNamePre", good), kFile).ok())
        << good;
  }
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicNamePre", "n")).find("2 to 16"), std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicNamePre", "abcdefghijklmnopq")).find("2 to 16"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicNamePre", "3npu")).find("must start with a letter"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicNamePre", "-npu")).find("must start with a letter"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicNamePre", "npu_"))
                .find("may hold only letters, digits and hyphens"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("DevicePublicNamePre", "np.u"))
                .find("may hold only letters, digits and hyphens"),
            std::string::npos);
}

TEST(DeviceNameCustomization, PodConfigurationNameRules) {
  for (const std::string& good :
       {std::string("example.com/npu-configuration"), std::string("a23456789b"),
        std::string("a/b.c-d/e.f-g9"), std::string(63, 'x')}) {
    EXPECT_TRUE(ParseDeviceNameCustomization(OneEntry("PodConfigurationName", good), kFile).ok())
        << good;
  }
  EXPECT_NE(ErrorOf(OneEntry("PodConfigurationName", "a23456789")).find("10 to 63"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("PodConfigurationName", std::string(64, 'x'))).find("10 to 63"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("PodConfigurationName", "1example.com/conf"))
                .find("must start with a letter"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("PodConfigurationName", "example.com/conf-"))
                .find("must end with a letter or a digit"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OneEntry("PodConfigurationName", "example.com/conf_x"))
                .find("may hold only letters, digits, hyphens, slashes and dots"),
            std::string::npos);
  // Checked on 310 types too, although only Ascend910 pods carry it.
  EXPECT_NE(
      ErrorOf(
          R"([{"ResourceType": "Ascend310", "DevicePublicType": "example.com/npu310", "DevicePublicNamePre": "n-", "PodConfigurationName": "x"}])")
          .find("PodConfigurationName \"x\" must be 10 to 63"),
      std::string::npos);
}

TEST(DeviceNameCustomization, AResourceNameIdentifiesOneType) {
  // Another type's fixed resource name.
  EXPECT_EQ(
      ErrorOf(
          R"([{"ResourceType": "Ascend310", "DevicePublicType": "huawei.com/Ascend910", "DevicePublicNamePre": "n-"}])"),
      std::string(kFile) +
          ":1:32: entry 1: DevicePublicType huawei.com/Ascend910 is the resource name of "
          "Ascend910");
  EXPECT_NE(
      ErrorOf(
          R"([{"ResourceType": "Ascend310P", "DevicePublicType": "huawei.com/npu", "DevicePublicNamePre": "n-"}])")
          .find("is the resource name of npu"),
      std::string::npos);
  // Another entry's.
  EXPECT_NE(ErrorOf(R"([
{"ResourceType": "Ascend310", "DevicePublicType": "example.com/infer", "DevicePublicNamePre": "a-"},
{"ResourceType": "Ascend310P", "DevicePublicType": "example.com/infer", "DevicePublicNamePre": "b-"}])")
                .find("3:32: entry 2: DevicePublicType example.com/infer is already the resource "
                      "name of Ascend310 (entry 1)"),
            std::string::npos);
  // Its own fixed name is allowed (renames only the NPUs).
  EXPECT_TRUE(
      ParseDeviceNameCustomization(
          R"([{"ResourceType": "Ascend310", "DevicePublicType": "huawei.com/Ascend310", "DevicePublicNamePre": "n-"}])",
          kFile)
          .ok());
}

TEST(DeviceNaming, DefaultNamesAndCustomisedOnes) {
  const DeviceNaming fixed;
  EXPECT_EQ(fixed.ResourceName("Ascend910"), "huawei.com/Ascend910");
  EXPECT_EQ(fixed.NpuName("Ascend910", 3), "Ascend910-3");
  EXPECT_EQ(fixed.Keys("Ascend310P").fault, "huawei.com/Ascend310P-Fault");
  EXPECT_EQ(fixed.AllocationAnnotationKeys(),
            (std::vector<std::string>{"ascend.kubectl.kubernetes.io/ascend-910-configuration",
                                      "ascend.kubectl.kubernetes.io/ascend-npu-configuration"}));
  EXPECT_TRUE(fixed.IsNpuResource("huawei.com/Ascend910"));
  EXPECT_FALSE(fixed.IsNpuResource("example.com/npu910"));

  const DeviceNaming custom(*ParseDeviceNameCustomization(kValid, kFile));
  EXPECT_EQ(custom.ResourceName("Ascend910"), "example.com/npu910");
  EXPECT_EQ(custom.NpuName("Ascend910", 3), "npu910-3");
  EXPECT_EQ(custom.NpuName("Ascend310P", 12), "infer12");
  EXPECT_EQ(custom.NpuName("Ascend310", 1), "Ascend310-1");  // not renamed
  EXPECT_EQ(custom.NpuName("npu", 1), "npu-1");
  const DeviceListKeys keys = custom.Keys("Ascend910");
  EXPECT_EQ(keys.available, "example.com/npu910");
  EXPECT_EQ(keys.unhealthy, "example.com/npu910-Unhealthy");
  EXPECT_EQ(keys.network_unhealthy, "example.com/npu910-NetworkUnhealthy");
  EXPECT_EQ(keys.recovering, "example.com/npu910-Recovering");
  EXPECT_EQ(keys.fault, "example.com/npu910-Fault");
  // The fixed 910 key is still read after the renamed one (pods of nodes without the file).
  EXPECT_EQ(custom.AllocationAnnotationKeys(),
            (std::vector<std::string>{"example.com/npu910-configuration",
                                      "ascend.kubectl.kubernetes.io/ascend-910-configuration",
                                      "ascend.kubectl.kubernetes.io/ascend-npu-configuration"}));
  EXPECT_EQ(custom.CustomTypeOf("example.com/infer1"), "Ascend310P");
  EXPECT_EQ(custom.CustomTypeOf("huawei.com/Ascend910"), std::nullopt);
  EXPECT_TRUE(custom.IsNpuResource("example.com/npu910"));
  EXPECT_TRUE(custom.IsNpuResource("huawei.com/Ascend310"));
}

TEST(DeviceNaming, ReadFileNamesAMissingFile) {
  auto missing = DeviceNaming::ReadFile("/nonexistent/deviceNameCustomization.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot read /nonexistent/deviceNameCustomization.json");
}

}  // namespace device_naming_test
}  // namespace clusterd::model
