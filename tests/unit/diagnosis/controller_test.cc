#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "diagnosis/slow_node_controller.h"
#include "gtest/gtest.h"
#include "model/job_profiling_switch.h"
#include "store/object_store.h"
#include "unit/diagnosis/memory_profiling_data_source.h"
#include "unit/diagnosis/synthetic.h"

namespace clusterd::diagnosis {
namespace controller_test {

class RecordingSink : public PublicFaultSink {
 public:
  absl::Status SendPublicFault(const PublicFaultReport& report) override {
    if (failures_left > 0) {
      --failures_left;
      return absl::UnavailableError("fault centre down");
    }
    reports.push_back(report);
    return absl::OkStatus();
  }
  std::vector<PublicFaultReport> reports;
  int failures_left = 0;
};

constexpr char kJobId[] = "uid-job1";

std::string FeatConfJson(const std::string& job, int slow_node = 1, double p = 0.3) {
  return absl::StrCat(R"({"jobName":")", job, R"(","jobNamespace":"default","normalNumber":20,)",
                      R"("nSigma":3,"degradationPercentage":)", p,
                      R"(,"nConsecAnomaliesSignifySlow":3,"nSecondsDoOneDetection":30,)",
                      R"("clusterMeanDistance":1.3,"cardOneNode":8,"slowNode":)", slow_node, "}");
}

store::Object FeatConfMap(const std::string& job, std::string featconf) {
  return store::Object{{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata",
                        {{"name", absl::StrCat("ras-feature-slownode-", job)},
                         {"namespace", "mindx-dl"},
                         {"labels", {{"fd-ol-slow-node", "true"}}}}},
                       {"data", {{"FeatConf", std::move(featconf)}}}};
}

class SlowNodeControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto st = store::OpenStore("memory");
    ASSERT_TRUE(st.ok());
    store_ = std::move(*st);
    SlowNodeControllerOptions options;
    options.source = &data_;
    options.reporter_node = "clusterd-0";
    controller_ = std::make_unique<SlowNodeController>(*store_, clock_, sink_, options);
  }
  void TearDown() override { controller_.reset(); }

  // Writes the ranks' files as they are after `upto` steps.
  void WriteData(const testing::NodeData& d, int64_t upto, const std::string& job_id = kJobId) {
    for (const RankProfile& r : d.ranks) {
      std::ostringstream pg;
      pg << R"({"group_0":{"group_name":"tp","group_rank":0,"global_ranks":[0,1,2,3]},)"
         << R"("group_1":{"group_name":"tp","group_rank":0,"global_ranks":[4,5,6,7]}})";
      std::ostringstream st;
      st << "step time,durations\n";
      for (const Sample& s : r.step_time) {
        if (s.step <= upto) st << s.step << "," << static_cast<int64_t>(s.value) << "\n";
      }
      std::ostringstream comm;
      comm << "step_index,ZP_device,ZP_host,PP_device,PP_host,dataloader_host\n";
      for (size_t i = 0; i < r.comm->zp_device.size(); ++i) {
        if (r.comm->zp_device[i].step > upto) break;
        comm << r.comm->zp_device[i].step << "," << static_cast<int64_t>(r.comm->zp_device[i].value)
             << "," << static_cast<int64_t>(r.comm->zp_host[i].value) << ",0,0,"
             << static_cast<int64_t>(r.comm->dataloader_host[i].value) << "\n";
      }
      data_.SetRank(job_id, r.rank, {pg.str(), st.str(), comm.str()});
    }
  }

  void RunningJob(const std::string& job = "job1", std::string id = kJobId) {
    controller_->ObserveJob({"default", std::string(job), std::move(id), "running", {}, 0});
  }

  std::optional<model::ProfilingSwitch> DataTrace(const std::string& job = "job1") {
    auto cm = store_->Get({"configmaps", "default", absl::StrCat("data-trace-", job)});
    if (!cm.ok()) return std::nullopt;
    auto s = model::ParseProfilingSwitch(
        (*cm)["data"]["profilingSwitch"].template get<std::string>(), "t");
    if (!s.ok()) return std::nullopt;
    return *s;
  }

  void Period() {
    clock_.Advance(absl::Seconds(30));
    controller_->controller().RunUntilIdleForTest();
  }

  testing::MemoryProfilingDataSource data_;
  ManualClock clock_;
  RecordingSink sink_;
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<SlowNodeController> controller_;
};

