// DeviceFaultEngine behaviour beyond the §5.7 timelines: intake, levels, health, special rules,
// reloads and restarts.
#include "engine_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::faults {
namespace engine_test {

using model::FaultLevel;
using namespace testing;

constexpr FaultCode kUce = 0x80E01801;          // RestartBusiness, frequency 2/24h
constexpr FaultCode kNotHandle = 0x80E21007;    // NotHandleFault
constexpr FaultCode kSeparate = 0xA2301001;     // SeparateNPU
constexpr FaultCode kPreSeparate = 0x80CB8006;  // PreSeparateNPU in the test catalogue below
constexpr FaultCode kUnknown = 0x12345678;

TEST(DeviceFaultEngine, NoticeIsReportedInOneCycleThenDropped) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 1, kNotHandle, Assertion::kOnce, kT0);
  ASSERT_EQ(Faults(engine).size(), 1u);
  EXPECT_EQ(engine.NextDeadlineMs(), kT0);  // a cycle is due to drop it
  engine.RunCycle(kT0 + kS);
  EXPECT_TRUE(Faults(engine).empty());
  EXPECT_EQ(engine.NextDeadlineMs(), std::nullopt);
}

TEST(DeviceFaultEngine, OccurAndRecoverWithinOneCycleAreReportedOnce) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  engine.Submit(Event(2, kSeparate, Assertion::kOccur, kT0));
  engine.Submit(Event(2, kSeparate, Assertion::kRecover, kT0 + 100));
  engine.RunCycle(kT0 + 500);
  EXPECT_FALSE(engine.npus()[2].chip_healthy);
  ASSERT_EQ(Faults(engine).size(), 1u);
  engine.RunCycle(kT0 + 1500);
  EXPECT_TRUE(engine.npus()[2].chip_healthy);
  EXPECT_TRUE(Faults(engine).empty());
}

TEST(DeviceFaultEngine, RecoverThenOccurWithinOneCycleKeepsTheCode) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 2, kSeparate, Assertion::kOccur, kT0);
  engine.Submit(Event(2, kSeparate, Assertion::kOccur, kT0 + 2 * kS));
  engine.Submit(Event(2, kSeparate, Assertion::kRecover, kT0 + kS));
  engine.RunCycle(kT0 + 3 * kS);
  engine.RunCycle(kT0 + 4 * kS);
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("A2301001").fault_time, kT0 + 2 * kS);
}

TEST(DeviceFaultEngine, CodesKeepArrivalOrderAndEarliestTime) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 0, kSeparate, Assertion::kOccur, kT0);
  At(engine, 0, kNotHandle, Assertion::kOccur, kT0 + kS);
  At(engine, 0, kSeparate, Assertion::kOccur, kT0 + 2 * kS);  // repeated occur: time kept
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_code, "A2301001,80E21007");
  EXPECT_EQ(faults[0].fault_handling, "SeparateNPU");
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("A2301001"),
            (model::FaultTimeAndLevel{kT0, "SeparateNPU"}));
  // Per code: its own level (escalations aside), not the NPU's.
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("80E21007"),
            (model::FaultTimeAndLevel{kT0 + kS, "NotHandleFault"}));
}

TEST(DeviceFaultEngine, UnknownSevereCodeIsNotMaskedByAKnownMinorOne) {
  // Decision (docs/compatibility-node.md): §3.2 step 2 would give NotHandleFault here.
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 4, kNotHandle, Assertion::kOccur, kT0);
  engine.Submit(Event(4, kUnknown, Assertion::kOccur, kT0, /*severity=*/3u));
  engine.RunCycle(kT0);
  EXPECT_EQ(engine.npus()[4].level[0], FaultLevel::kSeparateNPU);
  EXPECT_FALSE(engine.npus()[4].chip_healthy);
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("12345678").fault_level, "SeparateNPU");
}

TEST(DeviceFaultEngine, UnknownMinorCodeIsNotHandled) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  engine.Submit(Event(4, kUnknown, Assertion::kOccur, kT0, /*severity=*/1u));
  engine.RunCycle(kT0);
  EXPECT_EQ(engine.npus()[4].level[0], FaultLevel::kNotHandleFault);
  EXPECT_TRUE(engine.npus()[4].chip_healthy);
  // Without a severity (a script line that gives none) it is unknown, hence SeparateNPU.
  At(engine, 5, kUnknown, Assertion::kOccur, kT0);
  EXPECT_EQ(engine.npus()[5].level[0], FaultLevel::kSeparateNPU);
}

