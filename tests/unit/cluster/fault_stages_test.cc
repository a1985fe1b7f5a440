// The processors of fault-pipeline.md §7.3, one at a time, and their order (fault_pipeline.h).
#include "cluster/fault_stages.h"

#include "cluster/fault_pipeline.h"
#include "fault_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace fault_stages_test {

using testing::Fault;
using testing::Record;

constexpr int64_t kNow = 1718000100000;

// ---- "add fault" / "delete fault" ----

TEST(FaultRecord, AddFaultMovesNpuFromAvailableToUnhealthyUnlessBenign) {
  DeviceRecord r = Record();
  EXPECT_TRUE(AddFault(r, Fault("Ascend910-1", "A", "SeparateNPU")));
  EXPECT_FALSE(AddFault(r, Fault("Ascend910-1", "A", "SeparateNPU")));  // identical
  EXPECT_TRUE(AddFault(r, Fault("Ascend910-2", "B", "SubHealthFault")));
  EXPECT_TRUE(AddFault(r, Fault("Ascend910-3", "C", "PreSeparateNPU", 0, 0, "CardNetworkUnhealthy")));
  EXPECT_FALSE(SortedContains(r.available, "Ascend910-1"));
  EXPECT_TRUE(SortedContains(r.unhealthy, "Ascend910-1"));
  EXPECT_TRUE(SortedContains(r.available, "Ascend910-2"));
  EXPECT_FALSE(SortedContains(r.unhealthy, "Ascend910-2"));
  EXPECT_TRUE(SortedContains(r.network_unhealthy, "Ascend910-3"));
}

TEST(FaultRecord, DeleteFaultLeavesUnhealthyOnlyWithoutAnotherSevereFault) {
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "A", "SeparateNPU"));
  AddFault(r, Fault("Ascend910-1", "B", "RestartNPU"));
  DeleteFaultAt(r, 0);
  EXPECT_TRUE(SortedContains(r.unhealthy, "Ascend910-1"));
  DeleteFaultAt(r, 0);
  EXPECT_FALSE(SortedContains(r.unhealthy, "Ascend910-1"));
  EXPECT_FALSE(SortedContains(r.available, "Ascend910-1"));  // not returned to available
}

// ---- 1. PublicFault ----

TEST(PublicFaultStage, AddsOneFaultPerInfluencedNpuWithTimeInSeconds) {
  DeviceRecord r = Record();
  PublicFaultOnNode pf{"CCAEfault-0001", "220001001", "SeparateNPU", {0, 1}, 1741056919, 77};
  EXPECT_TRUE(ApplyPublicFaults(r, {pf}).changed);
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].fault_type, "PublicFault");
  EXPECT_EQ(r.faults[0].npu_name, "Ascend910-0");
  EXPECT_EQ(r.faults[1].npu_name, "Ascend910-1");
  EXPECT_EQ(r.faults[0].fault_time, 1741056919);
  EXPECT_EQ(r.faults[0].received_ms, 77);
  EXPECT_TRUE(SortedContains(r.unhealthy, "Ascend910-0"));
}

TEST(PublicFaultStage, SubHealthPublicFaultIsOnlyListed) {
  DeviceRecord r = Record();
  ApplyPublicFaults(r, {{"k", "010001001", "SubHealthFault", {2}, 1, 1}});
  EXPECT_EQ(r.faults.size(), 1u);
  EXPECT_TRUE(SortedContains(r.available, "Ascend910-2"));
  EXPECT_TRUE(r.unhealthy.empty());
}

// ---- 2. CustomFilter ----

TEST(CustomFilterStage, ParsesRulesWithSwitchCodesFullWidthAndDefaults) {
  auto rules = ParseCustomFilter("80e01801:30,[0x08520003,na,L2,na]：100，8C1F860B,X:abc,Y:90000", true);
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[0], (CustomFilterRule{"80E01801", 30}));
  EXPECT_EQ(rules[1], (CustomFilterRule{"[0X08520003,NA,L2,NA]", 100}));
  EXPECT_EQ(rules[2], (CustomFilterRule{"8C1F860B", 60}));
  EXPECT_EQ(rules[3], (CustomFilterRule{"X", 60}));
  EXPECT_EQ(rules[4], (CustomFilterRule{"Y", 60}));
}

