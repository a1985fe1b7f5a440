// The per-job rank table of jobs-ranktable-diagnosis.md §2.1, with the worked example of §2.2.
#include "cluster/rank_table_builder.h"

#include <algorithm>

#include "cluster/job_summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "model/pod_group_info.h"
#include "rank_table_golden.h"

namespace clusterd::cluster {
namespace rank_table_builder_test {

using model::PodInfo;
using testing::ExamplePod;
using testing::PodObject;
using testing::PodSpec;

PodInfo Pod(const PodSpec& spec) {
  auto pod = model::PodInfoFromObject(PodObject(spec));
  EXPECT_TRUE(pod.ok()) << pod.status();
  return *pod;
}

NodeSerials ExampleSerials() {
  NodeSerials s;
  s.by_node_name["node-a"] = "2102313LNR10P5100001";
  s.by_node_name["node-b"] = "2102313LNR10P5100002";
  s.by_host_ip["192.168.0.11"] = "2102313LNR10P5100001";
  s.by_host_ip["192.168.0.12"] = "2102313LNR10P5100002";
  return s;
}

std::vector<const PodInfo*> Ptrs(const std::vector<PodInfo>& pods) {
  std::vector<const PodInfo*> out;
  for (const auto& p : pods) out.push_back(&p);
  return out;
}

RankTableBuild Build(const std::vector<PodInfo>& pods, int64_t replicas = 2,
                     std::string_view resource_type = "Ascend910", std::string_view label = "") {
  return BuildJobRankTable(Ptrs(pods), replicas, ExampleSerials(), resource_type, label);
}

TEST(RankTableBuilder, WorkedExample22IsTheExactText) {
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(ExamplePod(1))};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.completed_pods, 2);
  EXPECT_TRUE(build.problems.empty());
  std::vector<std::string> slices = SliceRankTable(build.table);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0], testing::kRankTableExample22);
  build.table.total = 1;
  EXPECT_EQ(model::SerializeRankTable(build.table), testing::kRankTableExample22);
}

TEST(RankTableBuilder, ResultDoesNotDependOnPodOrder) {
  std::vector<PodInfo> forward = {Pod(ExamplePod(0)), Pod(ExamplePod(1))};
  std::vector<PodInfo> backward = {Pod(ExamplePod(1)), Pod(ExamplePod(0))};
  EXPECT_EQ(model::SerializeRankTable(Build(forward).table),
            model::SerializeRankTable(Build(backward).table));
}

TEST(RankTableBuilder, TwoPodsOnOneNodeKeepThePodUidAsServerId) {
  PodSpec a = ExamplePod(0), b = ExamplePod(1);
  b.node = "node-a";
  std::vector<PodInfo> pods = {Pod(a), Pod(b)};
  RankTableBuild build = Build(pods);
  ASSERT_EQ(build.table.server_list->size(), 2u);
  EXPECT_EQ((*build.table.server_list)[0].server_id, a.uid);
  EXPECT_EQ((*build.table.server_list)[1].server_id, b.uid);
}

TEST(RankTableBuilder, OnlyRankZeroAllocatedGivesOneServerStillInitializing) {
  PodSpec b = ExamplePod(1);
  b.with_allocation = false;
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.table.status, "initializing");
  EXPECT_EQ(build.table.server_count, "1");
  EXPECT_EQ(build.completed_pods, 1);
}

TEST(RankTableBuilder, AllocationWithNoDeviceIsNeitherCompletedNorAServer) {
  PodSpec b = ExamplePod(1);
  b.devices = 0;
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.completed_pods, 1);
  EXPECT_EQ(build.table.server_count, "1");
  EXPECT_EQ(build.table.status, "initializing");
}

TEST(RankTableBuilder, PodNeedingNoNpuCountsAsCompletedWithoutAServer) {
  PodSpec b = ExamplePod(1);
  b.with_allocation = false;
  b.needs_npu = false;
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.table.status, "complete");
  EXPECT_EQ(build.table.server_count, "1");
}

TEST(RankTableBuilder, MissingRankIndexSkipsThePodAndIsReportedForNpuPods) {
  PodSpec b = ExamplePod(1);
  b.rank_index = "";
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.table.server_count, "1");
  EXPECT_EQ(build.table.status, "initializing");
  ASSERT_EQ(build.problems.size(), 1u);
  EXPECT_EQ(build.problems[0].reason, "missing_rank_index");
  EXPECT_EQ(build.problems[0].pod, "default/pt-2x8-worker-0");
}

TEST(RankTableBuilder, MalformedRankIndexIsReportedWithTheValue) {
  PodSpec b = ExamplePod(1);
  b.rank_index = "x";
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  ASSERT_EQ(build.problems.size(), 1u);
  EXPECT_EQ(build.problems[0].reason, "invalid_rank_index");
  EXPECT_EQ(build.problems[0].detail,
            "pod default/pt-2x8-worker-0: annotation hccl/rankIndex is not a non-negative "
            "integer: \"x\"");
}