TEST(DeviceFaultEngine, ResetFinishedIsNeverAFault) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  const CycleResult r = At(engine, 0, kResetFinished, Assertion::kOccur, kT0);
  EXPECT_EQ(r.stats.events_ignored, 1);
  EXPECT_TRUE(Faults(engine).empty());
}

TEST(DeviceFaultEngine, UnknownNpuIsRejectedAtIntake) {
  DeviceFaultEngine engine(Options(8), ShippedPolicy(), kT0);
  EXPECT_FALSE(engine.Submit(Event(8, kUce, Assertion::kOccur, kT0)));
}

TEST(DeviceFaultEngine, PreSeparateIsHealthyOnlyWhileInUse) {
  PolicyIssues issues;
  auto policy = std::make_shared<FaultPolicy>(*ShippedPolicy());
  policy->codes = *FaultCodeCatalog::Parse(R"({"PreSeparateNPUCodes":["80CB8006"],
                                               "FreeRestartNPUCodes":["80CB8007"]})",
                                           &issues);
  DeviceEngineOptions options = Options();
  options.grace_tolerance = true;
  DeviceFaultEngine engine(options, policy, kT0);
  engine.Submit(Event(1, kPreSeparate, Assertion::kOccur, kT0));
  engine.Submit(Event(2, 0x80CB8007, Assertion::kOccur, kT0));
  engine.RunCycle(kT0);
  EXPECT_FALSE(engine.npus()[1].chip_healthy);
  EXPECT_FALSE(engine.npus()[2].chip_healthy);
  engine.SetNpusInUse({1, 2});
  engine.RunCycle(kT0 + kS);
  EXPECT_TRUE(engine.npus()[1].chip_healthy);
  EXPECT_TRUE(engine.npus()[2].chip_healthy);
  // In use and healthy: neither available nor unhealthy.
  EXPECT_EQ(DeviceListValue(engine, ""),
            "Ascend910-0,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7");
  EXPECT_EQ(DeviceListValue(engine, "-Unhealthy"), "");
}

TEST(DeviceFaultEngine, NameListsAreSortedAsStrings) {
  DeviceFaultEngine engine(Options(16), ShippedPolicy(), kT0);
  At(engine, 10, kSeparate, Assertion::kOccur, kT0);
  At(engine, 2, kSeparate, Assertion::kOccur, kT0);
  EXPECT_EQ(DeviceListValue(engine, "-Unhealthy"), "Ascend910-10,Ascend910-2");
  // The fault list follows enumeration order.
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].npu_name, "Ascend910-2");
}

TEST(DeviceFaultEngine, Ascend310HasNoParameterPlaneAndTheQuirkyFaultKey) {
  DeviceFaultEngine engine(Options(4, "Ascend310"), ShippedPolicy(), kT0);
  const CycleResult r = At(engine, 0, kRoceLinkDown, Assertion::kOccur, kT0);
  EXPECT_EQ(r.stats.events_dropped, 1);
  At(engine, 1, kSeparate, Assertion::kOccur, kT0);
  const auto list = BuildDeviceList(engine);
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list.at("huawei.com/Ascend310"), "Ascend310-0,Ascend310-2,Ascend310-3");
  EXPECT_EQ(list.at("huawei.com/Ascend310-Unhealthy"), "Ascend310-1");
  EXPECT_TRUE(list.contains("huawei.com/Ascend310P-Fault"));
}

TEST(DeviceFaultEngine, SecondUceIn24HoursSeparatesManually) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 3, kUce, Assertion::kOccur, kT0);
  At(engine, 3, kUce, Assertion::kRecover, kT0 + kS);
  EXPECT_TRUE(engine.ManuallySeparatedNames().empty());
  At(engine, 3, kUce, Assertion::kOccur, kT0 + kHour);
  EXPECT_EQ(engine.ManuallySeparatedNames(), (std::vector<std::string>{"Ascend910-3"}));
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_handling, "ManuallySeparateNPU");
  EXPECT_EQ(faults[0].fault_code, "80E01801");
}

