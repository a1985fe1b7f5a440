// The worked timelines of fault-pipeline.md §5.7 with the shipped configuration.
#include "engine_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::faults {
namespace timeline_test {

using model::FaultLevel;
using namespace testing;

constexpr int kNpu = 3;

class RoceTimeline : public ::testing::Test {
 protected:
  RoceTimeline() : engine_(Options(), ShippedPolicy(), kT0) {}

  // Runs a cycle at every deadline the engine asks for up to `until`, then one at `until`.
  CycleResult RunUntil(int64_t until) {
    CycleResult all;
    for (auto d = engine_.NextDeadlineMs(); d.has_value() && *d <= until;
         d = engine_.NextDeadlineMs()) {
      CycleResult r = engine_.RunCycle(std::max(*d, last_));
      last_ = std::max(*d, last_);
      all.released.insert(all.released.end(), r.released.begin(), r.released.end());
    }
    CycleResult r = engine_.RunCycle(until);
    last_ = until;
    all.released.insert(all.released.end(), r.released.begin(), r.released.end());
    return all;
  }
  void Down(int64_t t) {
    RunUntil(t);
    At(engine_, kNpu, kRoceLinkDown, Assertion::kOccur, t);
  }
  void Up(int64_t t) {
    RunUntil(t);
    At(engine_, kNpu, kRoceLinkDown, Assertion::kRecover, t);
  }
  const NpuFaultState& npu() const { return engine_.npus()[kNpu]; }
  FaultLevel network_level() const { return npu().level[static_cast<int>(Plane::kNetwork)]; }

  DeviceFaultEngine engine_;
  int64_t last_ = kT0;
};

TEST_F(RoceTimeline, LinkDownIsReportedAtItsOwnLevelWithoutIsolation) {
  Down(kT0);
  EXPECT_EQ(network_level(), FaultLevel::kNotHandleFault);
  EXPECT_TRUE(npu().network_healthy);
  EXPECT_TRUE(npu().chip_healthy);
  const auto faults = Faults(engine_);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_type, "CardNetworkUnhealthy");
  EXPECT_EQ(faults[0].npu_name, "Ascend910-3");
  EXPECT_EQ(faults[0].fault_handling, "NotHandleFault");
  EXPECT_EQ(faults[0].fault_code, "81078603");
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("81078603"),
            (model::FaultTimeAndLevel{kT0, "NotHandleFault"}));
  EXPECT_EQ(DeviceListValue(engine_, "-NetworkUnhealthy"), "");
}

TEST_F(RoceTimeline, EightSecondBlipCountsNothing) {
  Down(kT0);
  Up(kT0 + 8 * kS);
  EXPECT_TRUE(Faults(engine_).empty());
  EXPECT_EQ(network_level(), FaultLevel::kNormalNetwork);
  EXPECT_FALSE(npu().frequency.contains(kRoceLinkDown));  // only timeouts are counted
  EXPECT_TRUE(npu().reasons.empty());
  EXPECT_EQ(engine_.NextDeadlineMs(), std::nullopt);
}