TEST(CustomFilterStage, HidesAFaultWhileYoungerThanTheThresholdCodeRuleFirst) {
  FaultJobPolicy policy;
  policy.code_rules = {{"80E01801", 30}};
  policy.level_rules = {{"RestartBusiness", 100}};
  CustomFilterInput in;
  in.rules_by_npu["Ascend910-1"] = &policy;
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "80E01801", "RestartBusiness", 0, kNow - 30000));
  AddFault(r, Fault("Ascend910-1", "80C98009", "RestartBusiness", 0, kNow - 30000));
  AddFault(r, Fault("Ascend910-2", "80E01801", "RestartBusiness", 0, kNow));  // no job rule
  std::vector<NpuFault> hidden;
  StageResult s = ApplyCustomFilter(r, in, kNow, &hidden);
  EXPECT_TRUE(s.changed);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].npu_name, "Ascend910-2");
  EXPECT_EQ(hidden.size(), 2u);
  EXPECT_EQ(s.next_due_ms, kNow + 1);  // the 30 s code rule runs out first
  DeviceRecord later = Record();
  AddFault(later, Fault("Ascend910-1", "80E01801", "RestartBusiness", 0, kNow - 30001));
  EXPECT_FALSE(ApplyCustomFilter(later, in, kNow, nullptr).changed);
}

// ---- 3. UceAccompany ----

TEST(UceAccompanyStage, AicFaultWithinFiveSecondsOfUceIsDropped) {
  UceAccompanyState state;
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "80E01801", "RestartBusiness", kNow - 20000));
  AddFault(r, Fault("Ascend910-1", "80C98009", "RestartRequest", kNow - 17000));
  EXPECT_TRUE(ApplyUceAccompany(r, state, {}, kNow).changed);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].code, "80E01801");
}

TEST(UceAccompanyStage, AicFaultIsHeldForFiveSecondsThenReleased) {
  UceAccompanyState state;
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "80CB8009", "RestartRequest", kNow - 2000, kNow - 2000));
  DeviceRecord first = r;
  StageResult s = ApplyUceAccompany(first, state, {}, kNow);
  EXPECT_TRUE(first.faults.empty());
  EXPECT_EQ(s.next_due_ms, kNow + 3000);
  DeviceRecord second = r;
  EXPECT_FALSE(ApplyUceAccompany(second, state, {}, kNow + 3000).changed);
  EXPECT_EQ(second.faults.size(), 1u);
}

TEST(UceAccompanyStage, AFaultTimeAheadOfClusterdIsHeldFiveSecondsFromReceipt) {
  UceAccompanyState state;
  DeviceRecord r = Record();
  // The node's clock runs an hour ahead; clusterd received the fault 5 s ago.
  AddFault(r, Fault("Ascend910-1", "80CB8009", "RestartRequest", kNow + 3600000, kNow - 5000));
  EXPECT_FALSE(ApplyUceAccompany(r, state, {}, kNow).changed);
  EXPECT_EQ(r.faults.size(), 1u);
}

TEST(UceAccompanyStage, BusinessUceReportDropsAccompanyingFaults) {
  UceAccompanyState state;
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "80C98009", "RestartRequest", kNow - 10000));
  ApplyUceAccompany(r, state, {{"Ascend910-1", kNow - 12000}}, kNow);
  EXPECT_TRUE(r.faults.empty());
}

// ---- 4. Retry ----

TEST(RetryStage, HidesUceOnRetryJobForTenSeconds) {
  RetryInput in;
  in.retry_npus = {"Ascend910-1"};
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "80E01801", "RestartBusiness", kNow - 4000, kNow - 4000));
  StageResult s = ApplyRetry(r, in, kNow, nullptr);
  EXPECT_TRUE(r.faults.empty());
  EXPECT_EQ(s.next_due_ms, kNow + 6001);
  DeviceRecord other = Record();
  AddFault(other, Fault("Ascend910-2", "80E01801", "RestartBusiness", kNow - 4000, kNow - 4000));
  ApplyRetry(other, in, kNow, nullptr);  // not a retry job's NPU
  EXPECT_EQ(other.faults.size(), 1u);
}

