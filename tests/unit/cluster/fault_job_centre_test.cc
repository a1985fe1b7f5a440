// The job centre of fault-pipeline.md §7.5: fault ranks with fault type 0/1/2, fault devices,
// health, relation faults and fault-code events; and the job index it reads.
#include "cluster/fault_job_centre.h"

#include <fstream>
#include <sstream>

#include "fault_test_util.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "model/pod_group_info.h"
#include "model/pod_info.h"

namespace clusterd::cluster {
namespace fault_job_centre_test {

using testing::Fault;
using testing::Record;

constexpr int64_t kNow = 1718000100000;

// 2 pods x 8 NPUs: pod 0 on node-a (ranks 0-7), pod 1 on node-b (ranks 8-15).
FaultJob TwoByEight() {
  FaultJob job;
  job.job_id = "job-1";
  job.ns = "default";
  job.name = "pt";
  job.pod_group_exists = true;
  job.devices_per_pod = 8;
  for (int p = 0; p < 2; ++p) {
    FaultJobServer s;
    s.node = p == 0 ? "node-a" : "node-b";
    s.server_id = "uid-" + std::to_string(p);
    s.pod_uid = s.server_id;
    s.host_ip = p == 0 ? "192.168.0.11" : "192.168.0.12";
    s.server_sn = "SN" + std::to_string(p);
    for (int d = 0; d < 8; ++d) s.devices.push_back(FaultJobDevice{d, p * 8 + d});
    job.servers.push_back(s);
    job.pod_uid_by_rank[p] = s.pod_uid;
    job.pods.push_back(FaultJobPod{s.pod_uid,
                                   "default",
                                   "pod-" + std::to_string(p),
                                   s.node,
                                   s.host_ip,
                                   p,
                                   {0, 1, 2, 3, 4, 5, 6, 7}});
  }
  return job;
}

struct Nodes {
  std::map<std::string, DeviceRecord> devices;
  std::map<std::string, SwitchRecord> switches;
  std::map<std::string, NodeRecord> node_records;
  std::set<std::string> not_ready;
  std::map<std::string, std::vector<InPlaceHidden>> in_place;
  std::map<std::string, std::vector<NpuFault>> hidden;
  std::map<std::string, std::vector<NpuFault>> forced;
  NodeViewFn Fn() {
    return [this](const std::string& node) {
      JobNodeView v;
      if (auto it = devices.find(node); it != devices.end()) v.device = &it->second;
      if (auto it = switches.find(node); it != switches.end()) v.switch_record = &it->second;
      if (auto it = node_records.find(node); it != node_records.end()) v.node_record = &it->second;
      v.node_ready = not_ready.count(node) == 0;
      if (auto it = in_place.find(node); it != in_place.end()) v.in_place_hidden = &it->second;
      if (auto it = hidden.find(node); it != hidden.end()) v.custom_hidden = &it->second;
      if (auto it = forced.find(node); it != forced.end()) v.force_added = &it->second;
      return v;
    };
  }
};

TEST(JobFaultRank, NpuFaultBecomesARankOfEveryLevelWithPodInfo) {
  FaultJob job = TwoByEight();
  Nodes n;
  n.devices["node-b"] = Record("node-b");
  AddFault(n.devices["node-b"], Fault("Ascend910-3", "80E01801", "RestartBusiness", 1718000000123));
  AddFault(n.devices["node-b"], Fault("Ascend910-3", "A0000001", "NotHandleFault", 5));
  auto result = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow);
  const JobFaultRanks& f = result.faults;
  ASSERT_EQ(f.ranks.size(), 2u);
  EXPECT_EQ(f.ranks[0].rank_id, 11);
  EXPECT_EQ(f.ranks[0].pod_rank, 1);
  EXPECT_EQ(f.ranks[0].pod_uid, "uid-1");
  EXPECT_EQ(f.ranks[0].code, "80E01801");
  EXPECT_EQ(f.ranks[0].level, "RestartBusiness");
  EXPECT_EQ(f.ranks[0].fault_time_ms, 1718000000123);
  EXPECT_EQ(f.ranks[0].device_id, "3");
  EXPECT_EQ(f.ranks[0].FaultType(), "1");
  EXPECT_EQ(f.ranks[1].level, "NotHandleFault");
  ASSERT_EQ(f.devices.size(), 2u);
  EXPECT_EQ(f.devices[0].device_type, "NPU");
  EXPECT_EQ(f.devices[0].host_ip, "192.168.0.12");
  EXPECT_EQ(f.health, "UnHealthy");
}

TEST(JobFaultRank, HealthIgnoresNotHandleAndPreSeparateAndCountsSubHealth) {
  FaultJob job = TwoByEight();
  Nodes n;
  n.devices["node-a"] = Record("node-a");
  AddFault(n.devices["node-a"], Fault("Ascend910-0", "A", "NotHandleFault"));
  AddFault(n.devices["node-a"], Fault("Ascend910-1", "B", "PreSeparateNPU"));
  EXPECT_EQ(ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults.health, "Healthy");
  AddFault(n.devices["node-a"], Fault("Ascend910-2", "C", "SubHealthFault"));
  EXPECT_EQ(ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults.health, "SubHealthy");
}

TEST(JobFaultRank, FreeRestartIsSkippedUnlessTheNpuIsListedUnhealthy) {
  FaultJob job = TwoByEight();
  Nodes n;
  n.devices["node-a"] = Record("node-a");
  n.devices["node-a"].faults = {Fault("Ascend910-0", "F", "FreeRestartNPU")};
  EXPECT_TRUE(ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults.ranks.empty());
  SortedInsert(n.devices["node-a"].unhealthy, "Ascend910-0");
  EXPECT_EQ(ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults.ranks.size(), 1u);
}

TEST(JobFaultRank, NotReadyNodeMakesEveryRankOfItsServerSeparate) {
  FaultJob job = TwoByEight();
  Nodes n;
  n.not_ready = {"node-a"};
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults;
  ASSERT_EQ(f.ranks.size(), 8u);
  EXPECT_EQ(f.ranks[0].level, "SeparateNPU");
  EXPECT_EQ(f.ranks[0].code, "");
  EXPECT_EQ(f.ranks[0].device_id, "");
  ASSERT_EQ(f.devices.size(), 1u);
  EXPECT_EQ(f.devices[0].device_type, "Node");
  EXPECT_EQ(f.devices[0].device_id, "-1");
}

TEST(JobFaultRank, UnhealthyNodeInfoAndSwitchGiveWholeNodeRanks) {
  FaultJob job = TwoByEight();
  Nodes n;
  NodeRecord nr;
  nr.info.fault_dev_list = {model::FaultDev{"PSU", 1, {"2C000031"}, "SeparateFault"},
                            model::FaultDev{"PSU", 2, {"2C000031"}, "SeparateFault"}};
  nr.info.node_status = "UnHealthy";
  nr.update_time_ms = 99;
  n.node_records["node-a"] = nr;
  SwitchRecord sw;
  model::SwitchFaultEvent e;
  e.assembled_fault_code = "[0x00f1fef5,155912,npu,na]";
  e.switch_port_id = 5;
  e.alarm_raised_time = 7;
  sw.events = {e};
  sw.info.fault_level = "SubHealthFault";
  sw.info.node_status = "SubHealthy";
  n.switches["node-b"] = sw;
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults;
  ASSERT_EQ(f.ranks.size(), 16u);
  EXPECT_EQ(f.ranks[0].code, "2C000031");  // de-duplicated
  EXPECT_EQ(f.ranks[0].level, "SeparateNPU");
  EXPECT_EQ(f.ranks[8].code, "[0x00f1fef5,155912,npu,na]");
  EXPECT_EQ(f.ranks[8].level, "SubHealthFault");
  // FaultDevices: two PSU entries and one switch entry.
  ASSERT_EQ(f.devices.size(), 3u);
  EXPECT_EQ(f.devices[2].device_type, "Switch");
  EXPECT_EQ(f.devices[2].switch_port_id, "5");
  EXPECT_EQ(f.devices[2].fault_time_ms, 7);
  EXPECT_EQ(f.health, "UnHealthy");
}

TEST(JobFaultRank, BusinessRetryReportGivesASyntheticStepRetryRankForTenSeconds) {
  FaultJob job = TwoByEight();
  job.policy.retry = true;
  Nodes n;
  n.devices["node-a"] = Record("node-a");  // the UCE fault is hidden by the Retry stage
  RetryBook book;
  book[{"node-a", 2}] = RetryReport{kNow - 3000, 0, std::nullopt};
  auto r = ComputeJobFaultRanks(job, n.Fn(), {}, book, kNow);
  ASSERT_EQ(r.faults.ranks.size(), 1u);
  const FaultRankEntry& rank = r.faults.ranks[0];
  EXPECT_EQ(rank.rank_id, 2);
  EXPECT_EQ(rank.code, "80E01801");
  EXPECT_EQ(rank.level, "RestartBusiness");
  EXPECT_TRUE(rank.do_step_retry);
  EXPECT_EQ(rank.FaultType(), "0");
  EXPECT_EQ(r.next_due_ms, kNow + 7000);
  book[{"node-a", 2}].type = 2;
  EXPECT_EQ(ComputeJobFaultRanks(job, n.Fn(), {}, book, kNow).faults.ranks[0].FaultType(), "2");
  EXPECT_TRUE(ComputeJobFaultRanks(job, n.Fn(), {}, book, kNow + 7000).faults.ranks.empty());
  job.policy.retry = false;
  EXPECT_TRUE(ComputeJobFaultRanks(job, n.Fn(), {}, book, kNow).faults.ranks.empty());
}

TEST(JobFaultRank, UceFaultAfterTheWindowIsStepRetryWhenTheReportWasTimely) {
  FaultJob job = TwoByEight();
  job.policy.retry = true;
  Nodes n;
  n.devices["node-a"] = Record("node-a");
  AddFault(n.devices["node-a"], Fault("Ascend910-2", "80E01801", "RestartBusiness", kNow - 40000));
  RetryBook book;
  book[{"node-a", 2}] = RetryReport{kNow - 35000, 0, std::nullopt};
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, book, kNow).faults;
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_TRUE(f.ranks[0].do_step_retry);
  EXPECT_EQ(f.ranks[0].FaultType(), "0");
}