TEST_F(RoceTimeline, TimeoutEscalatesToPreSeparateAndRecoveryConfirmsAfterSixtySeconds) {
  Down(kT0);
  Up(kT0 + 8 * kS);
  Down(kT0 + 100 * kS);
  EXPECT_EQ(engine_.NextDeadlineMs(), kT0 + 120 * kS + 1);

  RunUntil(kT0 + 120 * kS + 1);  // the first cycle after 120 s
  EXPECT_EQ(network_level(), FaultLevel::kPreSeparateNPU);
  EXPECT_FALSE(npu().network_healthy);
  EXPECT_TRUE(npu().chip_healthy);
  EXPECT_EQ(DeviceListValue(engine_, "-NetworkUnhealthy"), "Ascend910-3");
  EXPECT_EQ(DeviceListValue(engine_, "-Unhealthy"), "");
  EXPECT_EQ(npu().frequency.at(kRoceLinkDown).count(), 1u);
  const auto reasons = engine_.Reasons();
  ASSERT_EQ(reasons.at("Ascend910-3").size(), 1u);
  EXPECT_EQ(
      reasons.at("Ascend910-3")[0],
      (model::UpgradeFaultReason{kT0 + 120 * kS, "81078603", "PreSeparateNPU", "FaultDuration"}));

  Up(kT0 + 150 * kS);  // code gone, still timed out: the entry stays, from the reason
  EXPECT_EQ(network_level(), FaultLevel::kPreSeparateNPU);
  auto faults = Faults(engine_);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_code, "81078603");
  EXPECT_EQ(faults[0].fault_handling, "PreSeparateNPU");
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("81078603"),
            (model::FaultTimeAndLevel{kT0 + 120 * kS, "PreSeparateNPU"}));
  EXPECT_EQ(engine_.NextDeadlineMs(), kT0 + 210 * kS + 1);

  RunUntil(kT0 + 210 * kS);
  EXPECT_EQ(network_level(), FaultLevel::kPreSeparateNPU);  // exactly 60 s is not "> 60 s"
  RunUntil(kT0 + 210 * kS + 1);
  EXPECT_EQ(network_level(), FaultLevel::kNormalNetwork);
  EXPECT_TRUE(npu().network_healthy);
  EXPECT_TRUE(engine_.Reasons().empty());
  EXPECT_TRUE(Faults(engine_).empty());
  EXPECT_EQ(npu().duration.at(kRoceLinkDown).fault_alarm_time_ms(), kT0 + 210 * kS);
}

TEST_F(RoceTimeline, FifthTimeoutIn24HoursSeparatesManuallyAndReleasesAfter48Hours) {
  int64_t last_confirmed = 0;
  int64_t fifth_timeout = 0;
  for (int i = 0; i < 5; ++i) {
    const int64_t down = kT0 + i * kHour;
    Down(down);
    RunUntil(down + 21 * kS);
    if (i < 4) {
      EXPECT_EQ(network_level(), FaultLevel::kPreSeparateNPU) << i;
      EXPECT_TRUE(engine_.ManuallySeparatedNames().empty()) << i;
    }
    fifth_timeout = down + 20 * kS;
    if (i == 4) break;
    Up(down + 30 * kS);
    RunUntil(down + 91 * kS);
    EXPECT_EQ(network_level(), FaultLevel::kNormalNetwork) << i;
  }
  EXPECT_EQ(network_level(), FaultLevel::kManuallySeparateNPU);
  EXPECT_EQ(engine_.ManuallySeparatedNames(), (std::vector<std::string>{"Ascend910-3"}));
  EXPECT_FALSE(npu().chip_healthy);  // ManuallySeparateNPU isolates the NPU
  auto reasons = engine_.Reasons().at("Ascend910-3");
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[1], (model::UpgradeFaultReason{fifth_timeout, "81078603", "ManuallySeparateNPU",
                                                   "FaultFrequency"}));
  auto faults = Faults(engine_);
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].fault_type, "CardNetworkUnhealthy");
  EXPECT_EQ(faults[0].fault_handling, "ManuallySeparateNPU");
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("81078603"),
            (model::FaultTimeAndLevel{fifth_timeout, "ManuallySeparateNPU"}));
  EXPECT_EQ(faults[1].fault_type, "CardUnhealthy");
  EXPECT_EQ(faults[1].fault_handling, "ManuallySeparateNPU");
  EXPECT_EQ(faults[1].fault_code, "");

  // Link back up; recovery confirmed 60 s later; 48 h after that the reason is released.
  const int64_t up = kT0 + 4 * kHour + 40 * kS;
  Up(up);
  RunUntil(up + 61 * kS);
  last_confirmed = up + 60 * kS;
  EXPECT_EQ(engine_.Reasons().at("Ascend910-3").size(), 1u);  // duration reason gone
  EXPECT_EQ(engine_.NextDeadlineMs(), last_confirmed + 48 * kHour + 1);
  EXPECT_TRUE(RunUntil(last_confirmed + 48 * kHour).released.empty());
  const CycleResult released = RunUntil(last_confirmed + 48 * kHour + 1);
  ASSERT_EQ(released.released.size(), 1u);
  EXPECT_EQ(released.released[0].npu_name, "Ascend910-3");
  EXPECT_EQ(released.released[0].reason.upgrade_type, "FaultFrequency");
  EXPECT_TRUE(engine_.ManuallySeparatedNames().empty());
  EXPECT_TRUE(engine_.Reasons().empty());
  EXPECT_TRUE(npu().chip_healthy);
  EXPECT_TRUE(npu().network_healthy);
}