TEST(RetryStage, BusinessReportKeepsHidingUntilThirtySecondsOrForeverOnceComplete) {
  RetryInput in;
  in.retry_npus = {"Ascend910-1"};
  in.reports["Ascend910-1"] = RetryReport{kNow - 25000, 0, std::nullopt};
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "80E01801", "RestartBusiness", kNow - 30000, kNow - 30000));
  DeviceRecord a = r;
  ApplyRetry(a, in, kNow, nullptr);
  EXPECT_TRUE(a.faults.empty());
  DeviceRecord b = r;
  ApplyRetry(b, in, kNow + 6000, nullptr);  // report + 31 s
  EXPECT_EQ(b.faults.size(), 1u);
  in.reports["Ascend910-1"].complete_ms = kNow - 20000;
  DeviceRecord c = r;
  ApplyRetry(c, in, kNow + 600000, nullptr);
  EXPECT_TRUE(c.faults.empty());
}

TEST(RetryStage, FaultsReceivedBeforeANotRetryableReportAreNoLongerHidden) {
  RetryInput in;
  in.retry_npus = {"Ascend910-1", "Ascend910-2"};
  in.not_retryable_ms = {{"Ascend910-1", kNow - 1000}};
  DeviceRecord r = Record();
  // Young and with a fresh business report: hidden if it were not for the report.
  in.reports["Ascend910-1"] = RetryReport{kNow - 2000, 0, std::nullopt};
  AddFault(r, Fault("Ascend910-1", "80E01801", "RestartBusiness", kNow - 3000, kNow - 3000));
  // An HCCL retry fault of the same NPU is past retry at once: raised to RestartBusiness.
  AddFault(r, Fault("Ascend910-1", "8C1F860B", "NotHandleFault", kNow - 3000, kNow - 3000));
  // Another NPU is not concerned.
  AddFault(r, Fault("Ascend910-2", "80E01801", "RestartBusiness", kNow - 3000, kNow - 3000));
  EXPECT_TRUE(ApplyRetry(r, in, kNow, nullptr).changed);
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].npu_name, "Ascend910-1");
  EXPECT_EQ(r.faults[0].code, "80E01801");
  EXPECT_EQ(r.faults[0].level, "RestartBusiness");
  EXPECT_EQ(r.faults[1].code, "8C1F860B");
  EXPECT_EQ(r.faults[1].level, "RestartBusiness");
  // A fault received after the report is a retry fault again.
  DeviceRecord later = Record();
  AddFault(later, Fault("Ascend910-1", "80E01801", "RestartBusiness", kNow - 500, kNow - 500));
  ApplyRetry(later, in, kNow, nullptr);
  EXPECT_TRUE(later.faults.empty());
}

TEST(RetryStage, ExpiredHcclRetryIsUpgradedToRestartBusinessWithoutLinkDown) {
  RetryInput in;
  in.retry_npus = {"Ascend910-1"};
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "8C1F860B", "NotHandleFault", kNow - 60000));
  EXPECT_TRUE(ApplyRetry(r, in, kNow, nullptr).changed);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].level, "RestartBusiness");
  EXPECT_TRUE(SortedContains(r.unhealthy, "Ascend910-1"));
}

TEST(RetryStage, ExpiredHcclRetryKeepsItsLevelAndForcesTheLinkDown) {
  RetryInput in;
  in.retry_npus = {"Ascend910-1"};
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-1", "8C1F860B", "NotHandleFault", kNow - 60000));
  AddFault(r, Fault("Ascend910-1", "81078603", "NotHandleFault", kNow - 60000, 0, "CardNetworkUnhealthy"));
  std::vector<NpuFault> forced;
  ApplyRetry(r, in, kNow, &forced);
  EXPECT_EQ(r.faults[0].level, "NotHandleFault");
  ASSERT_EQ(forced.size(), 1u);
  EXPECT_EQ(forced[0].code, "81078603");
  // A switch L2 link-down younger than 180 s counts too.
  RetryInput sw = in;
  sw.switch_link_down_ms = kNow - 100000;
  DeviceRecord s = Record();
  AddFault(s, Fault("Ascend910-1", "8C1F860B", "NotHandleFault", kNow - 60000));
  ApplyRetry(s, sw, kNow, nullptr);
  EXPECT_EQ(s.faults[0].level, "NotHandleFault");
}

