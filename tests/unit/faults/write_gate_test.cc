#include "faults/write_gate.h"

#include "gtest/gtest.h"

namespace clusterd::faults {
namespace write_gate_test {

TEST(StripFaultTimes, RemovesEveryTimeWithItsComma) {
  EXPECT_EQ(
      StripFaultTimes(
          R"({"a":{"fault_time":1718000000123,"fault_level":"X"},"b":{"fault_time":5,"fault_level":"Y"}})"),
      R"({"a":{"fault_level":"X"},"b":{"fault_level":"Y"}})");
  EXPECT_EQ(StripFaultTimes(R"("fault_time":,"fault_time":12})"),
            R"("fault_time":,"fault_time":12})");
  EXPECT_EQ(StripFaultTimes(""), "");
}

TEST(Fingerprint, TimesAndSwitchUpdateTimeDoNotCount) {
  model::SwitchInfo s1;
  s1.fault_code = std::vector<std::string>{"b", "a"};
  s1.fault_level = "NotHandle";
  s1.node_status = "Healthy";
  s1.update_time = 1;
  s1.fault_time_and_level_map = model::FaultTimeAndLevelMap{{"x", {1, "NotHandle"}}};
  model::SwitchInfo s2 = s1;
  s2.fault_code = std::vector<std::string>{"a", "b"};
  s2.update_time = 2;
  s2.fault_time_and_level_map = model::FaultTimeAndLevelMap{{"x", {2, "Separate"}}};
  auto f1 = Fingerprint({{"k", R"([{"fault_time":1,"fault_level":"A"}])"}}, s1, "", "{}");
  auto f2 = Fingerprint({{"k", R"([{"fault_time":2,"fault_level":"A"}])"}}, s2, "", "{}");
  EXPECT_EQ(f1, f2);
  EXPECT_NE(f1, Fingerprint({{"k", R"([{"fault_time":1,"fault_level":"B"}])"}}, s1, "", "{}"));
  EXPECT_NE(f1, Fingerprint({{"k", R"([{"fault_time":1,"fault_level":"A"}])"}}, s1, "n", "{}"));
}

TEST(NextWriteMs, FirstAtOnceChangedAfterOneSecondUnchangedAfterFiveMinutes) {
  EXPECT_EQ(NextWriteMs(false, std::nullopt, kWriteSpacingMs, kDeviceInfoRefreshMs, 100), 100);
  EXPECT_EQ(NextWriteMs(true, 1000, kWriteSpacingMs, kDeviceInfoRefreshMs, 1500), 2000);
  EXPECT_EQ(NextWriteMs(true, 1000, kWriteSpacingMs, kDeviceInfoRefreshMs, 9000), 9000);
  EXPECT_EQ(NextWriteMs(false, 1000, kWriteSpacingMs, kDeviceInfoRefreshMs, 9000), 301000);
}

TEST(SameNodeInfo, OrderInsensitive) {
  model::NodeInfo a;
  a.node_status = "UnHealthy";
  a.fault_dev_list = {{"CPU", 0, {"A", "B"}, "SeparateFault"}, {"PSU", 1, {"C"}, "SeparateFault"}};
  model::NodeInfo b = a;
  std::swap(b.fault_dev_list[0], b.fault_dev_list[1]);
  b.fault_dev_list[1].fault_code = {"B", "A"};
  EXPECT_TRUE(SameNodeInfo(a, b));
  b.fault_dev_list[0].fault_level = "PreSeparateFault";
  EXPECT_FALSE(SameNodeInfo(a, b));
}

}  // namespace write_gate_test
}  // namespace clusterd::faults
