// The Fault service's messages and publishers (jobs-ranktable-diagnosis.md §4).
#include "cluster/fault_signal.h"

#include "cluster/fault_subscriptions.h"
#include "fault_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace fault_signal_test {

FaultDevice Npu(const std::string& node, const std::string& ip, const std::string& id,
                const std::string& code, const std::string& level) {
  FaultDevice d;
  d.server_name = node;
  d.server_id = node + "-uid";
  d.host_ip = ip;
  d.server_sn = "SN-" + node;
  d.device_id = id;
  d.device_type = "NPU";
  d.code = code;
  d.level = level;
  return d;
}

TEST(FaultMsgSignal, BuildsTheSpecExample) {
  // §4.5: node-b, device 3, codes sorted, levels aligned, state UnHealthy.
  std::vector<FaultDevice> entries = {
      Npu("node-b", "192.168.0.12", "3", "80E01801", "RestartBusiness"),
      Npu("node-b", "192.168.0.12", "3", "80C98009", "RestartRequest")};
  entries[0].server_sn = entries[1].server_sn = "2102313LNR10P5100002";
  FaultMsgSignal s = BuildFaultMsgSignal("7c1f0d3a", entries);
  EXPECT_EQ(s.signal_type, "fault");
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].node_name, "node-b");
  EXPECT_EQ(s.nodes[0].node_ip, "192.168.0.12");
  EXPECT_EQ(s.nodes[0].node_sn, "2102313LNR10P5100002");
  EXPECT_EQ(s.nodes[0].fault_level, "UnHealthy");
  ASSERT_EQ(s.nodes[0].fault_devices.size(), 1u);
  const auto& d = s.nodes[0].fault_devices[0];
  EXPECT_EQ(d.device_id, "3");
  EXPECT_EQ(d.device_type, "NPU");
  EXPECT_EQ(d.fault_codes, (std::vector<std::string>{"80C98009", "80E01801"}));
  EXPECT_EQ(d.fault_levels, (std::vector<std::string>{"RestartRequest", "RestartBusiness"}));
  EXPECT_EQ(d.fault_level, "UnHealthy");
}

TEST(FaultMsgSignal, DuplicateNpuCodeKeepsTheMostSeriousLevel) {
  auto s = BuildFaultMsgSignal(
      "j", {Npu("n", "1", "0", "A", "RestartRequest"), Npu("n", "1", "0", "A", "SeparateNPU"),
            Npu("n", "1", "0", "B", "SubHealthFault")});
  const auto& d = s.nodes[0].fault_devices[0];
  EXPECT_EQ(d.fault_codes, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(d.fault_levels, (std::vector<std::string>{"SeparateNPU", "SubHealthFault"}));
}

TEST(FaultMsgSignal, NodesSortedByIpDevicesByIdThenTypeSwitchInfosKept) {
  FaultDevice sw = Npu("n2", "10.0.0.2", "-1", "[0x08520003,na,L2,na]", "SubHealthFault");
  sw.device_type = "Switch";
  sw.switch_chip_id = "0";
  sw.switch_port_id = "5";
  sw.fault_time_ms = 42;
  auto s = BuildFaultMsgSignal("j", {Npu("n2", "10.0.0.2", "1", "A", "NotHandleFault"), sw,
                                     Npu("n1", "10.0.0.1", "0", "", "SeparateNPU")});
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].node_name, "n1");
  EXPECT_TRUE(s.nodes[0].fault_devices[0].fault_codes.empty());  // empty code not listed
  EXPECT_EQ(s.nodes[0].fault_level, "UnHealthy");
  EXPECT_EQ(s.nodes[1].fault_devices[0].device_id, "-1");
  EXPECT_EQ(s.nodes[1].fault_devices[0].switch_fault_infos[0].fault_time, "42");
  EXPECT_EQ(s.nodes[1].fault_level, "SubHealthy");
  EXPECT_EQ(s.nodes[1].fault_devices[1].fault_level, "Healthy");
}

TEST(FaultMsgSignal, LevelStates) {
  EXPECT_EQ(LevelStateRank("NotHandleFault"), 0);
  EXPECT_EQ(LevelStateRank("whatever"), 0);
  EXPECT_EQ(LevelStateRank("PreSeparateNPU"), 1);
  EXPECT_EQ(LevelStateRank("SubHealth"), 1);
  EXPECT_EQ(LevelStateRank("FreeRestartNPU"), 2);
  EXPECT_EQ(LevelStateRank("Separate"), 2);
}

