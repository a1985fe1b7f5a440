#include "faults/fault_customization.h"

#include "gtest/gtest.h"
#include "shipped_policy.h"

namespace clusterd::faults {
namespace fault_customization_test {

using model::FaultLevel;

FaultCustomization ParseOk(const std::string& text, PolicyIssues* issues) {
  auto parsed = FaultCustomization::Parse(text, issues);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : FaultCustomization();
}

TEST(FaultCustomization, ShippedFile) {
  PolicyIssues issues;
  auto c = ParseOk(testing::ReadDataFile("faultCustomization.json"), &issues);
  EXPECT_TRUE(issues.empty());
  EXPECT_EQ(c.grace_tolerance(), GraceTolerance{});
  EXPECT_EQ(c.frequencies().size(), 43u);  // 41 + 80E18005 + 81078603
  const FrequencyPolicy* uce = c.Frequency(0x80E01801);
  ASSERT_NE(uce, nullptr);
  EXPECT_EQ(uce->times, 2);
  EXPECT_EQ(uce->time_window_ms, 86400000);
  EXPECT_EQ(uce->handling, FaultLevel::kManuallySeparateNPU);
  EXPECT_FALSE(uce->release_window_ms.has_value());
  const FrequencyPolicy* roce = c.Frequency(0x81078603);
  ASSERT_NE(roce, nullptr);
  EXPECT_EQ(roce->release_window_ms, 172800000);
  const DurationPolicy* roce_duration = c.Duration(0x81078603);
  ASSERT_NE(roce_duration, nullptr);
  EXPECT_EQ(roce_duration->fault_timeout_ms, 20000);
  EXPECT_EQ(roce_duration->recover_timeout_ms, 60000);
  EXPECT_EQ(roce_duration->handling, FaultLevel::kPreSeparateNPU);
  // Not shipped, not implied (§5.3).
  EXPECT_EQ(c.Duration(0x80E01801), nullptr);
  EXPECT_EQ(c.MaxReleaseWindowMs(), 172800000);
}

TEST(FaultCustomization, GraceToleranceFieldsDefaultIndependently) {
  PolicyIssues issues;
  auto c = ParseOk(R"({"GraceTolerance":{"WaitProcessReadCMTime":91,"WaitDeviceResetTime":60,
                                         "WaitFaultSelfHealingTime":0}})",
                   &issues);
  EXPECT_EQ(c.grace_tolerance().wait_process_read_cm_s, 30);
  EXPECT_EQ(c.grace_tolerance().wait_device_reset_s, 60);
  EXPECT_EQ(c.grace_tolerance().wait_fault_self_healing_s, 15);
  ASSERT_EQ(issues.size(), 1u);  // 0 means "use the default" silently
  EXPECT_EQ(issues[0].kind, "field_defaulted");
}

TEST(FaultCustomization, FrequencyRangeErrorsDropTheEntry) {
  PolicyIssues issues;
  auto c = ParseOk(R"({"FaultFrequency":[
      {"EventId":[],"TimeWindow":60,"Times":1,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["A1"],"TimeWindow":59,"Times":1,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["A2"],"TimeWindow":864001,"Times":1,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["A3"],"TimeWindow":60,"Times":1,"FaultHandling":"SeparateNPU","ReleaseTimeWindow":59},
      {"EventId":["A4"],"TimeWindow":60,"Times":0,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["A5"],"TimeWindow":60,"Times":101,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["A6"],"TimeWindow":60,"Times":1,"FaultHandling":"SeparateNPU"},
      {"EventId":["A7"],"TimeWindow":60,"Times":1,"FaultHandling":"Reboot","ReleaseTimeWindow":60},
      {"EventId":["A8"],"TimeWindow":60,"Times":1,"FaultHandling":"SeparateNPU","ReleaseTimeWindow":4294967297},
      {"EventId":["b9"],"TimeWindow":864000,"Times":100,"FaultHandling":"SeparateNPU","ReleaseTimeWindow":4294967296}
    ]})",
                   &issues);
  EXPECT_EQ(issues.size(), 9u);
  for (const PolicyIssue& issue : issues) EXPECT_EQ(issue.kind, "entry_ignored") << issue.message;
  ASSERT_EQ(c.frequencies().size(), 1u);
  const FrequencyPolicy* p = c.Frequency(0xB9);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->spelling, "b9");
  EXPECT_EQ(p->release_window_ms, int64_t{4294967296} * 1000);
}

TEST(FaultCustomization, DuplicateIdsKeepTheFirstValidOccurrence) {
  PolicyIssues issues;
  auto c = ParseOk(R"({"FaultFrequency":[
      {"EventId":["80E18005"],"TimeWindow":60,"Times":0,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["80e18005"],"TimeWindow":100,"Times":3,"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":["80E18005"],"TimeWindow":200,"Times":4,"FaultHandling":"ManuallySeparateNPU"}]})",
                   &issues);
  ASSERT_NE(c.Frequency(0x80E18005), nullptr);
  EXPECT_EQ(c.Frequency(0x80E18005)->times, 3);
  EXPECT_EQ(issues.size(), 2u);
}

TEST(FaultCustomization, DurationRulesAndDefaults) {
  PolicyIssues issues;
  auto c = ParseOk(R"({"FaultDuration":[
      {"EventId":["80E01801"],"FaultHandling":"SeparateNPU"},
      {"EventId":["1"],"FaultTimeout":601,"FaultHandling":"SeparateNPU"},
      {"EventId":["2"],"RecoverTimeout":86401,"FaultHandling":"SeparateNPU"},
      {"EventId":["3"],"FaultHandling":"ManuallySeparateNPU"},
      {"EventId":[],"FaultHandling":"SeparateNPU"}]})",
                   &issues);
  EXPECT_EQ(issues.size(), 4u);
  const DurationPolicy* p = c.Duration(0x80E01801);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->fault_timeout_ms, 0);  // missing numbers are 0: no implicit 30 s
  EXPECT_EQ(p->recover_timeout_ms, 0);
}

TEST(FaultCustomization, WrongTypesAreAFormatError) {
  PolicyIssues issues;
  EXPECT_FALSE(FaultCustomization::Parse(R"({"FaultFrequency":{}})", &issues).ok());
  EXPECT_FALSE(
      FaultCustomization::Parse(R"({"FaultFrequency":[{"EventId":["1"],"Times":"2"}]})", &issues)
          .ok());
  EXPECT_FALSE(FaultCustomization::Parse(R"({"FaultDuration":[{"EventId":"1"}]})", &issues).ok());
  EXPECT_FALSE(
      FaultCustomization::Parse(R"({"GraceTolerance":{"WaitDeviceResetTime":1.5}})", &issues).ok());
  EXPECT_FALSE(FaultCustomization::Parse("not json", &issues).ok());
  EXPECT_FALSE(FaultCustomization::Parse("[]", &issues).ok());
}

TEST(FaultCustomization, NonHexEventIdsAreSkipped) {
  PolicyIssues issues;
  auto c = ParseOk(R"({"FaultFrequency":[{"EventId":["xyz","80E18005"],"TimeWindow":60,"Times":1,
                        "FaultHandling":"ManuallySeparateNPU"}]})",
                   &issues);
  EXPECT_NE(c.Frequency(0x80E18005), nullptr);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, "code_skipped");
}

}  // namespace fault_customization_test
}  // namespace clusterd::faults
