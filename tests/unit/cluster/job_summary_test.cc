// Job-summary ConfigMaps and signals, jobs-ranktable-diagnosis.md §3.3-§3.5.
#include "cluster/job_summary.h"

#include "absl/strings/str_cat.h"
#include "cluster/rank_table_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "rank_table_golden.h"

namespace clusterd::cluster {
namespace job_summary_test {

using model::JobStatus;
using model::RankTable;
using model::RankTableServer;

const absl::Time kCreated = absl::FromUnixSeconds(1735689600);
const absl::Time kNow = absl::FromUnixSeconds(1735690000);

JobRecord ExampleRecord() {
  JobRecord r;
  r.job_id = testing::kJobUid;
  r.name = "pt-2x8";
  r.ns = "default";
  r.framework = "pytorch";
  r.resource_type = "Ascend910";
  r.sid = testing::kJobUid;
  r.create_time = kCreated;
  return r;
}

RankTable ExampleTable() {
  std::vector<model::PodInfo> pods = {
      *model::PodInfoFromObject(testing::PodObject(testing::ExamplePod(0))),
      *model::PodInfoFromObject(testing::PodObject(testing::ExamplePod(1)))};
  NodeSerials serials;
  serials.by_node_name = {{"node-a", "2102313LNR10P5100001"}, {"node-b", "2102313LNR10P5100002"}};
  std::vector<const model::PodInfo*> ptrs = {&pods[0], &pods[1]};
  return BuildJobRankTable(ptrs, 2, serials, "Ascend910", "").table;
}

// A table of `servers` servers with 8 devices each.
RankTable BigTable(int servers) {
  RankTable t;
  t.status = "complete";
  t.server_list.emplace();
  for (int s = 0; s < servers; ++s) {
    RankTableServer server;
    for (int d = 0; d < 8; ++d) {
      server.devices.push_back({std::to_string(d),
                                absl::StrCat("10.", s / 250, ".", s % 250, ".", d),
                                std::to_string(s * 8 + d), "0"});
    }
    server.server_id = absl::StrCat("192.168.", s / 250, ".", s % 250);
    server.host_ip = server.server_id;
    server.super_pod_id = -2;
    server.server_name = absl::StrCat("node-", s);
    server.server_sn = absl::StrCat("SN", s);
    server.pod_name = absl::StrCat("job-worker-", s);
    server.container_ids = {{"ascend", absl::StrCat("containerd://", s)}};
    t.server_list->push_back(std::move(server));
  }
  t.server_count = std::to_string(servers);
  return t;
}

TEST(JobSummary, ConfigMapNames) {
  EXPECT_EQ(JobSummaryConfigMapName("pt-2x8", 0), "job-summary-pt-2x8");
  EXPECT_EQ(JobSummaryConfigMapName("pt-2x8", 2), "job-summary-pt-2x8-2");
}

TEST(JobSummary, SmallTableIsOneSliceWithTotalOne) {
  std::vector<std::string> slices = SliceRankTable(ExampleTable());
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0], testing::kRankTableExample22);
}

TEST(JobSummary, TableWithoutServersHasNoSlice) {
  RankTable t;
  t.server_list.emplace();
  EXPECT_TRUE(SliceRankTable(t).empty());
  EXPECT_TRUE(SliceRankTable(RankTable{}).empty());
}

TEST(JobSummary, BigTableIsCutIntoSlicesUnderTheLimitKeepingEveryServerOnce) {
  RankTable t = BigTable(3000);
  std::vector<std::string> slices = SliceRankTable(t);
  ASSERT_GT(slices.size(), 1u);
  size_t servers = 0;
  int64_t next_rank = 0;
  for (const std::string& slice : slices) {
    EXPECT_LE(slice.size(), kMaxSummarySliceBytes);
    nlohmann::json j = nlohmann::json::parse(slice);
    EXPECT_EQ(j["total"], slices.size());
    EXPECT_EQ(j["server_count"], "3000");
    for (const auto& s : j["server_list"]) {
      EXPECT_EQ(s["device"][0]["rank_id"], std::to_string(next_rank));
      next_rank += 8;
      ++servers;
    }
  }
  EXPECT_EQ(servers, 3000u);
  // Each slice is as long as possible: adding the next server would pass the limit.
  nlohmann::json first = nlohmann::json::parse(slices[0]);
  EXPECT_GT(slices[0].size() + slices[0].size() / first["server_list"].size(),
            kMaxSummarySliceBytes);
}

