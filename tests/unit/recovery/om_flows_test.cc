// §12 NIC switch, §13 stress test and §14 hot switch as states of the machine.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "recovery/om_request.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace om_flows_test {

using ::testing::ElementsAre;
using testing::Harness;
using ::testing::HasSubstr;
using testing::Hw;
using testing::MakeConfig;
using testing::MakeView;
using testing::Ranks;

std::vector<std::string> OmTexts(const Harness& h) {
  std::vector<std::string> out;
  for (const auto& m : h.All<OmMessage>()) out.push_back(m.text);
  return out;
}

NicSwitchParams Nic() { return NicSwitchParams{{8, 9}, {true, false}}; }

// ---- NIC switch ----

TEST(NicSwitch, HappyPath) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  EXPECT_EQ(h.Replies().back().code, 0);
  EXPECT_EQ(h.Replies().back().info, "switching operation was successfully distributed");
  const Signal pause = h.Signals()[0];
  EXPECT_EQ(pause.signal_type, "stopTrain");
  EXPECT_THAT(pause.actions, ElementsAre("pause_train"));
  EXPECT_EQ(pause.timeout, 0);
  EXPECT_FALSE(pause.uuid.empty());
  EXPECT_EQ(h.state(), State::kWaitReportPauseComplete);
  h.StopComplete(0);
  const auto pushes = h.All<PushSwitchRankList>();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].params, Nic());
  EXPECT_EQ(pushes[0].job_id, "J");
  EXPECT_EQ(h.state(), State::kWaitSwitchNicFinished);
  h.Apply(SwitchNicResultReplied{true, h.Ticket()});
  EXPECT_EQ(h.Replies().back().info, "reply success");
  const Signal cont = h.Signals().back();
  EXPECT_EQ(cont.change_strategy, "continue");
  EXPECT_EQ(cont.uuid, pause.uuid);
  EXPECT_EQ(h.state(), State::kWaitContinueTrain);
  h.Status(0, "continue");
  EXPECT_THAT(OmTexts(h), ElementsAre("switch nic finish"));
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_TRUE(h.job().nic_recorded);
}

TEST(NicSwitch, RefusedOutsideInit) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  EXPECT_EQ(h.Replies().back().code, 411);
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
}

TEST(NicSwitch, PauseFailureKillsTheJob) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.StopComplete(499);
  EXPECT_THAT(OmTexts(h), ElementsAre("om failed, pause train failed"));
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(NicSwitch, PauseTimeout) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.Elapse(absl::Minutes(15));
  EXPECT_THAT(OmTexts(h), ElementsAre("pause train timeout"));
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
}

TEST(NicSwitch, SwitchFailureStartsTheNormalRecovery) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.StopComplete(0);
  h.Apply(SwitchNicResultReplied{false, h.Ticket()});
  EXPECT_THAT(OmTexts(h), ElementsAre("switch nic failed, switch nic failed"));
  EXPECT_EQ(h.Signals().back().signal_type, "stopTrain");
  EXPECT_THAT(h.Signals().back().actions, ElementsAre("stop_train"));
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
}

TEST(NicSwitch, FaultReportDuringTheSwitchStartsTheNormalRecovery) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.StopComplete(0);
  h.Status(406, "");
  EXPECT_THAT(OmTexts(h), ElementsAre("switch nic failed, report error when switching nic"));
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
}

TEST(NicSwitch, PushFailureKillsTheJob) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.ack_signals = false;
  h.StopComplete(0);
  h.ack_signals = true;
  h.Apply(SignalWritten{h.All<PushSwitchRankList>().back().id, false});
  EXPECT_THAT(OmTexts(h), ElementsAre("send switch nic signal failed, please check manually"));
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
}

TEST(NicSwitch, ContinueFailure) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.StopComplete(0);
  h.Apply(SwitchNicResultReplied{true, h.Ticket()});
  h.Status(499, "continue");
  EXPECT_THAT(OmTexts(h), ElementsAre("switch nic failed, continue train failed"));
  EXPECT_EQ(h.Signals().back().signal_type, "killMaster");
}

TEST(NicSwitch, DumpBecomesExitForMindsporeAfterASwitch) {
  Harness h(MakeConfig("dump,recover", {{"framework", "mindspore"}}), MakeView(2, 8));
  h.Subscribe();
  h.Apply(SwitchNicRequested{Nic(), h.Ticket()});
  h.StopComplete(0);
  h.Apply(SwitchNicResultReplied{false, h.Ticket()});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"dump", "exit"});
  EXPECT_EQ(h.Signals().back().change_strategy, "exit");
}