TEST(FaultMsgSignal, ClusterViewListsFaultyNodesOnly) {
  DeviceRecord a = testing::Record("node-a");
  AddFault(a, testing::Fault("Ascend910-1", "80E01801", "SeparateNPU"));
  AddFault(a, testing::Fault("Ascend910-1", "X", "SubHealthFault"));
  DeviceRecord b = testing::Record("node-b");
  NodeRecord nb;
  nb.info.fault_dev_list = {model::FaultDev{"CPU", 0, {"0000001D"}, "PreSeparateFault"}};
  nb.info.node_status = "PreSeparate";
  DeviceRecord c = testing::Record("node-c");
  std::vector<ClusterNodeFaults> nodes = {
      {"node-a", "10.0.0.3", "", &a, nullptr, nullptr, true},
      {"node-b", "10.0.0.2", "", &b, nullptr, &nb, true},
      {"node-c", "10.0.0.1", "", &c, nullptr, nullptr, true},
      {"node-d", "10.0.0.0", "", nullptr, nullptr, nullptr, false}};
  FaultMsgSignal s = BuildClusterFaultSignal(nodes);
  EXPECT_EQ(s.job_id, "-1");
  EXPECT_EQ(s.signal_type, "fault");
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].node_name, "node-d");
  EXPECT_EQ(s.nodes[0].fault_devices[0].device_type, "Node");
  EXPECT_EQ(s.nodes[1].node_name, "node-b");
  EXPECT_EQ(s.nodes[1].fault_level, "SubHealthy");
  EXPECT_EQ(s.nodes[2].fault_devices[0].device_id, "1");
  EXPECT_EQ(s.nodes[2].fault_devices[0].fault_level, "UnHealthy");  // not overridden by sub-health
}

// ---- publishers ----

JobFaultRanks JobWith(const std::string& id, std::vector<FaultDevice> devices) {
  JobFaultRanks f;
  f.job_id = id;
  f.devices = std::move(devices);
  return f;
}

auto Known(std::set<std::string> jobs) {
  return [jobs](const std::string& id, const std::string&) { return jobs.count(id) != 0; };
}
auto Exists(std::set<std::string> jobs) {
  return [jobs](const std::string& id) { return jobs.count(id) != 0; };
}

TEST(FaultSubscriptions, RegisterChecksTheJobAndTheLimit) {
  FaultSubscriptions subs;
  auto unknown = subs.Register("nope", "taskd", Known({}));
  EXPECT_EQ(unknown.code, 402);
  EXPECT_EQ(unknown.info, "jobId=nope not exist and is not multi-instance");
  EXPECT_TRUE(unknown.rpc_error);
  auto ok = subs.Register("job-1", "taskd", Known({"job-1"}));
  EXPECT_EQ(ok.code, 0);
  EXPECT_EQ(ok.info, "register success");
  auto cluster = subs.Register("", "ops", Known({}));
  EXPECT_EQ(cluster.code, 0);
  EXPECT_TRUE(subs.IsRegistered("-1", "ops"));
  EXPECT_EQ(subs.ServedJobs(), 2u);
}

TEST(FaultSubscriptions, JobStreamGetsFaultThenNormalAndNoDuplicates) {
  FaultSubscriptions subs;
  subs.Register("job-1", "taskd", Known({"job-1"}));
  auto exists = Exists({"job-1"});
  // No message for a healthy job.
  EXPECT_TRUE(subs.Update(JobWith("job-1", {}), exists).empty());
  auto faulty = JobWith("job-1", {Npu("n", "1", "0", "A", "SeparateNPU")});
  auto d = subs.Update(faulty, exists);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].signal.signal_type, "fault");
  EXPECT_TRUE(subs.Update(faulty, exists).empty());  // unchanged
  auto cleared = subs.Update(JobWith("job-1", {}), exists);
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_EQ(cleared[0].signal.signal_type, "normal");
  EXPECT_TRUE(subs.Update(JobWith("job-1", {}), exists).empty());
}

TEST(FaultSubscriptions, NotHandleOnlyJobIsNotAFaultForTheStreams) {
  FaultSubscriptions subs;
  subs.Register("job-1", "taskd", Known({"job-1"}));
  EXPECT_TRUE(
      subs.Update(JobWith("job-1", {Npu("n", "1", "0", "A", "NotHandleFault")}), Exists({"job-1"}))
          .empty());
}

// ---- GetFaultMsgSignal for one job (§4.1) ----

TEST(JobFaultQuery, UnknownJobIsNotFoundWithoutASignal) {
  JobFaultQueryAnswer a = AnswerJobFaultQuery("job-0001", false, nullptr);
  EXPECT_EQ(a.info, "job with jobId: job-0001 not found fault info");
  EXPECT_FALSE(a.signal.has_value());
}

TEST(JobFaultQuery, HealthyKnownJobGetsAllInfoReturnedWithTheStreamsNormalSignal) {
  const JobFaultRanks healthy = JobWith("job-0001", {});
  for (const JobFaultRanks* faults : {static_cast<const JobFaultRanks*>(nullptr), &healthy}) {
    JobFaultQueryAnswer a = AnswerJobFaultQuery("job-0001", true, faults);
    EXPECT_EQ(a.info, "all info returned");
    ASSERT_TRUE(a.signal.has_value());
    EXPECT_EQ(a.signal->job_id, "job-0001");
    EXPECT_EQ(a.signal->signal_type, "normal");
    EXPECT_TRUE(a.signal->nodes.empty());
    EXPECT_TRUE(a.signal->SameContent(NormalSignal("job-0001")));
  }
}

