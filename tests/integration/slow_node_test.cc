// Slow-node diagnosis end to end (issue 9, jobs-ranktable-diagnosis.md §6): a real clusterd on a
// `dir` store with --profiling-root, a job placed by the mini scheduler, a
// ras-feature-slownode-<job> ConfigMap and the ranks' steptime.csv / comm.csv /
// parallel_group.json written by the test as the node-side parser would. One rank turns slow;
// the public fault 110001010 must reach the fault centre's view on the job's node, and
// `clusterctl get slownode` must show the job.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "sim/mini_scheduler.h"
#include "sim/sim_nodes.h"
#include "sim/sim_profiling.h"
#include "test_env.h"

namespace clusterd {
namespace slow_node_test {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr int kRanks = 8;
constexpr int kTpSize = 4;
constexpr int kSlowRank = 2;
constexpr int64_t kInitialSteps = 30;  // written before detection starts (≥ 20, §6.2 step 3)
constexpr int64_t kFaultStep = 36;     // first step of the slow card

Json FeatConfMap(const std::string& job) {
  // nSecondsDoOneDetection = 1: one round per second, so five slow rounds take seconds.
  const std::string featconf = absl::StrCat(
      R"({"jobName":")", job, R"(","jobNamespace":"default","normalNumber":20,"nSigma":3,)",
      R"("degradationPercentage":0.3,"nConsecAnomaliesSignifySlow":3,"nSecondsDoOneDetection":1,)",
      R"("clusterMeanDistance":1.3,"cardOneNode":8,"slowNode":1})");
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", absl::StrCat("ras-feature-slownode-", job)},
                {"namespace", "mindx-dl"},
                {"labels", {{"fd-ol-slow-node", "true"}}}}},
              {"data", {{"FeatConf", featconf}}}};
}

TEST(SlowNodeIntegration, SlowRankIsReportedAsPublicFaultAndShownByClusterctl) {
  testing::TempDir dir;
  const std::string state = dir.path() + "/state";
  const std::string prof = dir.path() + "/prof";
  fs::create_directories(prof);
  sim::ClusterSpec cluster;
  cluster.nodes = 1;
  cluster.npus_per_node = 8;
  // The cluster first: the job's node must be known when clusterd starts.
  auto store = store::OpenStore("dir:" + state);
  ASSERT_TRUE(store.ok()) << store.status();
  sim::SimNodes nodes(**store, cluster, CLUSTERD_DATA_DIR);
  ASSERT_TRUE(nodes.Start().ok());
  sim::JobSpec job;
  job.name = "slow";
  job.pods = 1;
  job.npus_per_pod = 8;
  sim::MiniScheduler scheduler(**store, Clock::Real(), cluster, {job}, nullptr);
  ASSERT_TRUE(scheduler.Start().ok());
  const auto placement = scheduler.Placements("slow");
  ASSERT_EQ(placement.size(), 1u);
  const std::string node = sim::SimNodeName(placement[0].node_index);
  const std::string job_id = scheduler.JobUid("slow");

  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/run";
  // The faults' nodeName is the reporter's (the original: the ClusterD pod's host name); here
  // the job's node, so that the fault lands on its NPU kSlowRank.
  options.extra_args = {"--profiling-root", prof, "--slownode-reporter-node", node};
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();

  // Rank kSlowRank computes slowly from kFaultStep on (sim/sim_profiling.h).
  sim::SimProfilingFiles files(prof, job_id, kRanks, kTpSize);
  ASSERT_TRUE(files.Init().ok());
  auto append = [&](int64_t step) {
    if (step == kFaultStep) files.SetSlowRank(kSlowRank, 0.5);
    ASSERT_TRUE(files.Append(step, 1000).ok());
  };
  int64_t step = 0;
  while (step < kInitialSteps) append(++step);
  ASSERT_TRUE((*store)->Create("configmaps", FeatConfMap("slow")).ok());

  httplib::Client http("http://" + (*proc)->http_address());
  auto slow_fault_on_node = [&] {
    auto res = http.Get(absl::StrCat("/api/clusterd/v1/faults?node=", node));
    if (!res || res->status != 200) return false;
    Json body = Json::parse(res->body, nullptr, false);
    if (!body.is_object() || !body.contains("items")) return false;
    for (const auto& item : body["items"]) {
      if (item.value("code", "") == "110001010" && item.value("source", "") == "public") {
        return true;
      }
    }
    return false;
  };
  // Four steps per second on every rank; a detection round every second.
  bool reported = false;
  const absl::Time deadline = absl::Now() + absl::Seconds(45);
  while (!reported && absl::Now() < deadline) {
    append(++step);
    absl::SleepFor(absl::Milliseconds(250));
    reported = slow_fault_on_node();
  }
  EXPECT_TRUE(reported) << "no 110001010 on " << node << " after " << step << " steps";

  auto view = http.Get("/api/clusterd/v1/slownode/slow?namespace=default");
  ASSERT_TRUE(view);
  ASSERT_EQ(view->status, 200) << view->body;
  Json v = Json::parse(view->body);
  EXPECT_EQ(v.value("jobId", ""), job_id);
  EXPECT_EQ(v.value("state", ""), "degraded") << view->body;
  EXPECT_EQ(v.value("step", 0), 2);
  ASSERT_TRUE(v["lastResult"].is_object()) << view->body;
  EXPECT_EQ(v["lastResult"]["slowCalculateRanks"], Json::array({kSlowRank})) << view->body;

  const std::string ctl = absl::StrCat(CLUSTERCTL_BIN, " --addr ", (*proc)->grpc_address(),
                                       " --http ", (*proc)->http_address());
  testing::CommandResult table = testing::RunCommand(ctl + " get slownode");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "SLOW RANKS")) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "slow (")) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "degraded")) << table.output;
  testing::CommandResult one = testing::RunCommand(ctl + " get slownode slow -o json");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  Json j = Json::parse(one.output, nullptr, false);
  ASSERT_TRUE(j.is_object()) << one.output;
  EXPECT_EQ(j.value("jobName", ""), "slow");
  testing::CommandResult missing = testing::RunCommand(ctl + " get slownode nosuchjob");
  EXPECT_NE(missing.exit_code, 0) << missing.output;

  // The operators' log line (§6.2 step 6).
  std::stringstream text;
  text << std::ifstream((*proc)->log_path()).rdbuf();
  EXPECT_TRUE(absl::StrContains(text.str(), "got degradation, slow rank ids: [2]"));
  if (HasFailure()) std::cerr << "---- clusterd log ----\n" << text.str() << "----\n";
  scheduler.Stop();
  nodes.Stop();
  auto code = (*proc)->Stop();
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
}

}  // namespace slow_node_test
}  // namespace clusterd