TEST(JobSummary, ServerBiggerThanTheLimitIsASliceOfItsOwn) {
  RankTable t = BigTable(3);
  std::vector<std::string> slices = SliceRankTable(t, 100);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_NE(slices[1].find(R"("rank_id":"8")"), std::string::npos);
  EXPECT_NE(slices[2].find(R"("total":3)"), std::string::npos);
}

TEST(JobSummary, RankListIsSlicedWithItsServers) {
  RankTable t = BigTable(4);
  for (int r = 0; r < 32; ++r) t.rank_list.push_back({r, r % 8, r % 8, {}});
  t.rank_count = 32;
  t.version = "2.0";
  std::string one_server = model::SerializeRankTableServer((*t.server_list)[0]);
  // Room for two servers and their ranks per slice.
  std::vector<std::string> slices = SliceRankTable(t, 2 * one_server.size() + 1200);
  ASSERT_EQ(slices.size(), 2u);
  nlohmann::json second = nlohmann::json::parse(slices[1]);
  EXPECT_EQ(second["server_list"].size(), 2u);
  EXPECT_EQ(second["rank_list"].size(), 16u);
  EXPECT_EQ(second["rank_list"][0]["rank_id"], 16);
  EXPECT_EQ(second["rank_count"], 32);
}

TEST(JobSummary, InitConfigMapIsPendingAndInitializing) {
  JobRecord r = ExampleRecord();
  ConfigMapWrite w = InitSummaryWrite(r);
  EXPECT_EQ(w.mode, WriteMode::kCreateFirst);
  EXPECT_EQ(
      w.config_map.dump(),
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"job-summary-pt-2x8","namespace":"default",)"
      R"("labels":{"outside-job-info":"true","ring-controller.atlas":"ascend-910"}},)"
      R"("data":{"job_name":"pt-2x8","job_id":"7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11","framework":"pytorch",)"
      R"("job_status":"pending","cm_index":"0","total":"1","hccl.json":"{\"status\":\"initializing\"}",)"
      R"("operator":"add","time":"1735689600","sid":"7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11"}})");
}

TEST(JobSummary, NpuJobsCarryNoRingControllerLabel) {
  JobRecord r = ExampleRecord();
  r.resource_type = "npu";
  ConfigMapWrite w = InitSummaryWrite(r);
  EXPECT_FALSE(w.config_map["metadata"]["labels"].contains("ring-controller.atlas"));
  EXPECT_EQ(w.config_map["metadata"]["labels"]["outside-job-info"], "true");
}

// The example ConfigMap of §3.5, after the job became running.
TEST(JobSummary, RunningExampleConfigMap) {
  JobRecord r = ExampleRecord();
  r.status = JobStatus::kRunning;
  r.master_addr = "192.168.0.11";
  r.rank_table = ExampleTable();
  std::vector<std::string> slices = SliceRankTable(r.rank_table);
  r.total_cm_num = static_cast<int64_t>(slices.size());
  std::vector<ConfigMapWrite> writes = UpdateSummaryWrites(r, slices, kNow);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].mode, WriteMode::kUpdateFirst);
  const auto& data = writes[0].config_map["data"];
  EXPECT_EQ(data["job_name"], "pt-2x8");
  EXPECT_EQ(data["job_status"], "running");
  EXPECT_EQ(data["cm_index"], "0");
  EXPECT_EQ(data["total"], "1");
  EXPECT_EQ(data["operator"], "add");
  EXPECT_EQ(data["time"], "1735689600");
  EXPECT_EQ(data["sharedTorIp"], "");
  EXPECT_EQ(data["masterAddr"], "192.168.0.11");
  EXPECT_EQ(data["hccl.json"], testing::kRankTableExample22);
  EXPECT_FALSE(data.contains("deleteTime"));
}

TEST(JobSummary, FinishedStatusCarriesDeleteTimeNow) {
  JobRecord r = ExampleRecord();
  r.status = JobStatus::kFailed;
  r.framework = "mindspore";
  std::vector<ConfigMapWrite> writes = UpdateSummaryWrites(r, {}, kNow);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].config_map["data"]["deleteTime"], "1735690000");
  EXPECT_EQ(writes[0].config_map["data"]["hccl.json"], "");  // zero servers: empty value
  EXPECT_FALSE(writes[0].config_map["data"].contains("masterAddr"));
}