TEST(DeviceFaultEngine, EscalationShowsOnEveryCodeOfThePlane) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 3, kUce, Assertion::kOccur, kT0);
  At(engine, 3, kUce, Assertion::kRecover, kT0 + kS);
  At(engine, 3, kNotHandle, Assertion::kOccur, kT0 + 2 * kS);
  At(engine, 3, kUce, Assertion::kOccur, kT0 + 3 * kS);
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_code, "80E21007,80E01801");
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("80E21007"),
            (model::FaultTimeAndLevel{kT0 + 2 * kS, "ManuallySeparateNPU"}));
  EXPECT_EQ(faults[0].fault_time_and_level_map.at("80E01801"),
            (model::FaultTimeAndLevel{kT0 + 3 * kS, "ManuallySeparateNPU"}));
}

TEST(DeviceFaultEngine, FrequencyReleaseAfterTheReleaseWindow) {
  const std::string custom = R"({"FaultFrequency":[{"EventId":["A2301001"],"TimeWindow":600,
      "Times":2,"FaultHandling":"SeparateNPU","ReleaseTimeWindow":120}]})";
  DeviceFaultEngine engine(Options(), ShippedPolicy(custom), kT0);
  At(engine, 0, kSeparate, Assertion::kOnce, kT0);
  At(engine, 0, kSeparate, Assertion::kOnce, kT0 + 10 * kS);
  ASSERT_EQ(engine.Reasons().at("Ascend910-0").size(), 1u);
  EXPECT_TRUE(engine.ManuallySeparatedNames().empty());
  engine.RunCycle(kT0 + 11 * kS);
  EXPECT_FALSE(engine.npus()[0].chip_healthy);  // escalated level outlives the notice
  EXPECT_EQ(engine.NextDeadlineMs(), kT0 + 130 * kS + 1);
  EXPECT_TRUE(engine.RunCycle(kT0 + 130 * kS).released.empty());
  EXPECT_EQ(engine.RunCycle(kT0 + 130 * kS + 1).released.size(), 1u);
  EXPECT_TRUE(engine.npus()[0].chip_healthy);
}

TEST(DeviceFaultEngine, HbmRuleDiscardsAccompanyingBusErrors) {
  const std::string custom = R"({"FaultDuration":[{"EventId":["80E01801"],"FaultTimeout":30,
      "FaultHandling":"SeparateNPU"}]})";
  DeviceFaultEngine engine(Options(), ShippedPolicy(custom), kT0);
  engine.Submit(Event(0, kAicBus, Assertion::kOccur, kT0 + 2 * kS));
  engine.Submit(Event(0, kHbmMultiBit, Assertion::kOccur, kT0));
  engine.Submit(Event(1, kAivBus, Assertion::kOccur, kT0));  // no UCE on NPU 1
  CycleResult r = engine.RunCycle(kT0 + 3 * kS);
  EXPECT_EQ(r.stats.bus_events_filtered, 1);
  EXPECT_EQ(Faults(engine).size(), 1u);  // NPU 1's event is held for up to 5 s
  EXPECT_EQ(engine.NextDeadlineMs(), kT0 + 5 * kS + 1);
  engine.RunCycle(kT0 + 5 * kS + 1);
  auto faults = Faults(engine);
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[1].npu_name, "Ascend910-1");
  EXPECT_EQ(faults[1].fault_code, "80CB8009");
}

TEST(DeviceFaultEngine, WithoutTheHbmDurationEntryBusErrorsPassAtOnce) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  engine.Submit(Event(0, kHbmMultiBit, Assertion::kOccur, kT0));
  engine.Submit(Event(0, kAicBus, Assertion::kOccur, kT0 + kS));
  engine.RunCycle(kT0 + kS);
  EXPECT_EQ(Faults(engine)[0].fault_code, "80E01801,80C98009");
}