TEST_F(SlowNodeControllerTest, SlowCardIsConfirmedReportedAndRecovered) {
  testing::Scenario s;
  s.fault = testing::Fault::kSlowCard;
  s.slow_rank = 2;
  s.fault_step = 41;
  s.steps = 200;
  testing::NodeData data = testing::Generate(s, 42);
  WriteData(data, 30);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();

  // 30 steps on every rank: initial profiling is done at once, detection runs with light
  // profiling (CommunicationOperator off).
  auto view = controller_->View("default", "job1");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->state, "detecting");
  EXPECT_EQ(view->step, 2);
  EXPECT_EQ(view->job_id, kJobId);
  ASSERT_EQ(view->ranks.size(), 8u);
  EXPECT_EQ(view->ranks[0].result, "normal");
  EXPECT_EQ(view->ranks[0].count, 24);  // 14 trimmed baseline samples + 10 newer steps
  EXPECT_NEAR(view->ranks[0].mean, 1e9, 2e7);
  EXPECT_EQ(DataTrace(), LightProfiling());

  // Five steps per period; the card slows down from step 41.
  int64_t upto = 30;
  int periods_to_report = 0;
  while (sink_.reports.empty() && periods_to_report < 20) {
    upto += 5;
    WriteData(data, upto);
    Period();
    ++periods_to_report;
    if (periods_to_report == 3) {
      // The first slow cluster result (steps 41..45) turned heavy profiling on.
      EXPECT_EQ(DataTrace(), HeavyProfiling());
    }
  }
  ASSERT_EQ(sink_.reports.size(), 1u);
  // Slow from the round of step 45 (period 3), confirmed on the fifth slow round.
  EXPECT_EQ(periods_to_report, 7);
  const PublicFaultReport& r = sink_.reports[0];
  EXPECT_EQ(r.resource, "fd-online");
  EXPECT_EQ(r.version, "1.0");
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].fault_code, "110001010");
  EXPECT_EQ(r.faults[0].fault_id, kJobId);
  EXPECT_EQ(r.faults[0].fault_type, "Node");
  EXPECT_EQ(r.faults[0].assertion, "once");
  EXPECT_EQ(r.faults[0].fault_time, absl::ToUnixMillis(clock_.Now()));
  ASSERT_EQ(r.faults[0].influence.size(), 1u);
  EXPECT_EQ(r.faults[0].influence[0].node_name, "clusterd-0");
  EXPECT_EQ(r.faults[0].influence[0].device_ids, (std::vector<int64_t>{2}));
  EXPECT_EQ(DataTrace(), LightProfiling());
  view = controller_->View("default", "job1");
  EXPECT_EQ(view->state, "degraded");
  EXPECT_TRUE(view->degraded);
  ASSERT_TRUE(view->last_result.has_value());
  EXPECT_EQ(view->last_result->slow_calculate_ranks, (std::vector<int64_t>{2}));
  EXPECT_EQ(view->ranks[2].result, "slow");

  // The card recovers: normal steps again.
  testing::Scenario healthy = s;
  healthy.fault = testing::Fault::kNone;
  testing::NodeData fine = testing::Generate(healthy, 43);
  for (auto& rank : data.ranks) {
    for (auto& v : rank.step_time) {
      if (v.step > upto) v.value = fine.ranks[rank.rank].step_time[v.step - 1].value;
    }
  }
  upto += 5;
  WriteData(data, upto);
  Period();
  ASSERT_EQ(sink_.reports.size(), 2u);
  EXPECT_EQ(sink_.reports[1].faults[0].fault_code, "100001011");
  EXPECT_EQ(sink_.reports[1].faults[0].influence[0].device_ids, (std::vector<int64_t>{2}));
  EXPECT_FALSE(controller_->View("default", "job1")->degraded);
}

TEST_F(SlowNodeControllerTest, WaitsForInitialProfilingAndStopsWhenTheJobEnds) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 1);
  WriteData(data, 10);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->View("default", "job1")->state, "profiling");
  EXPECT_EQ(controller_->View("default", "job1")->step, 1);
  EXPECT_EQ(DataTrace(), HeavyProfiling());

  WriteData(data, 25);
  clock_.Advance(absl::Seconds(10));
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->View("default", "job1")->step, 2);

  controller_->ObserveJob({"default", "job1", kJobId, "failed", {}, 0});
  controller_->controller().RunUntilIdleForTest();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->state, "waiting-for-job");
  EXPECT_EQ(view->step, 0);
  EXPECT_EQ(view->reason, "job is failed");
  EXPECT_EQ(DataTrace(), NoProfiling());
}

TEST_F(SlowNodeControllerTest, RankDirectoriesThatAppearLaterAreFound) {
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->View("default", "job1")->step, 1);
  EXPECT_TRUE(controller_->View("default", "job1")->ranks.empty());
  WriteData(testing::Generate(testing::Scenario{}, 4), 30);
  clock_.Advance(absl::Seconds(10));
  controller_->controller().RunUntilIdleForTest();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->step, 2);
  EXPECT_EQ(view->ranks.size(), 8u);
  EXPECT_EQ(view->ranks[7].node, "node-0");  // cardOneNode 8
}