// ---- 5. RecoverInPlace ----

TEST(RecoverInPlaceStage, HidesYoungRestartFaultsOfAnEligiblePod) {
  RecoverInPlaceInput in;
  in.npus["Ascend910-0"] = RecoverInPlaceNpu{"job", 1, "pod-1", false, false, true};
  in.npus["Ascend910-1"] = RecoverInPlaceNpu{"job", 1, "pod-1", false, false, true};
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-0", "80E01801", "RestartBusiness", 0, kNow - 1000));
  AddFault(r, Fault("Ascend910-1", "A1", "NotHandleFault", 0, kNow - 1000));
  std::vector<InPlaceHidden> hidden;
  StageResult s = ApplyRecoverInPlace(r, in, kNow, &hidden);
  EXPECT_TRUE(s.changed);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].code, "A1");
  ASSERT_EQ(hidden.size(), 1u);
  EXPECT_EQ(hidden[0], (InPlaceHidden{"job", "Ascend910-0", "80E01801", "RestartBusiness"}));
  EXPECT_EQ(s.next_due_ms, kNow - 1000 + 60000);
}

TEST(RecoverInPlaceStage, NotEligibleWithASevereFaultOldFaultOrRankZeroVeto) {
  RecoverInPlaceInput in;
  in.npus["Ascend910-0"] = RecoverInPlaceNpu{"job", 1, "pod-1", false, false, true};
  DeviceRecord severe = Record();
  AddFault(severe, Fault("Ascend910-0", "80E01801", "RestartBusiness", 0, kNow - 1000));
  AddFault(severe, Fault("Ascend910-0", "B", "SeparateNPU", 0, kNow - 1000));
  EXPECT_FALSE(ApplyRecoverInPlace(severe, in, kNow, nullptr).changed);
  DeviceRecord old = Record();
  AddFault(old, Fault("Ascend910-0", "80E01801", "RestartBusiness", 0, kNow - 60000));
  EXPECT_FALSE(ApplyRecoverInPlace(old, in, kNow, nullptr).changed);
  DeviceRecord sub = Record();
  AddFault(sub, Fault("Ascend910-0", "80E01801", "RestartBusiness", 0, kNow - 1000));
  AddFault(sub, Fault("Ascend910-0", "S", "SubHealthFault", 0, kNow - 1000));
  EXPECT_FALSE(ApplyRecoverInPlace(sub, in, kNow, nullptr).changed);
  in.npus["Ascend910-0"].allow_sub_health = true;
  EXPECT_TRUE(ApplyRecoverInPlace(sub, in, kNow, nullptr).changed);
  in.npus["Ascend910-0"].rank0_eligible = false;
  DeviceRecord veto = Record();
  AddFault(veto, Fault("Ascend910-0", "80E01801", "RestartBusiness", 0, kNow - 1000));
  EXPECT_FALSE(ApplyRecoverInPlace(veto, in, kNow, nullptr).changed);
}

// ---- 6. StressTest ----

TEST(StressTestStage, DeletesStressCodesOnRegisteredNodesOnly) {
  DeviceRecord r = Record();
  AddFault(r, Fault("Ascend910-0", "80818C05", "SeparateNPU"));
  AddFault(r, Fault("Ascend910-0", "80818C06", "SeparateNPU"));
  AddFault(r, Fault("Ascend910-1", "80E01801", "SeparateNPU"));
  DeviceRecord off = r;
  EXPECT_FALSE(ApplyStressTest(off, false).changed);
  EXPECT_TRUE(ApplyStressTest(r, true).changed);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_FALSE(SortedContains(r.unhealthy, "Ascend910-0"));
}

// ---- 7. PreSeparate ----

TEST(PreSeparateStage, IdleNpuIsUnhealthyUsedNpuIsNot) {
  DeviceRecord r = Record();
  r.faults = {Fault("Ascend910-0", "A", "PreSeparateNPU"), Fault("Ascend910-1", "B", "PreSeparateNPU")};
  SortedErase(r.available, "Ascend910-1");
  SortedInsert(r.unhealthy, "Ascend910-1");
  EXPECT_TRUE(ApplyPreSeparate(r, {"Ascend910-1"}).changed);
  EXPECT_TRUE(SortedContains(r.unhealthy, "Ascend910-0"));
  EXPECT_FALSE(SortedContains(r.available, "Ascend910-0"));
  EXPECT_FALSE(SortedContains(r.unhealthy, "Ascend910-1"));
  EXPECT_FALSE(SortedContains(r.available, "Ascend910-1"));
}