TEST(JobFaultRank, RecoverInPlaceHiddenFaultsAreReattachedWithTheVerdict) {
  FaultJob job = TwoByEight();
  job.policy.recover_in_place = true;
  Nodes n;
  n.devices["node-b"] = Record("node-b");
  n.in_place["node-b"] = {InPlaceHidden{"job-1", "Ascend910-4", "80E01801", "RestartBusiness"}};
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults;
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].rank_id, 12);
  EXPECT_TRUE(f.ranks[0].do_restart_in_place);
  EXPECT_EQ(f.ranks[0].fault_time_ms, 0);
}

TEST(JobFaultRank, CustomFilteredFaultsOnlyReachTheFaultServiceList) {
  FaultJob job = TwoByEight();
  Nodes n;
  n.devices["node-a"] = Record("node-a");
  n.hidden["node-a"] = {Fault("Ascend910-1", "80E01801", "RestartBusiness", 5)};
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults;
  EXPECT_TRUE(f.ranks.empty());
  ASSERT_EQ(f.filtered_devices.size(), 1u);
  EXPECT_EQ(f.filtered_devices[0].device_id, "1");
  EXPECT_EQ(f.health, "Healthy");
}

TEST(JobFaultRank, JobWithoutRankTableGetsNodeInfoAndNotReadyEntriesOfItsPods) {
  FaultJob job;
  job.job_id = "infer";
  job.pods = {FaultJobPod{"p1", "default", "p1", "node-a", "10.0.0.1", std::nullopt, {}}};
  Nodes n;
  n.not_ready = {"node-a"};
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults;
  EXPECT_TRUE(f.ranks.empty());
  ASSERT_EQ(f.devices.size(), 1u);
  EXPECT_EQ(f.devices[0].server_id, "10.0.0.1");
  job.pods.push_back(
      FaultJobPod{"p2", "default", "p2", "", "", std::nullopt, {}});  // unscheduled: nothing
  EXPECT_TRUE(ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults.devices.empty());
}