TEST(NicSwitch, RequestChecks) {
  JobTopology topo;
  topo.job_known = topo.registered = topo.running = true;
  topo.nodes["n1"] = NodeTopology{0, true, {{"0", 0}, {"1", 1}}};
  topo.nodes["n2"] = NodeTopology{0, true, {{"0", 8}, {"1", 9}}};
  auto ok = CheckSwitchNicRequest(
      {{"n2", NicOps{{"1", "0"}, {true, false}}}, {"n1", NicOps{{"0"}, {true}}}}, topo);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->ranks, (std::vector<int64_t>{0, 9, 8}));
  EXPECT_EQ(ok->ops, (std::vector<bool>{true, true, false}));
  EXPECT_FALSE(CheckSwitchNicRequest({{"n3", NicOps{{"0"}, {true}}}}, topo).ok());
  EXPECT_FALSE(CheckSwitchNicRequest({{"n1", NicOps{{"0"}, {}}}}, topo).ok());
  EXPECT_FALSE(CheckSwitchNicRequest({{"n1", NicOps{{"7"}, {true}}}}, topo).ok());
  EXPECT_FALSE(CheckSwitchNicRequest({}, topo).ok());
  topo.nodes["n1"].super_pod_id = -1;
  EXPECT_THAT(CheckSwitchNicRequest({{"n1", NicOps{{"0"}, {true}}}}, topo).status().message(),
              HasSubstr("should operate in superPodID"));
  topo.running = false;
  EXPECT_FALSE(CheckSwitchNicRequest({{"n2", NicOps{{"0"}, {true}}}}, topo).ok());
}

// ---- Stress test ----

StressParams Stress() {
  return StressParams{{"n1", {{0, {0, 1}}, {1, {0, 1}}}}, {"n2", {{8, {0}}}}};
}

TEST(StressTest, HappyPath) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(StressTestRequested{Stress(), h.Ticket()});
  EXPECT_EQ(h.Replies().back().info, "stress test operation was successfully distributed");
  EXPECT_EQ(h.Signals()[0].timeout, 900);
  const std::string pause_uuid = h.Signals()[0].uuid;
  h.StopComplete(0);
  const auto push = h.All<PushStressTestParams>();
  ASSERT_EQ(push.size(), 1u);
  EXPECT_EQ(push[0].params.at(8), (std::vector<int64_t>{0}));
  EXPECT_EQ(push[0].params.at(1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(h.state(), State::kWaitStressTestFinished);
  EXPECT_EQ(h.Signals().back().signal_type, "pauseStartAgent");
  EXPECT_THAT(h.Signals().back().actions, ElementsAre("pause_start_agent"));
  EXPECT_NE(h.Signals().back().uuid, pause_uuid);
  EXPECT_EQ(h.ResetOps().back(), "notifyFaultFlushing");
  EXPECT_TRUE(h.All<IgnoreStressTestFaults>().back().ignore);
  StressResults results;
  results[0]["aic"] = {"0", "ok"};
  h.Apply(StressTestResultReplied{results, h.Ticket()});
  EXPECT_EQ(h.ResetOps().back(), "clear");
  EXPECT_THAT(OmTexts(h), ElementsAre("stress test finish, result:{\"0\":{\"rankResult\":{\"aic\":"
                                      "{\"code\":\"0\",\"result\":\"ok\"}}}}"));
  EXPECT_EQ(h.Signals()[h.Signals().size() - 2].signal_type, "continueStartAgent");
  EXPECT_EQ(h.Signals().back().change_strategy, "continue");
  h.Status(0, "continue");
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_FALSE(h.All<IgnoreStressTestFaults>().back().ignore);
}

TEST(StressTest, FaultFoundIsolatesTheNodeAndStartsRecovery) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(StressTestRequested{Stress(), h.Ticket()});
  h.StopComplete(0);
  StressResults results;
  results[8]["aic"] = {"2", "fault"};
  results[1]["p2p"] = {"3", "timeout"};
  h.Apply(StressTestResultReplied{results, h.Ticket()});
  EXPECT_THAT(OmTexts(h), ElementsAre("stress test find fault, isolate node:[n2]",
                                      "stress test timeout fault, faultRank:[1]"));
  const auto nodes = h.All<PatchNode>();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].node, "n2");
  EXPECT_EQ(nodes[0].patch["metadata"]["annotations"]["NodeHealthyStatus"], "UnHealthy");
  const Signal stop = h.Signals().back();
  EXPECT_EQ(stop.signal_type, "stopTrain");
  EXPECT_EQ(stop.fault_ranks, (std::vector<FaultRank>{{1, 1}, {8, 1}}));
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
}

TEST(StressTest, FaultReportDuringTheTestCountsAsFailure) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(StressTestRequested{Stress(), h.Ticket()});
  h.StopComplete(0);
  h.Status(406, "");
  EXPECT_THAT(OmTexts(h), ElementsAre("recv fault, when stressing test"));
  const size_t clears = h.ResetOps().size();
  h.Apply(StressTestResultReplied{{}, h.Ticket()});
  EXPECT_EQ(h.ResetOps().size(), clears);  // no clear after a fault report
  EXPECT_EQ(h.Signals().back().signal_type, "stopTrain");
}

