#include "faults/fault_code_catalog.h"

#include <map>

#include "faults/fault_policy.h"
#include "gtest/gtest.h"
#include "shipped_policy.h"

namespace clusterd::faults {
namespace fault_code_catalog_test {

using model::FaultLevel;
using testing::ReadDataFile;

TEST(FaultCodeCatalog, ShippedFileHasTheDocumentedEffectiveCounts) {
  PolicyIssues issues;
  auto catalog = FaultCodeCatalog::Parse(ReadDataFile("faultCode.json"), &issues);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_TRUE(issues.empty());
  std::map<FaultLevel, int> counts;
  for (const auto& [code, level] : catalog->chip_levels()) ++counts[level];
  // §4: 802 distinct codes; RestartBusiness 24 effective (B4060011 twice, A2301001 also
  // Separate); the network codes 81078603 (NotHandle), 110001024 (PreSeparate) and 110000002
  // (SubHealth) and 81078607 (NotHandle) are not chip codes.
  EXPECT_EQ(counts[FaultLevel::kRestartBusiness], 24);
  EXPECT_EQ(counts[FaultLevel::kSeparateNPU], 215);
  EXPECT_EQ(counts[FaultLevel::kPreSeparateNPU], 199);
  EXPECT_EQ(counts[FaultLevel::kNotHandleFault], 130);
  EXPECT_EQ(counts[FaultLevel::kSubHealthFault], 12);
  EXPECT_EQ(counts[FaultLevel::kRestartRequest], 33);
  EXPECT_EQ(counts[FaultLevel::kFreeRestartNPU], 23);
  EXPECT_EQ(counts[FaultLevel::kRestartNPU], 162);
  EXPECT_EQ(catalog->chip_levels().size(), 798u);
}

TEST(FaultCodeCatalog, NotableShippedCodes) {
  PolicyIssues issues;
  auto catalog = *FaultCodeCatalog::Parse(ReadDataFile("faultCode.json"), &issues);
  EXPECT_EQ(catalog.KnownChipLevel(0x80E01801), FaultLevel::kRestartBusiness);
  EXPECT_EQ(catalog.KnownChipLevel(0x80C98009), FaultLevel::kRestartRequest);
  EXPECT_EQ(catalog.KnownChipLevel(0x40F84E00), FaultLevel::kRestartNPU);
  EXPECT_EQ(catalog.KnownChipLevel(0xA2301001), FaultLevel::kSeparateNPU);     // precedence
  EXPECT_EQ(catalog.KnownChipLevel(0x81B18603), FaultLevel::kNotHandleFault);  // hyper-plane: chip
  EXPECT_FALSE(catalog.KnownChipLevel(kRoceLinkDown).has_value());
  EXPECT_EQ(catalog.NetworkCodeLevel(kRoceLinkDown), FaultLevel::kNotHandleFault);
  EXPECT_EQ(catalog.NetworkCodeLevel(kUboePreSeparate), FaultLevel::kPreSeparateNPU);
  EXPECT_EQ(catalog.NetworkCodeLevel(kUboeSubHealth), FaultLevel::kSubHealthFault);
  EXPECT_EQ(catalog.NetworkCodeLevel(kUboePortDown), FaultLevel::kNotHandleFault);
  // A network code found in no list is PreSeparate.
  auto empty = *FaultCodeCatalog::Parse("{}", &issues);
  EXPECT_EQ(empty.NetworkCodeLevel(kUboePortDown), FaultLevel::kPreSeparateNPU);
}

TEST(FaultCodeCatalog, UnknownCodeLevelDependsOnDriverSeverity) {
  PolicyIssues issues;
  auto catalog = *FaultCodeCatalog::Parse(R"({"NotHandleFaultCodes":["80E21007"]})", &issues);
  EXPECT_EQ(catalog.ChipCodeLevel(0x12345678, std::nullopt), FaultLevel::kSeparateNPU);
  EXPECT_EQ(catalog.ChipCodeLevel(0x12345678, 2u), FaultLevel::kSeparateNPU);
  EXPECT_EQ(catalog.ChipCodeLevel(0x12345678, 1u), FaultLevel::kNotHandleFault);
  EXPECT_EQ(catalog.ChipCodeLevel(0x12345678, 0u), FaultLevel::kNotHandleFault);
  EXPECT_EQ(catalog.ChipCodeLevel(0x80E21007, std::nullopt), FaultLevel::kNotHandleFault);
}

TEST(FaultCodeCatalog, SpellingsKeepLeadingZerosAndRenderUpperCase) {
  auto policy = testing::ShippedPolicy();
  EXPECT_EQ(policy->UpperHex(0x020001002), "020001002");
  EXPECT_EQ(policy->UpperHex(0x80e01801), "80E01801");
  EXPECT_EQ(policy->LowerHex(0x80E18005), "80e18005");
  EXPECT_EQ(policy->UpperHex(0xabc), "ABC");  // unconfigured: minimal hex
}

TEST(FaultCodeCatalog, NonHexEntriesAreSkippedWithAnIssue) {
  PolicyIssues issues;
  auto catalog = FaultCodeCatalog::Parse(
      R"({"SeparateNPUCodes":["zz12","80E01801",""],"Unknown":[1]})", &issues);
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->KnownChipLevel(0x80E01801), FaultLevel::kSeparateNPU);
  EXPECT_EQ(issues.size(), 2u);
}

TEST(FaultCodeCatalog, WrongJsonTypesAreAFormatError) {
  PolicyIssues issues;
  EXPECT_FALSE(FaultCodeCatalog::Parse("[]", &issues).ok());
  EXPECT_FALSE(FaultCodeCatalog::Parse(R"({"SeparateNPUCodes":"80E01801"})", &issues).ok());
  EXPECT_FALSE(FaultCodeCatalog::Parse(R"({"SeparateNPUCodes":[1]})", &issues).ok());
  EXPECT_FALSE(FaultCodeCatalog::Parse("{", &issues).ok());
}

TEST(FaultCodeCatalog, NetworkCodesInChipListsFeedTheNetworkLists) {
  PolicyIssues issues;
  auto catalog = *FaultCodeCatalog::Parse(
      R"({"SeparateNPUCodes":["81078603"],"RestartNPUCodes":["110000002"],
          "PreSeparateNPUNetworkCodes":["81078607"]})",
      &issues);
  EXPECT_EQ(catalog.NetworkCodeLevel(kRoceLinkDown), FaultLevel::kSeparateNPU);
  EXPECT_EQ(catalog.NetworkCodeLevel(kUboeSubHealth), FaultLevel::kNotHandleFault);
  EXPECT_EQ(catalog.NetworkCodeLevel(kUboePortDown), FaultLevel::kPreSeparateNPU);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, "network_code_demoted");
  EXPECT_FALSE(catalog.KnownChipLevel(kRoceLinkDown).has_value());
}

TEST(HexCode, ParsesConfigurationSpellings) {
  EXPECT_EQ(ParseHexCode("80e01801"), 0x80E01801u);
  EXPECT_EQ(ParseHexCode("0x80E01801"), 0x80E01801u);
  EXPECT_EQ(ParseHexCode("020001002"), 0x20001002u);
  EXPECT_FALSE(ParseHexCode("").has_value());
  EXPECT_FALSE(ParseHexCode("80E0180G").has_value());
  EXPECT_FALSE(ParseHexCode("11112222333344445").has_value());
  EXPECT_EQ(MinimalHex(0x80E01801), "80e01801");
}

}  // namespace fault_code_catalog_test
}  // namespace clusterd::faults