TEST_F(SlowNodeControllerTest, NoDataWithinTheReportTimeoutStopsDetection) {
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  for (int i = 0; i < 720; ++i) {
    clock_.Advance(absl::Seconds(10));
    controller_->controller().RunUntilIdleForTest();
  }
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->reason, "no node finished initial profiling within node_report_timeout");
}

TEST_F(SlowNodeControllerTest, InvalidFeatConfIsShownWithItsReasonAndOtherJobsContinue) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  ASSERT_TRUE(
      store_->Create("configmaps", FeatConfMap("bad", R"({"jobName":"bad","normalNumber":0})"))
          .ok());
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  std::vector<SlowNodeJobView> views = controller_->Views();
  ASSERT_EQ(views.size(), 2u);
  auto bad = std::find_if(views.begin(), views.end(),
                          [](const SlowNodeJobView& v) { return v.state == "invalid"; });
  ASSERT_NE(bad, views.end());
  EXPECT_EQ(bad->config_map, "mindx-dl/ras-feature-slownode-bad");
  EXPECT_NE(bad->reason.find("normalNumber must be > 0, got 0"), std::string::npos) << bad->reason;
  EXPECT_EQ(controller_->View("default", "job1")->state, "detecting");
}

TEST_F(SlowNodeControllerTest, DisablingAndDeletingTheConfigMapStopDetection) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  ASSERT_EQ(controller_->View("default", "job1")->step, 2);

  auto cm = store_->Get({"configmaps", "mindx-dl", "ras-feature-slownode-job1"});
  ASSERT_TRUE(cm.ok());
  (*cm)["data"]["FeatConf"] = FeatConfJson("job1", 0);
  ASSERT_TRUE(store_->Update("configmaps", *cm).ok());
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->View("default", "job1")->state, "disabled");
  EXPECT_EQ(DataTrace(), NoProfiling());

  ASSERT_TRUE(store_->Delete({"configmaps", "mindx-dl", "ras-feature-slownode-job1"}).ok());
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(controller_->Views().empty());
}

TEST_F(SlowNodeControllerTest, AJobRestartWithANewIdStartsAgainOnItsData) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  WriteData(data, 30, "uid-new");
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->View("default", "job1")->job_id, kJobId);
  RunningJob("job1", "uid-new");
  controller_->controller().RunUntilIdleForTest();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->job_id, "uid-new");
  EXPECT_EQ(view->step, 2);
  EXPECT_EQ(view->rounds, 1);
}

TEST_F(SlowNodeControllerTest, ANodeRestartRestartsDetectionOfItsJobs) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  WriteData(data, 35);
  Period();
  ASSERT_EQ(controller_->View("default", "job1")->rounds, 2);
  controller_->NodeRestarted("node-7");  // not a node of the job
  controller_->controller().RunUntilIdleForTest();
  EXPECT_EQ(controller_->View("default", "job1")->rounds, 2);
  controller_->NodeRestarted("node-0");
  controller_->controller().RunUntilIdleForTest();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->step, 2);
  EXPECT_EQ(view->rounds, 1);  // started again: new baselines, first round
}

TEST_F(SlowNodeControllerTest, JobIdsOutsideTheAllowedAlphabetAreIgnored) {
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob("job1", "../../etc");
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->state, "waiting-for-job");
  EXPECT_EQ(view->step, 0);
}

TEST_F(SlowNodeControllerTest, PodGroupLookupFindsTheRunningJob) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  ASSERT_TRUE(
      store_
          ->Create("podgroups",
                   store::Object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                                 {"kind", "PodGroup"},
                                 {"metadata",
                                  {{"name", "job1-pg"},
                                   {"namespace", "default"},
                                   {"ownerReferences",
                                    store::Object::array({{{"apiVersion", "mindxdl.gitee.com/v1"},
                                                           {"kind", "AscendJob"},
                                                           {"name", "job1"},
                                                           {"uid", kJobId},
                                                           {"controller", true}}})}}},
                                 {"status", {{"phase", "Running"}}}})
          .ok());
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->job_id, kJobId);
  EXPECT_EQ(view->state, "detecting");
  auto trace = store_->Get({"configmaps", "default", "data-trace-job1"});
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ((*trace)["metadata"]["labels"]["reset"], "true");
  EXPECT_EQ((*trace)["metadata"]["ownerReferences"][0]["uid"], kJobId);
}

TEST_F(SlowNodeControllerTest, BadProfilingFilesAreReportedAndTheRankSkipped) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  // Rank 3's parallel_group.json becomes garbage; rank 4's directory disappears.
  data_.SetParallelGroups(kJobId, 3, "{\"group_0\":");
  data_.RemoveRank(kJobId, 4);
  WriteData(data, 35);
  data_.SetParallelGroups(kJobId, 3, "{\"group_0\":");
  data_.RemoveRank(kJobId, 4);
  Period();
  auto view = controller_->View("default", "job1");
  EXPECT_EQ(view->state, "detecting");
  EXPECT_EQ(view->rounds, 2);
  EXPECT_EQ(view->ranks[3].result, "no data");
  EXPECT_EQ(view->ranks[4].result, "no data");
  EXPECT_NE(view->reason.find("parallel_group.json"), std::string::npos) << view->reason;
}