TEST(StressTest, ResultTimeout) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Apply(StressTestRequested{Stress(), h.Ticket()});
  h.StopComplete(0);
  h.Elapse(absl::Minutes(15));
  EXPECT_THAT(OmTexts(h), ElementsAre("stress test failed, report stress test timeout"));
  EXPECT_EQ(h.Signals().back().signal_type, "stopTrain");
}

TEST(StressTest, RequestChecks) {
  JobTopology topo;
  topo.job_known = topo.registered = true;  // need not be running
  topo.nodes["n1"] = NodeTopology{-1, true, {{"0", 0}, {"1", 1}}};
  topo.nodes["n2"] = NodeTopology{-1, true, {{"0", 8}}};
  auto all = CheckStressTestRequest({}, {0, 1}, topo);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->at("n1").at(1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(all->at("n2").at(8), (std::vector<int64_t>{0, 1}));
  auto one = CheckStressTestRequest({{"n2", {1}}}, {}, topo);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  EXPECT_FALSE(CheckStressTestRequest({}, {}, topo).ok());
  EXPECT_FALSE(CheckStressTestRequest({{"n2", {}}}, {}, topo).ok());
  EXPECT_FALSE(CheckStressTestRequest({{"n3", {0}}}, {}, topo).ok());
  EXPECT_FALSE(CheckStressTestRequest({}, {0, 0}, topo).ok());
  EXPECT_FALSE(CheckStressTestRequest({}, {2}, topo).ok());
  topo.registered = false;
  EXPECT_FALSE(CheckStressTestRequest({}, {0}, topo).ok());
}

// ---- Hot switch ----

JobConfig HotConfig(const std::string& framework = "pytorch") {
  return MakeConfig("recover", {{"subHealthyStrategy", "hotSwitch"}, {"framework", framework}});
}

HardwareFault SubHealth(int64_t rank, int64_t pod) {
  return Hw(rank, pod, "80C98008", false, "SubHealthFault");
}

JobView WithBackup(bool running, bool old_pod_present = true) {
  JobView v = MakeView(3, 8);
  PodView backup;
  backup.name = "pt-1-backup";
  backup.uid = "uid-backup";
  backup.backup = true;
  backup.running = running;
  v.backup_pods.push_back(backup);
  v.pods[1].backup_new_pod_name = "pt-1-backup";
  if (!old_pod_present) v.pods.erase(1);
  return v;
}

TEST(HotSwitch, MigrationHappyPath) {
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1), SubHealth(17, 2)}, "SubHealthy");
  const Signal prepare = h.Signals()[0];
  EXPECT_EQ(prepare.signal_type, "hot-switch");
  EXPECT_THAT(prepare.actions, ElementsAre("hot switch"));
  EXPECT_EQ(prepare.fault_ranks, Ranks(8, 15));  // only the first faulty pod
  EXPECT_EQ(prepare.uuid, "");
  EXPECT_EQ(h.state(), State::kWaitNewPod);
  const auto pod_patch = h.All<PatchPod>().back();
  EXPECT_EQ(pod_patch.pod_name, "pt-1");
  EXPECT_EQ(pod_patch.patch["metadata"]["annotations"]["inHotSwitchFlow"], "true");
  EXPECT_EQ(pod_patch.patch["metadata"]["annotations"]["needOperatorOpe"], "create");
  h.View(WithBackup(true));
  EXPECT_THAT(h.Signals().back().actions, ElementsAre("new pod running"));
  EXPECT_EQ(h.state(), State::kWaitReportPauseResult);
  h.Strategies({"migration"});
  EXPECT_EQ(h.state(), State::kWaitOldPodDeleted);
  const auto old_patch = h.All<PatchPod>().back();
  EXPECT_EQ(old_patch.pod_name, "pt-1");
  EXPECT_EQ(old_patch.patch["metadata"]["annotations"]["needVolcanoOpe"], "delete");
  EXPECT_EQ(old_patch.patch["metadata"]["labels"]["fault-type"], "SubHealth");
  h.View(WithBackup(true, /*old_pod_present=*/false));
  const Signal migration = h.Signals().back();
  EXPECT_EQ(migration.change_strategy, "migration");
  EXPECT_TRUE(migration.fault_ranks.empty());
  h.Status(0, "migration");
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_EQ(h.All<PatchPod>().back().pod_name, "pt-1-backup");
  EXPECT_TRUE(
      h.All<PatchPod>().back().patch["metadata"]["annotations"]["inHotSwitchFlow"].is_null());
  EXPECT_TRUE(h.job().config.HotSwitch());
}