TEST(JobSummary, PreDeleteRewritesEverySliceWithOperatorDelete) {
  JobRecord r = ExampleRecord();
  r.status = JobStatus::kFailed;
  r.pre_deleted = true;
  r.delete_time = kNow;
  r.total_cm_num = 2;
  std::vector<ConfigMapWrite> writes = PreDeleteSummaryWrites(r, {"slice-0", "slice-1"});
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[1].config_map["metadata"]["name"], "job-summary-pt-2x8-1");
  EXPECT_EQ(writes[1].mode, WriteMode::kCreateFirst);
  const auto& data = writes[1].config_map["data"];
  EXPECT_EQ(data["operator"], "delete");
  EXPECT_EQ(data["cm_index"], "1");
  EXPECT_EQ(data["total"], "2");
  EXPECT_EQ(data["hccl.json"], "slice-1");
  EXPECT_EQ(data["deleteTime"], "1735690000");
  EXPECT_EQ(data["job_status"], "failed");
}

TEST(JobSummary, PreDeleteOfATableWithoutServersWritesInitializing) {
  JobRecord r = ExampleRecord();
  r.pre_deleted = true;
  std::vector<ConfigMapWrite> writes = PreDeleteSummaryWrites(r, {});
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].config_map["data"]["hccl.json"], R"({"status":"initializing"})");
}

TEST(JobSummary, SignalFields) {
  JobRecord r = ExampleRecord();
  r.status = JobStatus::kRunning;
  r.master_addr = "192.168.0.11";
  model::JobSummarySignal s = SummarySignal(r, "add", "{}", kNow);
  EXPECT_EQ(s.uuid, "");
  EXPECT_EQ(s.job_id, testing::kJobUid);
  EXPECT_EQ(s.job_name, "pt-2x8");
  EXPECT_EQ(s.ns, "default");
  EXPECT_EQ(s.framework, "pytorch");
  EXPECT_EQ(s.job_status, "running");
  EXPECT_EQ(s.time, "1735689600");
  EXPECT_EQ(s.cm_index, "0");
  EXPECT_EQ(s.total, "1");
  EXPECT_EQ(s.hccl_json, "{}");
  EXPECT_EQ(s.delete_time, "");
  EXPECT_EQ(s.master_addr, "192.168.0.11");
  EXPECT_EQ(s.op, "add");
  EXPECT_EQ(s.sid, testing::kJobUid);
  r.status = JobStatus::kComplete;
  r.framework = "mindspore";
  s = SummarySignal(r, "delete", "{}", kNow);
  EXPECT_EQ(s.delete_time, "1735690000");
  EXPECT_EQ(s.master_addr, "");
}

TEST(JobSummary, SignalHcclJsonIsEmptiedAboveFortyThousandRankIds) {
  std::string json;
  for (int i = 0; i < 40000; ++i) json += "\"rank_id\"";
  EXPECT_EQ(LimitSignalHcclJson(json), json);
  EXPECT_EQ(LimitSignalHcclJson(json + "rank_id"), "");
}

TEST(JobSummary, SnapshotBatchesByNpuCountAndSendsHugeJobsAlone) {
  std::vector<JobRecord> records(4, ExampleRecord());
  records[0].rank_table = BigTable(3000);  // 24 000 NPUs
  records[1].rank_table = BigTable(2500);  // 20 000: would pass 40 000 with the first
  records[2].rank_table = BigTable(5001);  // 40 008: alone, HcclJson ""
  records[3].rank_table = RankTable{};     // never built
  for (int i = 0; i < 4; ++i) records[i].job_id = absl::StrCat("job-", i);
  auto batches = SnapshotBatches(records, kNow);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0][0].job_id, "job-0");
  EXPECT_EQ(batches[1][0].job_id, "job-1");
  EXPECT_EQ(batches[2][0].job_id, "job-2");
  EXPECT_EQ(batches[2][0].hccl_json, "");
  EXPECT_EQ(batches[3][0].hccl_json,
            R"({"status":"","server_list":null,"server_count":"","total":0})");
  for (const auto& b : batches) EXPECT_EQ(b[0].op, "add");
  EXPECT_TRUE(SnapshotBatches({}, kNow).empty());
}

}  // namespace job_summary_test
}  // namespace clusterd::cluster