TEST_F(SlowNodeControllerTest, FailedReportsAreRetriedOnTheClock) {
  testing::Scenario s;
  s.fault = testing::Fault::kSlowCard;
  s.fault_step = 31;
  testing::NodeData data = testing::Generate(s, 9);
  WriteData(data, 30);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  sink_.failures_left = 2;
  int64_t upto = 30;
  for (int i = 0; i < 5; ++i) {
    upto += 5;
    WriteData(data, upto);
    Period();
  }
  EXPECT_TRUE(sink_.reports.empty());  // confirmed, first attempt failed
  clock_.Advance(absl::Seconds(3));
  controller_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(sink_.reports.empty());  // second attempt failed
  clock_.Advance(absl::Seconds(3));
  controller_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.reports.size(), 1u);
  EXPECT_EQ(sink_.reports[0].faults[0].fault_code, "110001010");
}

TEST_F(SlowNodeControllerTest, JobViewJsonCarriesBaselinesAndTheLatestResult) {
  testing::NodeData data = testing::Generate(testing::Scenario{}, 2);
  WriteData(data, 30);
  ASSERT_TRUE(store_->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  RunningJob();
  ASSERT_TRUE(controller_->Resync().ok());
  controller_->controller().RunUntilIdleForTest();
  auto j = controller_->View("default", "job1")->ToJson();
  EXPECT_EQ(j["state"], "detecting");
  EXPECT_EQ(j["ranks"].size(), 8u);
  EXPECT_EQ(j["ranks"][0]["baselineSamples"], 24);
  EXPECT_EQ(j["lastResult"]["isSlow"], 0);
}

// Records switches and wakes the test on the first one.
class NotifyingSwitcher : public ProfilingSwitchWriter {
 public:
  absl::Status SetProfiling(const SlowNodeJob& job, const model::ProfilingSwitch& value) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back({job.job_id, value});
    if (!first_.HasBeenNotified()) first_.Notify();
    return absl::OkStatus();
  }
  bool WaitFirst() { return first_.WaitForNotificationWithTimeout(absl::Seconds(30)); }
  std::vector<std::pair<std::string, model::ProfilingSwitch>> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::pair<std::string, model::ProfilingSwitch>> calls_;
  absl::Notification first_;
};

TEST(SlowNodeControllerWatch, AConfigMapSeenByTheWatchStartsProfilingOnTheWorker) {
  auto st = store::OpenStore("memory");
  ASSERT_TRUE(st.ok());
  ManualClock clock;
  RecordingSink sink;
  NotifyingSwitcher switcher;
  testing::MemoryProfilingDataSource data;
  SlowNodeControllerOptions options;
  options.source = &data;
  SlowNodeController controller(**st, clock, sink, options, nullptr, &switcher);
  controller.ObserveJob({"default", "job1", kJobId, "running", {}, 0});
  ASSERT_TRUE(controller.Start().ok());
  ASSERT_TRUE((*st)->Create("configmaps", FeatConfMap("job1", FeatConfJson("job1"))).ok());
  ASSERT_TRUE(switcher.WaitFirst());
  controller.Stop();
  auto calls = switcher.calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0].first, kJobId);
  EXPECT_EQ(calls[0].second, HeavyProfiling());
}

TEST(PublicFaultReport, JsonIsTheSendPublicFaultRequest) {
  PublicFaultReport r = SlowNodeReport("uid-1", kSlowNodeFaultCode, {5}, "clusterd-0",
                                       absl::FromUnixMillis(1735690000123), "id-00000001");
  EXPECT_EQ(
      r.ToJson().dump(),
      R"({"id":"id-00000001","timestamp":1735690000123,"version":"1.0","resource":"fd-online",)"
      R"("faults":[{"faultId":"uid-1","faultType":"Node","faultCode":"110001010",)"
      R"("faultTime":1735690000123,"assertion":"once","faultLocation":{},)"
      R"("influence":[{"nodeName":"clusterd-0","nodeSN":"","deviceIds":[5]}],"description":""}]})");
  EXPECT_EQ(NewUuid().size(), 36u);
  EXPECT_NE(NewUuid(), NewUuid());
}

TEST(GoIntSlice, RendersLikeGo) {
  EXPECT_EQ(GoIntSlice({2, 5}), "[2 5]");
  EXPECT_EQ(GoIntSlice({}), "[]");
}

}  // namespace controller_test
}  // namespace clusterd::diagnosis