TEST(DeviceFaultEngine, PolicyReloadRelevelsOrDropsReasonsButKeepsManualSeparation) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  At(engine, 3, kUce, Assertion::kOccur, kT0);
  At(engine, 3, kUce, Assertion::kOccur, kT0 + kS);
  At(engine, 3, kUce, Assertion::kRecover, kT0 + 2 * kS);
  ASSERT_EQ(engine.ManuallySeparatedNames().size(), 1u);

  // The entry now escalates to SeparateNPU with a release window: the level follows.
  engine.SetPolicy(ShippedPolicy(R"({"FaultFrequency":[{"EventId":["80E01801"],"TimeWindow":600,
      "Times":2,"FaultHandling":"SeparateNPU","ReleaseTimeWindow":600}]})"));
  ASSERT_EQ(engine.Reasons().at("Ascend910-3").size(), 1u);
  EXPECT_EQ(engine.Reasons().at("Ascend910-3")[0].fault_level, "SeparateNPU");
  EXPECT_EQ(engine.Reasons().at("Ascend910-3")[0].upgrade_time, kT0 + kS);

  // The entry is removed: the reason goes, the NPU stays manually separated.
  engine.SetPolicy(ShippedPolicy(R"({})"));
  EXPECT_TRUE(engine.Reasons().empty());
  engine.RunCycle(kT0 + 3 * kS);
  EXPECT_EQ(engine.ManuallySeparatedNames(), (std::vector<std::string>{"Ascend910-3"}));
  EXPECT_FALSE(engine.npus()[3].chip_healthy);
}

TEST(DeviceFaultEngine, RestoreFromTheConfigMapAutofillsAndDropsStaleReasons) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  model::UpgradeFaultReasons loaded;
  loaded["Ascend910-1"] = {{kT0 - kHour, "80e18005", "ManuallySeparateNPU", "FaultFrequency"}};
  loaded["Ascend910-2"] = {{kT0 - kHour, "80e18005", "ManuallySeparateNPU", "FaultFrequency"}};
  loaded["Ascend910-4"] = {{kT0 - kS, "81078603", "PreSeparateNPU", "FaultDuration"}};
  loaded["Ascend910-99"] = {{kT0 - kS, "81078603", "PreSeparateNPU", "FaultDuration"}};
  engine.Restore({"Ascend910-1", "Ascend910-5", "Ascend910-99"}, loaded, kT0);
  engine.RunCycle(kT0);

  EXPECT_EQ(engine.ManuallySeparatedNames(),
            (std::vector<std::string>{"Ascend910-1", "Ascend910-5"}));
  const auto reasons = engine.Reasons();
  EXPECT_EQ(reasons.at("Ascend910-1")[0].fault_code, "80e18005");
  EXPECT_FALSE(reasons.contains("Ascend910-2"));  // MS reason of an NPU no longer listed
  EXPECT_EQ(reasons.at("Ascend910-5")[0],
            (model::UpgradeFaultReason{kT0, "AutofillFaultCode", "ManuallySeparateNPU",
                                       "FaultAutofill"}));
  EXPECT_EQ(engine.npus()[4].level[1], FaultLevel::kPreSeparateNPU);
  // The restored duration reason recovers after RecoverTimeout unless the link goes down again.
  engine.RunCycle(kT0 + 60 * kS + 1);
  EXPECT_EQ(engine.npus()[4].level[1], FaultLevel::kNormalNetwork);
  // Autofill reasons go after the largest ReleaseTimeWindow (48 h shipped).
  EXPECT_EQ(engine.NextDeadlineMs(), kT0 + 48 * kHour + 1);
  const CycleResult r = engine.RunCycle(kT0 + 48 * kHour + 1);
  ASSERT_EQ(r.released.size(), 1u);
  EXPECT_EQ(r.released[0].npu_name, "Ascend910-5");
  EXPECT_EQ(engine.ManuallySeparatedNames(), (std::vector<std::string>{"Ascend910-1"}));
}

TEST(DeviceFaultEngine, ManualNamesAddedByHandAreIgnored) {
  DeviceFaultEngine engine(Options(), ShippedPolicy(), kT0);
  EXPECT_TRUE(engine.ApplyPublishedManualList({"Ascend910-2"}).empty());
  engine.RunCycle(kT0);
  EXPECT_TRUE(engine.ManuallySeparatedNames().empty());
}

}  // namespace engine_test
}  // namespace clusterd::faults
