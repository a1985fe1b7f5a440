// Job configuration (§9.1), fault ranks and caches (§8.4), strategy decision (§9.3-§9.5),
// job view building (§11.6).

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/fault_rank.h"
#include "recovery/job_config.h"
#include "recovery/job_view.h"
#include "recovery/strategy.h"

namespace clusterd::recovery {
namespace pure_parts_test {

using ::testing::ElementsAre;

// ---- JobConfig ----

TEST(JobConfig, SortsDeduplicatesAndAlwaysAddsExit) {
  const JobConfig c = BuildJobConfig({{"process-recover-enable", "on"}},
                                     {{"recover-strategy", "dump,recover,retry,dump,bogus"}});
  EXPECT_TRUE(c.process_recover_enabled);
  EXPECT_THAT(c.strategies, ElementsAre("retry", "recover", "dump", "exit"));
  EXPECT_FALSE(c.platform_mode);
}

TEST(JobConfig, ItemsAreNotTrimmed) {
  const JobConfig c = BuildJobConfig({}, {{"recover-strategy", "retry, recover"}});
  EXPECT_THAT(c.strategies, ElementsAre("retry", "exit"));
  EXPECT_FALSE(c.process_recover_enabled);
}

TEST(JobConfig, ReschedulingLabelsAndSubHealth) {
  const JobConfig c = BuildJobConfig(
      {{"fault-scheduling", "grace"},
       {"pod-rescheduling", "on"},
       {"subHealthyStrategy", "hotSwitch"},
       {"framework", "pytorch"}},
      {{"recover-strategy", "elastic-training,recover-in-place"}, {"ProcessRecoverStrategy", ""}});
  EXPECT_THAT(c.strategies, ElementsAre("recover-in-place", "elastic-training", "exit",
                                        "job-rescheduling", "pod-rescheduling"));
  EXPECT_TRUE(c.HotSwitch());
  EXPECT_TRUE(c.platform_mode);
  EXPECT_TRUE(c.JobRescheduling());
  EXPECT_TRUE(c.PodRescheduling());
  EXPECT_EQ(c.framework, "pytorch");
  EXPECT_TRUE(InitAdmits(c));  // hotSwitch admits without process recovery
  EXPECT_FALSE(InitAdmits(BuildJobConfig({}, {})));
  EXPECT_EQ(BuildJobConfig({{"subHealthyStrategy", "other"}}, {}).sub_health_strategy, "");
  EXPECT_EQ(BuildJobConfig({{"fault-scheduling", "off"}}, {}).JobRescheduling(), false);
}

TEST(JobConfig, InitTexts) {
  EXPECT_EQ(InitRefusalInfo("J"),
            "job(uid=J) process-recover-enable and subhealthy hotswtich not open:<nil>");
  EXPECT_EQ(InitSuccessInfo("J"), "job(uid=J) init success");
}

TEST(JobConfig, InPlaceGateReadsTheLivePodGroup) {
  EXPECT_TRUE(InPlaceGateOpen({{"process-recover-enable", "on"}},
                              {{"recover-strategy", "retry, recover-in-place"}}));
  EXPECT_FALSE(InPlaceGateOpen({{"process-recover-enable", "pause"}},
                               {{"recover-strategy", "recover-in-place"}}));
  EXPECT_FALSE(
      InPlaceGateOpen({{"process-recover-enable", "on"}}, {{"recover-strategy", "recover"}}));
}

// ---- Fault ranks ----

TEST(FaultRanks, DedupKeepsTypeOneAndReplacesRetryClass) {
  EXPECT_EQ(DedupByRank({{3, 0}, {3, 2}, {1, 1}, {1, 0}, {2, 2}}),
            (std::vector<FaultRank>{{1, 1}, {2, 2}, {3, 2}}));
}

TEST(FaultRanks, MergeSplitsByClass) {
  FaultCaches c;
  c.Merge({{3, 0}, {5, 1}});
  c.Merge({{3, 1}, {4, 2}});
  EXPECT_EQ(c.retry, (std::vector<FaultRank>{{3, 0}, {4, 2}}));
  EXPECT_EQ(c.normal, (std::vector<FaultRank>{{3, 1}, {5, 1}}));
  EXPECT_TRUE(c.RetryMixesTypes());
  c.MoveRetryToNormal();
  EXPECT_TRUE(c.retry.empty());
  EXPECT_EQ(c.normal, (std::vector<FaultRank>{{3, 1}, {4, 2}, {5, 1}}));
}

TEST(FaultRanks, PodArithmetic) {
  EXPECT_EQ(PodRankOf(10, 8), 1);
  EXPECT_EQ(PodRankOf(7, 0), 7);
  EXPECT_EQ(ExpandToPod(10, 4), (std::vector<FaultRank>{{8, 1}, {9, 1}, {10, 1}, {11, 1}}));
  EXPECT_EQ(PodRanksOf({{10, 1}, {1, 0}, {12, 1}}, 8), (std::vector<int64_t>{0, 1}));
}

TEST(FaultRanks, RankTypeLists) {
  EXPECT_EQ(FormatRankTypeList({{10, 1}, {2, 0}, {10, 0}}), "2:0,10:1");
  EXPECT_EQ(ParseRankTypeList("1:0,bad,2:1:3,x:1,3:2,,"), (std::vector<FaultRank>{{1, 0}, {3, 2}}));
  EXPECT_TRUE(ParseRankTypeList("").empty());
}

TEST(FaultRanks, ParseWireFaultRank) {
  EXPECT_EQ(*ParseFaultRank("12", "2"), (FaultRank{12, 2}));
  EXPECT_FALSE(ParseFaultRank("x", "1").ok());
  EXPECT_FALSE(ParseFaultRank("-1", "1").ok());
  EXPECT_FALSE(ParseFaultRank("1", "one").ok());
  EXPECT_TRUE(IsRetryClass({1, 7}));  // quirk 10
}

// ---- Strategy ----

StrategyContext Ctx(const std::string& configured, std::vector<std::string> agent) {
  StrategyContext c;
  c.config = BuildJobConfig({{"process-recover-enable", "on"}}, {{"recover-strategy", configured}});
  c.agent_strategies = std::move(agent);
  c.health = "UnHealthy";
  return c;
}

TEST(Strategy, FirstDecisionTable) {
  struct Case {
    std::string configured;
    std::vector<std::string> agent;
    bool normal_empty;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"retry,recover,dump", {"retry", "recover", "dump"}, true, "retry"},
      {"retry,recover,dump", {"retry", "recover", "dump"}, false, "recover"},
      {"retry,recover,dump", {"recover", "dump"}, true, "dump"},  // retry not reported
      {"retry,recover", {"recover"}, true, "exit"},               // recover skipped then
      {"recover,dump", {"dump"}, false, "dump"},
      {"recover,dump", {}, false, "exit"},
      {"elastic-training,dump", {"downgrade", "dump"}, false, "downgrade"},
      {"dump", {"dump"}, false, "dump"},
      {"", {"recover", "dump"}, false, "exit"},
  };
  for (const Case& k : cases) {
    StrategyContext c = Ctx(k.configured, k.agent);
    c.normal_cache_empty = k.normal_empty;
    EXPECT_EQ(Decide(c).strategy, k.expected) << k.configured;
  }
}

TEST(Strategy, RedecisionLadders) {
  StrategyContext c = Ctx("retry,recover,dump", {"retry", "recover", "dump"});
  c.normal_cache_empty = true;
  c.last_result_strategy = "retry";
  EXPECT_EQ(Decide(c).strategy, "recover");
  c.last_result_strategy = "recover";
  EXPECT_EQ(Decide(c).strategy, "dump");
  c.last_result_strategy = "upgrade";
  EXPECT_EQ(Decide(c).strategy, "dump");
  c.last_result_strategy = "dump";
  EXPECT_EQ(Decide(c).strategy, "exit");
  c.last_result_strategy = "exit";
  EXPECT_EQ(Decide(c).strategy, "exit");
}

TEST(Strategy, PlatformModeGatesEveryStrategyOnPlatStrategy) {
  StrategyContext c = Ctx("retry,recover,dump", {"retry", "recover", "dump"});
  c.config.platform_mode = true;
  c.plat_strategy = "dump";
  c.normal_cache_empty = false;
  EXPECT_FALSE(SupportRetry(c));
  EXPECT_FALSE(SupportRecover(c));
  EXPECT_TRUE(SupportDump(c));
  EXPECT_EQ(Decide(c).strategy, "dump");
  EXPECT_TRUE(DumpOnly(c));
  EXPECT_TRUE(DumpOnFault(c));
  c.only_dump_or_exit = true;
  c.plat_strategy = "exit";
  EXPECT_EQ(Decide(c).strategy, "exit");
}

TEST(Strategy, RankZeroBlocksScaleIn) {
  StrategyContext c = Ctx("elastic-training", {"downgrade"});
  c.normal_cache_empty = false;
  c.pod0_faulty = true;
  EXPECT_EQ(Decide(c).strategy, "exit");
}

TEST(Strategy, ResourceWaitWhenReschedulingIsConfigured) {
  StrategyContext c = Ctx("elastic-training", {"downgrade"});
  c.config = BuildJobConfig({{"process-recover-enable", "on"}, {"fault-scheduling", "force"}},
                            {{"recover-strategy", "elastic-training"}});
  c.normal_cache_empty = false;
  EXPECT_TRUE(Decide(c).needs_resource_wait);
  c.resources_arrived = false;
  EXPECT_EQ(Decide(c).strategy, "downgrade");
  c.resources_arrived = true;
  EXPECT_EQ(Decide(c).strategy, "exit");
}

TEST(Strategy, InPlaceNeedsRestartFaultProcess) {
  StrategyContext c = Ctx("recover-in-place,recover", {"recover"});
  c.normal_cache_empty = false;
  EXPECT_EQ(Decide(c).strategy, "recover");
  c.restart_fault_process = true;
  EXPECT_EQ(Decide(c).strategy, "recover-in-place");
}

TEST(Strategy, DumpOnFaultPredicates) {
  StrategyContext c = Ctx("dump", {});
  EXPECT_FALSE(DumpOnly(Ctx("dump,recover", {})));  // sorted: recover comes first
  EXPECT_TRUE(DumpOnly(c));
  EXPECT_TRUE(DumpOnFault(c));
  c.health = "SubHealthy";
  EXPECT_FALSE(DumpOnFault(c));
  c.config.sub_health_strategy = "graceExit";
  EXPECT_TRUE(DumpOnFault(c));
  c.config.process_recover_enabled = false;
  EXPECT_FALSE(DumpOnly(c));
}

// ---- Job view ----

TEST(JobView, BuildsFromStoreObjects) {
  store::Object pg = {{"metadata",
                       {{"name", "demo-J"},
                        {"namespace", "ns"},
                        {"labels", {{"process-recover-enable", "on"}}},
                        {"annotations", {{"RankTableReady", "true"}}}}},
                      {"status", {{"phase", "Running"}}}};
  auto pod = [](const std::string& name, const std::string& rank, int npus, bool backup) {
    store::Object p = {
        {"metadata",
         {{"name", name},
          {"namespace", "ns"},
          {"uid", "uid-" + name},
          {"creationTimestamp", "2024-06-10T06:13:20Z"},
          {"annotations", {{"hccl/rankIndex", rank}, {"huawei.com/AscendReal", "Ascend910-0"}}}}},
        {"spec",
         {{"nodeName", "node-" + name},
          {"containers",
           {{{"name", "c"},
             {"resources", {{"limits", {{"huawei.com/Ascend910", npus}}}}},
             {"env", {{{"name", "MINDIO_WAIT_MINDX_TIME"}, {"value", "60"}}}}}}}}},
        {"status", {{"phase", "Running"}}}};
    if (backup) p["metadata"]["annotations"]["podType"] = "backup";
    return p;
  };
  const JobView v = BuildJobView(&pg, {pod("a", "0", 8, false), pod("b", "1", 8, false),
                                       pod("c", "x", 8, false), pod("d", "1", 8, true)});
  EXPECT_TRUE(v.exists);
  EXPECT_TRUE(v.pod_group_running);
  EXPECT_EQ(v.npus_per_pod, 8);
  EXPECT_EQ(v.pods.size(), 2u);
  EXPECT_EQ(v.PodUid(1), "uid-b");
  EXPECT_TRUE(v.Pod(0)->ascend_real);
  EXPECT_EQ(v.Pod(0)->created, absl::FromUnixSeconds(1718000000));
  EXPECT_EQ(v.backup_pods.size(), 1u);
  EXPECT_EQ(v.mindio_wait_seconds, 60);
  EXPECT_EQ(v.Annotation("RankTableReady"), "true");
  const JobView gone = BuildJobView(nullptr, {});
  EXPECT_FALSE(gone.exists);
  EXPECT_EQ(gone.npus_per_pod, 1);
}

TEST(JobView, SuperPodComesFromTheAllocationAndABadOneIsNoSuperPod) {
  auto pod = [](const std::string& rank, const std::string& allocation) {
    return store::Object{
        {"metadata",
         {{"name", "p" + rank},
          {"namespace", "ns"},
          {"uid", "uid-" + rank},
          {"annotations",
           {{"hccl/rankIndex", rank},
            {"ascend.kubectl.kubernetes.io/ascend-910-configuration", allocation}}}}},
        {"spec", {{"nodeName", "node-" + rank}}}};
  };
  const JobView plain = BuildJobView(nullptr, {pod("0", R"({"super_pod_id":-2})")});
  EXPECT_FALSE(plain.super_pod);
  EXPECT_EQ(plain.Pod(0)->super_pod_id, -2);
  // Truncated JSON, a string id, no annotation value: not a super pod, no failure.
  const JobView bad = BuildJobView(nullptr, {pod("0", R"({"super_pod_id":)"),
                                             pod("1", R"({"super_pod_id":"3"})"), pod("2", "")});
  EXPECT_FALSE(bad.super_pod);
  EXPECT_EQ(bad.pods.size(), 3u);
  const JobView sp = BuildJobView(nullptr, {pod("0", R"({"super_pod_id":3})"), pod("1", "{}")});
  EXPECT_TRUE(sp.super_pod);
  EXPECT_EQ(sp.Pod(0)->super_pod_id, 3);
  EXPECT_EQ(sp.Pod(1)->super_pod_id, -2);
}

TEST(JobView, RenamedDevicesCountAndCarryTheSuperPod) {
  // deviceNameCustomization.json: the NPU resource and the 910 allocation annotation renamed.
  const model::DeviceNaming naming({{"Ascend910", "example.com/npu910", "npu910-",
                                     "example.com/npu910-configuration"}});
  const store::Object pod = {
      {"metadata",
       {{"name", "p0"},
        {"namespace", "ns"},
        {"uid", "uid-0"},
        {"annotations",
         {{"hccl/rankIndex", "0"},
          {"example.com/npu910-configuration", R"({"super_pod_id":4})"}}}}},
      {"spec",
       {{"nodeName", "node-0"},
        {"containers",
         {{{"name", "c"}, {"resources", {{"limits", {{"example.com/npu910", 16}}}}}}}}}}};
  const JobView v = BuildJobView(nullptr, {pod}, naming);
  EXPECT_EQ(v.npus_per_pod, 16);
  EXPECT_TRUE(v.super_pod);
  EXPECT_EQ(v.Pod(0)->super_pod_id, 4);
  // Read by the fixed names, the same pod asks for no NPU and names no super pod.
  const JobView fixed = BuildJobView(nullptr, {pod});
  EXPECT_EQ(fixed.npus_per_pod, 1);
  EXPECT_FALSE(fixed.super_pod);
}

}  // namespace pure_parts_test
}  // namespace clusterd::recovery