TEST(JobFaultQuery, NotHandleOnlyJobIsAnsweredWithItsNotHandleEntries) {
  JobFaultRanks f = JobWith("job-0001", {Npu("n", "1", "0", "A", "NotHandleFault")});
  JobFaultQueryAnswer a = AnswerJobFaultQuery("job-0001", true, &f);
  EXPECT_EQ(a.info, "all info returned");
  ASSERT_TRUE(a.signal.has_value());
  EXPECT_EQ(a.signal->signal_type, "fault");
  ASSERT_EQ(a.signal->nodes.size(), 1u);
  EXPECT_EQ(a.signal->nodes[0].fault_level, "Healthy");
  ASSERT_EQ(a.signal->nodes[0].fault_devices.size(), 1u);
  EXPECT_EQ(a.signal->nodes[0].fault_devices[0].fault_codes, std::vector<std::string>{"A"});
  EXPECT_EQ(a.signal->nodes[0].fault_devices[0].fault_levels,
            std::vector<std::string>{"NotHandleFault"});
}

TEST(JobFaultQuery, ShowsEveryLevelAndTheCustomFilteredFaults) {
  JobFaultRanks f = JobWith("job-0001", {Npu("n", "1", "0", "A", "NotHandleFault"),
                                         Npu("n", "1", "0", "B", "SeparateNPU")});
  f.filtered_devices = {Npu("n", "1", "1", "C", "RestartRequest")};
  JobFaultQueryAnswer a = AnswerJobFaultQuery("job-0001", true, &f);
  ASSERT_TRUE(a.signal.has_value());
  EXPECT_TRUE(a.signal->SameContent(BuildFaultMsgSignal("job-0001", FaultQueryEntries(f))));
  ASSERT_EQ(a.signal->nodes.size(), 1u);
  ASSERT_EQ(a.signal->nodes[0].fault_devices.size(), 2u);
  EXPECT_EQ(a.signal->nodes[0].fault_devices[0].fault_codes, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(a.signal->nodes[0].fault_devices[1].fault_codes, std::vector<std::string>{"C"});
  // The streams drop only the NotHandleFault entry.
  EXPECT_EQ(FaultServiceEntries(f).size(), 2u);
}

TEST(FaultSubscriptions, NewSubscriberOfAFaultyJobGetsTheCurrentMessage) {
  FaultSubscriptions subs;
  subs.Update(JobWith("job-1", {Npu("n", "1", "0", "A", "SeparateNPU")}), Exists({"job-1"}));
  auto r = subs.Register("job-1", "taskd", Known({"job-1"}));
  ASSERT_EQ(r.initial.size(), 1u);
  EXPECT_EQ(r.initial[0].signal.job_id, "job-1");
  auto cluster = subs.Register("", "ops", Known({}));
  ASSERT_EQ(cluster.initial.size(), 1u);
}

TEST(FaultSubscriptions, ClusterPublisherGetsEveryJobAndForgetsDeletedOnes) {
  FaultSubscriptions subs;
  subs.Register("", "ops", Known({}));
  auto d =
      subs.Update(JobWith("job-1", {Npu("n", "1", "0", "A", "SeparateNPU")}), Exists({"job-1"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].signal.job_id, "job-1");
  auto gone = subs.JobGone("job-1", "");
  EXPECT_TRUE(gone.empty());  // record gone: forgotten, no normal
  auto again =
      subs.Update(JobWith("job-1", {Npu("n", "1", "0", "A", "SeparateNPU")}), Exists({"job-1"}));
  EXPECT_EQ(again.size(), 1u);  // sent afresh
}

TEST(FaultSubscriptions, MindIeInstanceAggregatesItsMemberJobs) {
  FaultSubscriptions subs;
  auto known = [](const std::string& id, const std::string& role) {
    return id == "mindie-1" && role == "mindie-ms-controller";
  };
  ASSERT_EQ(subs.Register("mindie-1", "mindie-ms-controller", known).code, 0);
  JobFaultRanks a = JobWith("job-a", {Npu("n1", "1", "0", "A", "SeparateNPU")});
  a.multi_instance_job_id = "mindie-1";
  JobFaultRanks b = JobWith("job-b", {Npu("n2", "2", "0", "B", "SeparateNPU")});
  b.multi_instance_job_id = "mindie-1";
  subs.Update(a, Exists({"job-a", "job-b"}));
  auto d = subs.Update(b, Exists({"job-a", "job-b"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].signal.job_id, "mindie-1");
  EXPECT_EQ(d[0].signal.nodes.size(), 2u);
}

}  // namespace fault_signal_test
}  // namespace clusterd::cluster