// ---- RelationFault ----

RelationConfig ShippedRelationConfig() {
  auto read = [](const std::string& name) {
    std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  std::vector<std::string> problems;
  RelationConfig c = ParseRelationConfig(read("relationFaultCustomization.json"),
                                         read("faultDuration.json"), &problems);
  EXPECT_TRUE(problems.empty());
  return c;
}

TEST(RelationFault, ShippedConfigurationLoads) {
  RelationConfig c = ShippedRelationConfig();
  EXPECT_EQ(c.rules.size(), 5u);
  EXPECT_EQ(c.triggers, (std::set<std::string>{"4C1F8608", "8C1F8608", "8C1F8609", "8C1F860B"}));
  EXPECT_EQ(c.relations, (std::set<std::string>{"81078603", "[0x08520003,na,L2,na]"}));
  EXPECT_EQ(c.timeout_s.at("81078603"), 300);
}

TEST(RelationFault, BrokenFilesGiveNoRulesAndSayWhy) {
  std::vector<std::string> problems;
  RelationConfig c =
      ParseRelationConfig("{not json", "[{\"FaultCode\":\"\",\"TimeOutInterval\":1}]", &problems);
  EXPECT_TRUE(c.rules.empty());
  EXPECT_TRUE(c.timeout_s.empty());
  EXPECT_EQ(problems.size(), 2u);
}

TEST(RelationFault, LinkDownPlusHcclErrorSeparatesTheNodeAndLabelsThePod) {
  RelationConfig c = ShippedRelationConfig();
  FaultJob job = TwoByEight();
  Nodes n;
  n.devices["node-a"] = Record("node-a");
  AddFault(n.devices["node-a"], Fault("Ascend910-2", "81078603", "NotHandleFault", 1, kNow - 5000,
                                      "CardNetworkUnhealthy"));
  RelationState state;
  RelationOutput first = RunRelationFault(job, c, n.Fn(), state, kNow - 4000);
  EXPECT_TRUE(first.faults.empty());  // tracked, no trigger yet
  EXPECT_EQ(first.next_due_ms, kNow - 5000 + 300000);
  AddFault(n.devices["node-b"] = Record("node-b"),
           Fault("Ascend910-0", "8C1F860B", "NotHandleFault", 1, kNow));
  RelationOutput out = RunRelationFault(job, c, n.Fn(), state, kNow);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(out.faults[0].strategy, "Separate");
  EXPECT_EQ(out.node_strategy.at("node-a"), "Separate");
  ASSERT_EQ(out.patches.size(), 1u);
  EXPECT_EQ(out.patches[0], (PodLabelPatch{"uid-0", "Separate"}));
  auto ranks = ComputeJobFaultRanks(job, n.Fn(), out, {}, kNow).faults;
  bool found = false;
  for (const auto& r : ranks.ranks) {
    if (r.code == "81078603" && r.level == "SeparateFault") {
      found = true;
      EXPECT_EQ(r.rank_id, 2);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(ranks.health, "UnHealthy");
  // Separate leaves tracking and is taken in again; the label is not re-patched.
  RelationOutput again = RunRelationFault(job, c, n.Fn(), state, kNow + 1000);
  EXPECT_EQ(again.faults.size(), 1u);
  EXPECT_TRUE(again.patches.empty());
}

TEST(RelationFault, SeparateLabelIsNotOverwrittenBySubHealth) {
  RelationConfig c = ShippedRelationConfig();
  FaultJob job = TwoByEight();
  Nodes n;
  n.devices["node-a"] = Record("node-a");
  AddFault(n.devices["node-a"],
           Fault("Ascend910-2", "81078603", "NotHandleFault", 1, kNow, "CardNetworkUnhealthy"));
  AddFault(n.devices["node-a"], Fault("Ascend910-3", "8C1F860B", "NotHandleFault", 1, kNow));
  RelationState state;
  EXPECT_EQ(RunRelationFault(job, c, n.Fn(), state, kNow).patches.size(), 1u);
  n.devices["node-a"].faults[1].code = "8C1F8609";  // SubHealth trigger now
  RelationOutput out = RunRelationFault(job, c, n.Fn(), state, kNow + 1000);
  EXPECT_EQ(out.node_strategy.at("node-a"), "SubHealth");
  EXPECT_TRUE(out.patches.empty());
}

TEST(RelationFault, UntriggeredSwitchLinkDownDefaultsToSubHealthAfterItsTimeout) {
  RelationConfig c = ShippedRelationConfig();
  FaultJob job = TwoByEight();
  Nodes n;
  SwitchRecord sw;
  sw.info.fault_level = "SubHealthFault";
  sw.info.node_status = "SubHealthy";
  sw.info.fault_time_and_level_map =
      model::FaultTimeAndLevelMap{{"[0x08520003,na,L2,na]_0_5", {1, "SubHealthFault"}}};
  sw.received_ms["[0x08520003,na,L2,na]_0_5"] = kNow;
  n.switches["node-b"] = sw;
  RelationState state;
  EXPECT_TRUE(RunRelationFault(job, c, n.Fn(), state, kNow).faults.empty());
  RelationOutput out = RunRelationFault(job, c, n.Fn(), state, kNow + 300000);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_TRUE(out.faults[0].is_switch);
  EXPECT_EQ(out.faults[0].strategy, "SubHealth");
  // Seen: not taken in again while it persists.
  EXPECT_TRUE(RunRelationFault(job, c, n.Fn(), state, kNow + 301000).faults.empty());
}

TEST(RelationFault, FaultOlderThanTheJobGetsNoDefault) {
  RelationConfig c = ShippedRelationConfig();
  FaultJob job = TwoByEight();
  Nodes n;
  SwitchRecord sw;
  sw.info.fault_time_and_level_map =
      model::FaultTimeAndLevelMap{{"[0x08520003,na,L2,na]_0_5", {1, "SubHealthFault"}}};
  sw.received_ms["[0x08520003,na,L2,na]_0_5"] = kNow - 1000;
  n.switches["node-b"] = sw;
  RelationState state;
  RunRelationFault(job, c, n.Fn(), state, kNow);  // first sight after the fault
  EXPECT_TRUE(RunRelationFault(job, c, n.Fn(), state, kNow + 400000).faults.empty());
}

// ---- FaultCodeEvent ----

TEST(FaultCodeEvent, EventsOnlyWhenTheDigestChanges) {
  JobFaultRanks f;
  f.ranks = {FaultRankEntry{}};
  FaultDevice d;
  d.server_id = "s";
  d.server_name = "node-a";
  d.device_id = "3";
  d.code = "80E01801";
  d.level = "RestartBusiness";
  f.devices = {d, d};
  std::string digest;
  auto events = FaultCodeEvents(f, &digest, kNow);
  ASSERT_EQ(events.size(), 1u);             // de-duplicated
  EXPECT_EQ(events[0].timestamp_ms, kNow);  // time 0 -> now
  EXPECT_TRUE(FaultCodeEvents(f, &digest, kNow).empty());
  f.ranks.clear();
  f.devices[0].level = "SeparateNPU";
  EXPECT_TRUE(FaultCodeEvents(f, &digest, kNow).empty());  // no ranks, no events
}

// ---- the job index ----

// A running pod of `job` on `node` holding `npus` (physical ids).
model::PodInfo RunningPod(const std::string& uid, const std::string& node, std::vector<int> npus,
                          int rank) {
  model::PodInfo pod;
  pod.uid = uid;
  pod.ns = "default";
  pod.name = uid;
  pod.node_name = node;
  pod.phase = "Running";
  pod.rank_index = rank;
  model::PodDeviceAllocation allocation;
  for (int id : npus) {
    model::AllocatedDevice device;
    device.device_id = std::to_string(id);
    allocation.devices.push_back(device);
  }
  pod.allocation = allocation;
  return pod;
}

JobRecord RecordOf(const std::string& id) {
  JobRecord r;
  r.job_id = id;
  r.ns = "default";
  r.name = id;
  return r;
}

TEST(FaultJobIndex, PuttingJobsOneByOneInAnyOrderGivesTheBuiltIndex) {
  const JobRecord a = RecordOf("job-a"), b = RecordOf("job-b"), c = RecordOf("job-c");
  const model::PodInfo a0 = RunningPod("a0", "node-1", {0, 1}, 0);
  const model::PodInfo a1 = RunningPod("a1", "node-2", {0, 1}, 1);
  const model::PodInfo b0 = RunningPod("b0", "node-1", {2, 3}, 0);
  const model::PodInfo c0 = RunningPod("c0", "node-3", {5}, 0);
  const std::vector<FaultJobSource> sources = {
      {&a, nullptr, {&a0, &a1}}, {&b, nullptr, {&b0}}, {&c, nullptr, {&c0}}};
  const FaultJobIndex built = BuildFaultJobIndex(sources);
  FaultJobIndex by_hand;
  for (int i : {2, 0, 1}) by_hand.Put(BuildFaultJob(sources[i]));
  EXPECT_EQ(by_hand.jobs, built.jobs);
  EXPECT_EQ(by_hand.npus_by_node, built.npus_by_node);
  EXPECT_EQ(by_hand.jobs_by_node, built.jobs_by_node);
  EXPECT_EQ(built.Use("node-1", 3)->job_id, "job-b");
  EXPECT_EQ(built.JobsOn("node-1"), (std::set<std::string>{"job-a", "job-b"}));
}

TEST(FaultJobIndex, ReplacingAJobMovesItsClaimsAndNodesAndErasingForgetsThem) {
  const JobRecord a = RecordOf("job-a");
  const model::PodInfo on_1 = RunningPod("a0", "node-1", {0, 1}, 0);
  const model::PodInfo on_2 = RunningPod("a0", "node-2", {4}, 0);
  FaultJobIndex index;
  index.Put(BuildFaultJob({&a, nullptr, {&on_1}}));
  index.Put(BuildFaultJob({&a, nullptr, {&on_2}}));  // rescheduled
  EXPECT_EQ(index.Use("node-1", 0), nullptr);
  EXPECT_TRUE(index.JobsOn("node-1").empty());
  ASSERT_NE(index.Use("node-2", 4), nullptr);
  EXPECT_EQ(index.Use("node-2", 4)->pod_uid, "a0");
  index.Erase("job-a");
  EXPECT_EQ(index.Job("job-a"), nullptr);
  EXPECT_TRUE(index.npus_by_node.empty());
  EXPECT_TRUE(index.jobs_by_node.empty());
}

TEST(FaultJobIndex, AnNpuTwoPodsClaimPassesToTheOtherWhenItsHolderLetsGo) {
  // A transient of churn: job-b's new pod is bound to an NPU job-a's finishing pod still holds.
  const JobRecord a = RecordOf("job-a"), b = RecordOf("job-b");
  const model::PodInfo a0 = RunningPod("a0", "node-1", {3}, 0);
  const model::PodInfo b0 = RunningPod("b0", "node-1", {3}, 0);
  model::PodInfo a0_done = a0;
  a0_done.phase = "Succeeded";
  FaultJobIndex index;
  index.Put(BuildFaultJob({&a, nullptr, {&a0}}));
  index.Put(BuildFaultJob({&b, nullptr, {&b0}}));
  EXPECT_EQ(index.Use("node-1", 3)->job_id, "job-a");
  index.Put(BuildFaultJob({&a, nullptr, {&a0_done}}));  // job-a's pod terminates
  ASSERT_NE(index.Use("node-1", 3), nullptr);
  EXPECT_EQ(index.Use("node-1", 3)->job_id, "job-b");
  index.Put(BuildFaultJob({&a, nullptr, {&a0}}));  // and, wrongly, holds it again: b keeps it
  EXPECT_EQ(index.Use("node-1", 3)->job_id, "job-b");
  index.Erase("job-b");
  EXPECT_EQ(index.Use("node-1", 3)->job_id, "job-a");
}

TEST(FaultJobIndex, MapsNpusToJobsFromTheRegistrySnapshot) {
  using namespace cluster::testing;
  auto pod0 = model::PodInfoFromObject(PodObject(ExamplePod(0)));
  auto pod1 = model::PodInfoFromObject(PodObject(ExamplePod(1)));
  PodGroupSpec pgs;
  pgs.labels.push_back({"process-recover-enable", "on"});
  pgs.annotations = {{"recover-strategy", "retry,recover-in-place"},
                     {"huawei.com/schedule.filter.faultCode", "80e01801:30"}};
  auto pg = model::PodGroupInfoFromObject(PodGroupObject(pgs));
  ASSERT_TRUE(pod0.ok() && pod1.ok() && pg.ok());
  JobRecord record;
  record.job_id = kJobUid;
  model::RankTableServer server;
  server.server_name = "node-b";
  server.server_id = pod1->uid;
  server.pod_uid = pod1->uid;
  server.devices = {model::RankTableDevice{"3", "10.1.1.13", "11", ""}};
  record.previous_servers = {server};
  FaultJobIndex index = BuildFaultJobIndex({FaultJobSource{&record, &*pg, {&*pod0, &*pod1}}});
  const FaultJob* job = index.Job(kJobUid);
  ASSERT_NE(job, nullptr);
  EXPECT_TRUE(job->policy.retry);
  EXPECT_TRUE(job->policy.recover_in_place);
  EXPECT_EQ(job->policy.code_rules, (std::vector<CustomFilterRule>{{"80E01801", 30}}));
  EXPECT_EQ(job->devices_per_pod, 8);
  EXPECT_EQ(job->pod_uid_by_rank.at(1), pod1->uid);
  ASSERT_NE(index.Use("node-a", 7), nullptr);
  EXPECT_EQ(index.Use("node-a", 7)->pod_rank, 0);
  EXPECT_EQ(index.Use("node-c", 0), nullptr);
  EXPECT_EQ(index.JobsOn("node-b").count(kJobUid), 1u);
  ASSERT_EQ(job->servers.size(), 1u);
  EXPECT_EQ(job->servers[0].devices[0].rank_id, 11);
}

// The job's last complete rank table named a pod that has since gone (deleted, or replaced by a
// pod elsewhere): its node's NPUs are no longer the job's, and may already be another job's. A
// fault there must not be charged to this job (issue: a fault charged to the wrong job after pod
// churn).
TEST(FaultJobIndex, AServerWhosePodIsGoneIsLeftOutOfFaultMapping) {
  using namespace cluster::testing;
  PodSpec moved = ExamplePod(1);
  moved.uid = "9c2e7d4f-0000-4000-8000-0000000000ff";
  moved.node = "node-c";
  PodSpec other = ExamplePod(0);  // another job's pod now on node-b, the NPUs the old pod held
  other.name = "other-0";
  other.uid = "0e0e0e0e-0000-4000-8000-000000000009";
  other.node = "node-b";
  other.owner_uid = "other-job";
  other.owner_name = "other";
  auto pod0 = model::PodInfoFromObject(PodObject(ExamplePod(0)));
  auto pod1 = model::PodInfoFromObject(PodObject(moved));
  auto other_pod = model::PodInfoFromObject(PodObject(other));
  auto pg = model::PodGroupInfoFromObject(PodGroupObject({}));
  ASSERT_TRUE(pod0.ok() && pod1.ok() && other_pod.ok() && pg.ok());
  JobRecord record;
  record.job_id = kJobUid;
  for (int p = 0; p < 2; ++p) {
    model::RankTableServer server;
    server.server_name = p == 0 ? "node-a" : "node-b";
    server.pod_uid = p == 0 ? pod0->uid : ExamplePod(1).uid;  // the old pod of rank 1
    server.server_id = server.pod_uid;
    for (int d = 0; d < 8; ++d) {
      server.devices.push_back(
          model::RankTableDevice{std::to_string(d), "", std::to_string(p * 8 + d), ""});
    }
    record.previous_servers.push_back(server);
  }
  JobRecord other_record;
  other_record.job_id = "other-job";
  FaultJobIndex index = BuildFaultJobIndex({FaultJobSource{&record, &*pg, {&*pod0, &*pod1}},
                                            FaultJobSource{&other_record, &*pg, {&*other_pod}}});
  const FaultJob* job = index.Job(kJobUid);
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->servers.size(), 1u);
  EXPECT_EQ(job->servers[0].node, "node-a");
  EXPECT_EQ(index.JobsOn("node-b").count(kJobUid), 0u);
  EXPECT_EQ(index.JobsOn("node-b").count("other-job"), 1u);
  EXPECT_EQ(index.Use("node-b", 3)->job_id, "other-job");

  Nodes n;
  n.devices["node-b"] = Record("node-b");
  AddFault(n.devices["node-b"], Fault("Ascend910-3", "80E3A201", "SeparateNPU"));
  EXPECT_TRUE(ComputeJobFaultRanks(*job, n.Fn(), {}, {}, kNow).faults.ranks.empty());
}

TEST(FaultJobIndex, AServerWhosePodTerminatedIsLeftOutOfFaultMapping) {
  using namespace cluster::testing;
  PodSpec failed = ExamplePod(1);
  failed.phase = "Failed";
  auto pod0 = model::PodInfoFromObject(PodObject(ExamplePod(0)));
  auto pod1 = model::PodInfoFromObject(PodObject(failed));
  auto pg = model::PodGroupInfoFromObject(PodGroupObject({}));
  ASSERT_TRUE(pod0.ok() && pod1.ok() && pg.ok());
  JobRecord record;
  record.job_id = kJobUid;
  model::RankTableServer server;
  server.server_name = "node-b";
  server.pod_uid = pod1->uid;
  server.devices = {model::RankTableDevice{"3", "", "11", ""}};
  record.previous_servers = {server};
  FaultJobIndex index = BuildFaultJobIndex({FaultJobSource{&record, &*pg, {&*pod0, &*pod1}}});
  EXPECT_TRUE(index.Job(kJobUid)->servers.empty());
}

// A fault rank names the pod that held the NPU, not whichever pod holds the rank now: a fault of
// the old pod of a rank must not look like a fault of the backup pod that took it over (the
// second hot switch for one sub-health fault).
TEST(JobFaultRank, ARankNamesThePodOfItsServerNotTheRanksCurrentPod) {
  FaultJob job = TwoByEight();
  job.pod_uid_by_rank[1] = "uid-backup";
  Nodes n;
  n.devices["node-b"] = Record("node-b");
  AddFault(n.devices["node-b"], Fault("Ascend910-0", "81A3880C", "SubHealthFault"));
  auto f = ComputeJobFaultRanks(job, n.Fn(), {}, {}, kNow).faults;
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].pod_uid, "uid-1");
}

}  // namespace fault_job_centre_test
}  // namespace clusterd::cluster