TEST(PreSeparateStage, ParameterPlaneCodesAndOtherSevereFaultsAreLeftAlone) {
  DeviceRecord r = Record();
  r.faults = {Fault("Ascend910-0", "81078603", "PreSeparateNPU", 0, 0, "CardNetworkUnhealthy")};
  EXPECT_FALSE(ApplyPreSeparate(r, {}).changed);
  DeviceRecord both = Record();
  AddFault(both, Fault("Ascend910-1", "A", "PreSeparateNPU"));
  AddFault(both, Fault("Ascend910-1", "B", "SeparateNPU"));
  ApplyPreSeparate(both, {"Ascend910-1"});
  EXPECT_TRUE(SortedContains(both.unhealthy, "Ascend910-1"));
}

// ---- 8. IncrementFault ----

TEST(IncrementFaultStage, SubmitsNewOccurrencesOfJobNpusOnce) {
  IncrementState state;
  DeviceRecord r = Record();
  r.faults = {Fault("Ascend910-0", "A", "SeparateNPU", 0, 100), Fault("Ascend910-1", "B", "NotHandleFault", 0, 100),
              Fault("Ascend910-2", "C", "SeparateNPU", 0, 100)};
  std::map<std::string, std::string> jobs = {{"Ascend910-0", "job"}, {"Ascend910-1", "job"}};
  auto first = ApplyIncrementFault(r, state, jobs);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], (FaultOccurrence{"node-1", "Ascend910-0", "A", 100, "job"}));
  EXPECT_TRUE(ApplyIncrementFault(r, state, jobs).empty());
  r.faults[0].level = "RestartNPU";  // a level change is a new occurrence
  EXPECT_EQ(ApplyIncrementFault(r, state, jobs).size(), 1u);
}

// ---- 9. ManualFault ----

TEST(ManualFaultStage, AddsACodelessManuallySeparateFault) {
  DeviceRecord r = Record();
  EXPECT_TRUE(ApplyManualFault(r, {"Ascend910-4"}).changed);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].code, "");
  EXPECT_EQ(r.faults[0].level, "ManuallySeparateNPU");
  EXPECT_TRUE(SortedContains(r.unhealthy, "Ascend910-4"));
}

// ---- switch and node centres ----

SwitchRecord SwitchWith(const std::string& level, const std::string& status, int64_t received) {
  SwitchRecord sw;
  sw.node = "node-1";
  sw.cm_name = "mindx-dl-switchinfo-node-1";
  model::SwitchFaultEvent e;
  e.assembled_fault_code = "[0x08520003,na,L2,na]";
  e.switch_chip_id = 0;
  e.switch_port_id = 5;
  e.assertion = 1;
  sw.events = {e};
  sw.info.fault_code = std::vector<std::string>{model::RenderSwitchFaultEvent(e)};
  sw.info.fault_level = level;
  sw.info.node_status = status;
  sw.info.fault_time_and_level_map = model::FaultTimeAndLevelMap{{"[0x08520003,na,L2,na]_0_5", {1, level}}};
  sw.received_ms["[0x08520003,na,L2,na]_0_5"] = received;
  return sw;
}

TEST(SwitchStages, CustomFilterHidesYoungSwitchFaultsAndRecomputesTheStatus) {
  FaultJobPolicy p;
  p.level_rules = {{"SeparateFault", 100}};  // alias of Separate
  SwitchRecord sw = SwitchWith("Separate", "UnHealthy", kNow - 10000);
  StageResult s = ApplySwitchCustomFilter(sw, {&p}, kNow);
  EXPECT_TRUE(s.changed);
  EXPECT_TRUE(sw.events.empty());
  EXPECT_TRUE(sw.info.fault_code->empty());
  EXPECT_EQ(sw.info.fault_level, "");
  EXPECT_EQ(sw.info.node_status, "Healthy");
  EXPECT_EQ(s.next_due_ms, kNow + 90001);
}