TEST_F(RoceTimeline, OldTimeoutsLeaveTheWindow) {
  for (int i = 0; i < 5; ++i) {
    const int64_t down = kT0 + i * 7 * kHour;  // 5 timeouts over 28 h
    Down(down);
    RunUntil(down + 21 * kS);
    Up(down + 30 * kS);
    RunUntil(down + 91 * kS);
  }
  EXPECT_TRUE(engine_.ManuallySeparatedNames().empty());
}

class HbmFrequencyTimeline : public ::testing::Test {
 protected:
  HbmFrequencyTimeline() : engine_(Options(), ShippedPolicy(), kT0) {}
  DeviceFaultEngine engine_;
  const NpuFaultState& npu() const { return engine_.npus()[kNpu]; }
};

TEST_F(HbmFrequencyTimeline, ThirdOccurrenceSeparatesUntilTheOperatorDeletesTheName) {
  constexpr FaultCode kCode = 0x80E18005;
  const int64_t ten = kT0 + 10 * kHour;
  At(engine_, kNpu, kCode, Assertion::kOccur, ten);
  EXPECT_EQ(npu().level[0], FaultLevel::kRestartNPU);
  EXPECT_FALSE(npu().chip_healthy);
  At(engine_, kNpu, kCode, Assertion::kRecover, ten + 60 * kS);
  EXPECT_TRUE(npu().chip_healthy);
  At(engine_, kNpu, kCode, Assertion::kOccur, ten + 4 * kHour);
  EXPECT_EQ(npu().level[0], FaultLevel::kRestartNPU);
  At(engine_, kNpu, kCode, Assertion::kRecover, ten + 4 * kHour + 60 * kS);
  EXPECT_TRUE(engine_.ManuallySeparatedNames().empty());

  const int64_t twenty = ten + 10 * kHour;
  At(engine_, kNpu, kCode, Assertion::kOccur, twenty);
  EXPECT_EQ(npu().level[0], FaultLevel::kManuallySeparateNPU);
  EXPECT_EQ(engine_.ManuallySeparatedNames(), (std::vector<std::string>{"Ascend910-3"}));
  const model::UpgradeFaultReason reason{twenty, "80e18005", "ManuallySeparateNPU",
                                         "FaultFrequency"};
  EXPECT_EQ(engine_.Reasons().at("Ascend910-3"), (std::vector<model::UpgradeFaultReason>{reason}));

  At(engine_, kNpu, kCode, Assertion::kRecover, twenty + 60 * kS);
  EXPECT_FALSE(npu().chip_healthy);  // the reason is still active
  EXPECT_EQ(DeviceListValue(engine_, "-Unhealthy"), "Ascend910-3");
  auto faults = Faults(engine_);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_code, "80E18005");
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("80E18005"),
            (model::FaultTimeAndLevel{twenty, "ManuallySeparateNPU"}));
  EXPECT_EQ(engine_.NextDeadlineMs(), std::nullopt);  // no ReleaseTimeWindow: never by time

  // Deleting a name that was never written is not an operator release.
  EXPECT_TRUE(engine_.ApplyPublishedManualList({}).empty());
  engine_.MarkPublished({"Ascend910-3"});
  const auto released = engine_.ApplyPublishedManualList({});
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].npu_name, "Ascend910-3");
  EXPECT_EQ(released[0].reason, reason);
  // Decision (docs/compatibility-node.md): the release shows in the same write, so the
  // DeviceList of that write already has the NPU healthy.
  engine_.RunCycle(twenty + 120 * kS);
  EXPECT_TRUE(engine_.ManuallySeparatedNames().empty());
  EXPECT_TRUE(engine_.Reasons().empty());
  EXPECT_TRUE(npu().chip_healthy);
  EXPECT_EQ(DeviceListValue(engine_, "-Unhealthy"), "");
  EXPECT_TRUE(Faults(engine_).empty());
}

}  // namespace timeline_test
}  // namespace clusterd::faults