TEST(RankTableBuilder, RankIndexAtOrAboveReplicasIsSkipped) {
  PodSpec b = ExamplePod(1);
  b.rank_index = "2";
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.table.server_count, "1");
  ASSERT_EQ(build.problems.size(), 1u);
  EXPECT_EQ(build.problems[0].reason, "rank_out_of_range");
}

TEST(RankTableBuilder, DuplicateRankIndexKeepsTheFirstPodByName) {
  PodSpec b = ExamplePod(1);
  b.rank_index = "0";
  std::vector<PodInfo> pods = {Pod(b), Pod(ExamplePod(0))};
  RankTableBuild build = Build(pods);
  ASSERT_EQ(build.table.server_list->size(), 1u);
  EXPECT_EQ((*build.table.server_list)[0].pod_name, "pt-2x8-master-0");
  EXPECT_EQ(build.table.status, "initializing");
  ASSERT_EQ(build.problems.size(), 1u);
  EXPECT_EQ(build.problems[0].reason, "duplicate_rank_index");
  EXPECT_THAT(build.problems[0].detail,
              ::testing::HasSubstr("already taken by pod default/pt-2x8-master-0"));
}

TEST(RankTableBuilder, MalformedAllocationIsNotCompletedAndReported) {
  PodSpec b = ExamplePod(1);
  b.allocation_override = "{not json";
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(b)};
  RankTableBuild build = Build(pods);
  EXPECT_EQ(build.completed_pods, 1);
  EXPECT_EQ(build.table.status, "initializing");
  ASSERT_EQ(build.problems.size(), 1u);
  EXPECT_EQ(build.problems[0].reason, "malformed_allocation");
  EXPECT_THAT(build.problems[0].detail, ::testing::HasSubstr("pod default/pt-2x8-worker-0"));
}

TEST(RankTableBuilder, AllocationWithWrongFieldTypeIsMalformed) {
  PodSpec b = ExamplePod(1);
  b.allocation_override = R"({"devices":[{"device_id":0}]})";
  std::vector<PodInfo> pods = {Pod(b)};
  RankTableBuild build = Build(pods);
  ASSERT_EQ(build.problems.size(), 1u);
  EXPECT_THAT(build.problems[0].detail, ::testing::HasSubstr("device_id"));
}

TEST(RankTableBuilder, SerialNumberFallsBackToHostIpOnlyWithoutNodeName) {
  PodSpec a = ExamplePod(0);
  a.node = "";
  std::vector<PodInfo> pods = {Pod(a)};
  RankTableBuild build = Build(pods, 1);
  EXPECT_EQ((*build.table.server_list)[0].server_sn, "2102313LNR10P5100001");
  PodSpec b = ExamplePod(0);
  b.node = "node-unknown";
  pods = {Pod(b)};
  build = Build(pods, 1);
  EXPECT_EQ((*build.table.server_list)[0].server_sn, "");
}

TEST(RankTableBuilder, BackupPodIsLeftOutUntilItsSourcePodIsGone) {
  PodSpec backup = ExamplePod(1);
  backup.name = "pt-2x8-worker-0-backup";
  backup.uid = "backup-uid";
  backup.extra_annotations = {{"podType", "backup"}, {"backupSourcePodName", "pt-2x8-worker-0"}};
  std::vector<PodInfo> pods = {Pod(ExamplePod(0)), Pod(ExamplePod(1)), Pod(backup)};
  std::vector<const PodInfo*> used = RankTablePods(Ptrs(pods));
  ASSERT_EQ(used.size(), 2u);
  pods = {Pod(ExamplePod(0)), Pod(backup)};
  used = RankTablePods(Ptrs(pods));
  ASSERT_EQ(used.size(), 2u);
  RankTableBuild build = BuildJobRankTable(used, 2, ExampleSerials(), "Ascend910", "");
  EXPECT_EQ((*build.table.server_list)[1].pod_name, "pt-2x8-worker-0-backup");
  EXPECT_EQ(build.table.status, "complete");
}

TEST(RankTableBuilder, NeverBuiltTableSerialisesWithNullServerList) {
  EXPECT_EQ(model::SerializeRankTable(model::RankTable{}),
            R"({"status":"","server_list":null,"server_count":"","total":0})");
}