TEST(SwitchStages, LinkDownMemoryLastsThreeMinutes) {
  SwitchRecord sw = SwitchWith("SubHealthFault", "SubHealthy", kNow);
  std::optional<int64_t> memory;
  UpdateSwitchLinkDownMemory(sw, memory, kNow);
  EXPECT_EQ(memory, kNow);
  SwitchRecord none = sw;
  none.events.clear();
  UpdateSwitchLinkDownMemory(none, memory, kNow + 180000);
  EXPECT_EQ(memory, kNow);
  UpdateSwitchLinkDownMemory(none, memory, kNow + 180001);
  EXPECT_FALSE(memory.has_value());
}

TEST(SwitchStages, PreSeparateSwitchIsHealthyWhenUsedUnhealthyWhenIdle) {
  SwitchRecord used = SwitchWith("PreSeparate", "PreSeparate", kNow);
  EXPECT_TRUE(ApplySwitchPreSeparate(used, true).changed);
  EXPECT_EQ(used.info.node_status, "Healthy");
  SwitchRecord idle = SwitchWith("PreSeparate", "PreSeparate", kNow);
  ApplySwitchPreSeparate(idle, false);
  EXPECT_EQ(idle.info.node_status, "UnHealthy");
  SwitchRecord sep = SwitchWith("Separate", "UnHealthy", kNow);
  EXPECT_FALSE(ApplySwitchPreSeparate(sep, true).changed);
}

TEST(NodeStages, PreSeparateNodeFollowsUse) {
  NodeRecord n;
  n.info.fault_dev_list = {model::FaultDev{"CPU", 0, {"0000001D"}, "PreSeparateFault"}};
  n.info.node_status = "PreSeparate";
  EXPECT_EQ(RunNodeCycle(n, true).info.node_status, "Healthy");
  EXPECT_EQ(RunNodeCycle(n, false).info.node_status, "UnHealthy");
  n.info.fault_dev_list.push_back(model::FaultDev{"PSU", 1, {"2C000031"}, "SeparateFault"});
  EXPECT_EQ(RunNodeCycle(n, true).info.node_status, "PreSeparate");
}

// ---- the whole device cycle ----

TEST(DevicePipeline, RunsTheStagesInOrderAndBumpsUpdateTime) {
  DeviceRecord original = Record();
  AddFault(original, Fault("Ascend910-1", "80C98009", "RestartRequest", kNow - 1000, kNow - 1000));
  DeviceCycleInput in;
  in.now_ms = kNow;
  in.public_faults = {{"k", "220001001", "SeparateNPU", {5}, 1741056919, kNow}};
  in.manual_separation_enabled = true;
  in.manual_npus = {"Ascend910-6"};
  in.job_of_npu = {{"Ascend910-5", "job"}};
  DeviceCycleState state;
  DeviceCycleOutput out = RunDeviceCycle(original, state, in);
  // The AIC fault is held, the public fault added, the manual fault added.
  ASSERT_EQ(out.record.faults.size(), 2u);
  EXPECT_EQ(out.record.faults[0].fault_type, "PublicFault");
  EXPECT_EQ(out.record.faults[1].level, "ManuallySeparateNPU");
  EXPECT_EQ(out.record.update_time_s, kNow / 1000);
  EXPECT_EQ(out.next_due_ms, kNow + 4000);
  // The public fault's NPU is used by a job: one occurrence for manual separation.
  ASSERT_EQ(out.occurrences.size(), 1u);
  EXPECT_EQ(out.occurrences[0].npu_name, "Ascend910-5");
  // The original record is untouched (every cycle starts from a copy, §7.2).
  EXPECT_EQ(original.faults.size(), 1u);
}

TEST(DevicePipeline, UntouchedRecordKeepsItsUpdateTime) {
  DeviceRecord original = Record();
  AddFault(original, Fault("Ascend910-1", "80E01801", "RestartBusiness"));
  DeviceCycleState state;
  DeviceCycleInput in;
  in.now_ms = kNow;
  DeviceCycleOutput out = RunDeviceCycle(original, state, in);
  EXPECT_EQ(out.record, original);
  EXPECT_FALSE(out.next_due_ms.has_value());
}

}  // namespace fault_stages_test
}  // namespace clusterd::cluster