TEST(HotSwitch, BackupPodTimeoutStopsTheSwitchAndDowngrades) {
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  h.Elapse(absl::Seconds(60));
  EXPECT_THAT(h.Signals().back().actions, ElementsAre("stop switch"));
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_FALSE(h.job().config.HotSwitch());
  EXPECT_EQ(h.job().config.sub_health_strategy, "ignore");
}

TEST(HotSwitch, PauseResultExitStopsTheJobThroughPodZero) {
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  h.View(WithBackup(true));
  h.Strategies({"exit"});
  const auto patches = h.All<PatchPod>();
  bool rank0 = false;
  for (const auto& p : patches) {
    if (p.pod_name == "pt-0") {
      rank0 = true;
      EXPECT_EQ(p.patch["metadata"]["annotations"]["needVolcanoOpe"], "delete");
    }
  }
  EXPECT_TRUE(rank0);
  EXPECT_EQ(patches.back().pod_name, "pt-1-backup");
  EXPECT_EQ(patches.back().patch["metadata"]["annotations"]["needOperatorOpe"], "delete");
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(HotSwitch, RestartFailureCodeOtherThan406IsAFailure) {
  // Quirk 7, fixed.
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  h.View(WithBackup(true));
  h.Strategies({"migration"});
  h.View(WithBackup(true, false));
  h.Status(1, "migration");
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_FALSE(h.job().config.HotSwitch());
}

TEST(HotSwitch, OldPodNeverDeletedTimesOut) {
  // Quirk 19, fixed.
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  h.View(WithBackup(true));
  h.Strategies({"migration"});
  h.Elapse(absl::Minutes(15));
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(HotSwitch, AStaleFaultOfTheMigratedPodStartsNoSecondSwitch) {
  // Right after a migration the fault centre may still deliver the sub-health fault of the old
  // pod (a snapshot taken before its deletion): it must not start a second hot switch.
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  h.View(WithBackup(true));
  h.Strategies({"migration"});
  h.View(WithBackup(true, /*old_pod_present=*/false));
  h.Status(0, "migration");
  ASSERT_EQ(h.state(), State::kInit);
  const size_t signals = h.Signals().size();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");  // the old pod: gone
  EXPECT_EQ(h.Signals().size(), signals);
  EXPECT_EQ(h.state(), State::kInit);
  // The backup pod now holds pod rank 1 under another UID; a fault still naming the old UID is
  // stale as well.
  JobView replaced = MakeView(3, 8);
  replaced.pods[1].uid = "uid-backup";
  h.View(replaced);
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  EXPECT_EQ(h.Signals().size(), signals);
  EXPECT_TRUE(h.job().config.HotSwitch());
  // A fault of the rank's current pod does start one.
  HardwareFault current = SubHealth(9, 1);
  current.pod_uid = "uid-backup";
  h.Hardware({current}, "SubHealthy");
  ASSERT_GT(h.Signals().size(), signals);
  EXPECT_THAT(h.Signals().back().actions, ElementsAre("hot switch"));
}

TEST(HotSwitch, PodZeroOnlyIsSkipped) {
  Harness h(HotConfig(), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(2, 0)}, "SubHealthy");
  EXPECT_TRUE(h.Signals().empty());
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(HotSwitch, OtherFrameworkTurnsHotSwitchOff) {
  Harness h(HotConfig("tensorflow"), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  EXPECT_TRUE(h.Signals().empty());
  EXPECT_EQ(h.job().config.sub_health_strategy, "ignore");
}

TEST(HotSwitch, MoreThanTenFaultyPodsTurnsHotSwitchOff) {
  Harness h(HotConfig(), MakeView(12, 1));
  h.Subscribe();
  std::vector<HardwareFault> faults;
  for (int p = 1; p <= 11; ++p) faults.push_back(SubHealth(p, p));
  h.Hardware(faults, "SubHealthy");
  EXPECT_TRUE(h.Signals().empty());
  EXPECT_EQ(h.job().config.sub_health_strategy, "ignore");
}

TEST(HotSwitch, SubHealthWithoutHotSwitchIsIgnoredUnlessGraceExitDumpOnly) {
  Harness h(MakeConfig("recover"), MakeView(3, 8));
  h.Subscribe();
  h.Hardware({SubHealth(9, 1)}, "SubHealthy");
  h.Elapse(absl::Seconds(10));
  EXPECT_TRUE(h.Signals().empty());

  Harness g(MakeConfig("dump", {{"subHealthyStrategy", "graceExit"}}), MakeView(3, 8));
  g.Subscribe();
  g.Hardware({SubHealth(9, 1)}, "SubHealthy");
  g.Elapse(absl::Seconds(10));
  EXPECT_EQ(g.Signals().back().signal_type, "preExitProcess");
}

}  // namespace om_flows_test
}  // namespace clusterd::recovery