// A5 (resource type npu): v2.0 rank_list with level 0/1 from the annotation, then level 3 for
// ROCE (preferred by default) filled in when a device lacks it.
TEST(RankTableBuilder, NpuResourceTypeAppendsRankListV2) {
  PodSpec a = ExamplePod(0);
  a.devices = 2;
  auto level = [](int l, const std::string& port, const std::string& id) {
    return testing::Json{{"level", l},
                         {"info",
                          {{port,
                            {{"net_layer", l},
                             {"net_instance_id", id},
                             {"net_type", "CLOS"},
                             {"net_attr", ""},
                             {"rank_addr_list", testing::Json::array({{{"addr_type", "IP"},
                                                                       {"addr", "1.1.1.1"},
                                                                       {"ports", {"0/1"}},
                                                                       {"plane_id", "p0"}}})}}}}}};
  };
  testing::Json alloc = testing::Json::parse(testing::AllocationJson(a));
  alloc["devices"][0]["levelList"] = {level(0, "UB", "sp0"), level(3, "ROCE", "roce0")};
  // Json::array: a braced list of one JSON value is that value under clang, an array under gcc.
  alloc["devices"][1]["levelList"] = testing::Json::array({level(0, "UB", "sp0")});
  a.allocation_override = alloc.dump();
  std::vector<PodInfo> pods = {Pod(a)};
  RankTableBuild build = Build(pods, 1, "npu", "");
  ASSERT_TRUE(model::SerializeRankTable(build.table).find(R"("version":"2.0")") !=
              std::string::npos);
  EXPECT_EQ(build.table.rank_count, 2);
  ASSERT_EQ(build.table.rank_list.size(), 2u);
  EXPECT_EQ(
      model::SerializeRankV2(build.table.rank_list[0]),
      R"({"rank_id":0,"local_id":0,"device_id":0,"level_list":[)"
      R"({"net_layer":0,"net_instance_id":"sp0","net_type":"CLOS","net_attr":"","rank_addr_list":[{"addr_type":"IP","addr":"1.1.1.1","ports":["0/1"],"plane_id":"p0"}]},)"
      R"({"net_layer":3,"net_instance_id":"roce0","net_type":"CLOS","net_attr":"","rank_addr_list":[{"addr_type":"IP","addr":"1.1.1.1","ports":["0/1"],"plane_id":"p0"}]}]})");
  EXPECT_EQ(
      model::SerializeRankV2(build.table.rank_list[1]),
      R"({"rank_id":1,"local_id":1,"device_id":1,"level_list":[)"
      R"({"net_layer":0,"net_instance_id":"sp0","net_type":"CLOS","net_attr":"","rank_addr_list":[{"addr_type":"IP","addr":"1.1.1.1","ports":["0/1"],"plane_id":"p0"}]},)"
      R"({"net_layer":3,"net_instance_id":"CLUSTER1","net_type":"CLOS","net_attr":"","rank_addr_list":[]}]})");
  // The table is the v1 table plus the three v2 fields, in order.
  std::string text = model::SerializeRankTable(build.table);
  EXPECT_NE(text.find(R"("server_count":"1","total":0,"version":"2.0","rank_list":[)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(],"rank_count":2})"), std::string::npos);
}

TEST(RankTableBuilder, ScaleOutLabelUboeFallsBackToUbgAndPicksLevelTwo) {
  PodSpec a = ExamplePod(0);
  a.devices = 1;
  testing::Json alloc = testing::Json::parse(testing::AllocationJson(a));
  alloc["devices"][0]["levelList"] = {
      {{"level", 2}, {"info", {{"UBG", {{"net_layer", 2}, {"net_instance_id", "ubg"}}}}}}};
  a.allocation_override = alloc.dump();
  std::vector<PodInfo> pods = {Pod(a)};
  RankTableBuild build = Build(pods, 1, "npu", " uboe ");
  ASSERT_EQ(build.table.rank_list.size(), 1u);
  ASSERT_EQ(build.table.rank_list[0].level_list.size(), 1u);
  EXPECT_EQ(build.table.rank_list[0].level_list[0].net_instance_id, "ubg");
  EXPECT_EQ(build.table.rank_list[0].level_list[0].net_layer, 2);
}

TEST(RankTableBuilder, UnknownScaleOutLabelAddsNeitherLevelTwoNorThree) {
  PodSpec a = ExamplePod(0);
  a.devices = 1;
  std::vector<PodInfo> pods = {Pod(a)};
  RankTableBuild build = Build(pods, 1, "npu", "ib");
  ASSERT_EQ(build.table.rank_list.size(), 1u);
  EXPECT_TRUE(build.table.rank_list[0].level_list.empty());
  EXPECT_EQ(model::SerializeRankV2(build.table.rank_list[0]),
            R"({"rank_id":0,"local_id":0,"device_id":0})");
}

TEST(RankTableBuilder, OtherResourceTypesHaveNoRankList) {
  std::vector<PodInfo> pods = {Pod(ExamplePod(0))};
  RankTableBuild build = Build(pods, 1, "Ascend910", "ROCE");
  EXPECT_TRUE(build.table.rank_list.empty());
  EXPECT_EQ(build.table.version, "");
}

}  // namespace rank_table_builder_test
}  // namespace clusterd::cluster
