// The pure translations of the Recover adapter (server/recover_convert.h).
#include "server/recover_convert.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "recovery/signal.h"

namespace clusterd::server {
namespace recover_convert_test {

using ::testing::ElementsAre;

TEST(RecoverConvert, SignalBecomesAProcessManageSignalFieldByField) {
  recovery::Signal s =
      recovery::ChangeStrategySignal("job-1", "U-1", "downgrade", {{8, 1}, {9, 1}}, {1});
  s.extra_params = R"({"scale-in-strategy": "DP"})";
  s.timeout = 33;
  ::ProcessManageSignal p = SignalToProto(s);
  EXPECT_EQ(p.uuid(), "U-1");
  EXPECT_EQ(p.jobid(), "job-1");
  EXPECT_EQ(p.signaltype(), "changeStrategy");
  EXPECT_THAT(p.actions(), ElementsAre("change_strategy"));
  ASSERT_EQ(p.faultranks_size(), 2);
  EXPECT_EQ(p.faultranks(0).rankid(), "8");
  EXPECT_EQ(p.faultranks(0).faulttype(), "1");
  EXPECT_EQ(p.changestrategy(), "downgrade");
  EXPECT_EQ(p.timeout(), 33);
  EXPECT_THAT(p.noderankids(), ElementsAre("1"));
  EXPECT_EQ(p.extraparams(), R"({"scale-in-strategy": "DP"})");
}

TEST(RecoverConvert, KeepAliveCarriesOnlyTypeJobAndUuid) {
  ::ProcessManageSignal p = SignalToProto(recovery::KeepAliveSignal("job-1", ""));
  EXPECT_EQ(p.signaltype(), "keep-alive");
  EXPECT_EQ(p.jobid(), "job-1");
  EXPECT_TRUE(p.uuid().empty());
  EXPECT_EQ(p.actions_size(), 0);
  EXPECT_EQ(p.timeout(), 0);
}

TEST(RecoverConvert, FaultRanksMustBeDecimalIntegers) {
  ::ProcessFaultRequest req;
  auto* a = req.add_faultranks();
  a->set_rankid("3");
  a->set_faulttype("0");
  auto ok = ParseFaultRanks(req.faultranks());
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->at(0).rank, 3);
  EXPECT_EQ(ok->at(0).type, 0);

  auto* b = req.add_faultranks();
  b->set_rankid("x7");
  b->set_faulttype("1");
  auto bad = ParseFaultRanks(req.faultranks());
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("x7"));
}

::ProcessFaultRequest ReportOf(std::initializer_list<const char*> ranks) {
  ::ProcessFaultRequest req;
  for (const char* rank : ranks) {
    ::FaultRank* f = req.add_faultranks();
    f->set_rankid(rank);
    f->set_faulttype("1");
  }
  return req;
}

TEST(RecoverConvert, FaultRanksMustBeBelowTheWorldSize) {
  auto ok = ParseFaultRanks(ReportOf({"0", "15", "15"}).faultranks(), 16);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->size(), 3u);  // duplicates are the controller's to collapse (§8.4)
  auto past = ParseFaultRanks(ReportOf({"3", "16"}).faultranks(), 16);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(past.status().message(), "rankId 16 is outside the job's world size 16");
}

TEST(RecoverConvert, FaultRanksOfAJobOfUnknownSizeHaveAHardBound) {
  EXPECT_TRUE(ParseFaultRanks(ReportOf({"131071"}).faultranks()).ok());
  auto over = ParseFaultRanks(ReportOf({"131072"}).faultranks());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(over.status().message()),
              ::testing::HasSubstr("world size is not known yet"));
}

TEST(RecoverConvert, AReportNamesAtMostTheLargestWorldOfRanks) {
  ::ProcessFaultRequest req;
  for (int64_t i = 0; i <= kMaxWorldSize; ++i) {
    ::FaultRank* f = req.add_faultranks();
    f->set_rankid("1");
    f->set_faulttype("1");
  }
  auto many = ParseFaultRanks(req.faultranks(), 16);
  EXPECT_EQ(many.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(many.status().message(), "131073 entries, over the limit of 131072");
}

recovery::JobView ViewWithPods(std::initializer_list<int64_t> pod_ranks, int npus_per_pod) {
  recovery::JobView view;
  view.exists = true;
  view.npus_per_pod = npus_per_pod;
  for (int64_t rank : pod_ranks) view.pods[rank].name = "pod-" + std::to_string(rank);
  return view;
}

TEST(RecoverConvert, WorldSizeIsReplicasTimesNpusPerPod) {
  EXPECT_EQ(WorldSizeOf(ViewWithPods({0, 1}, 8), 2), 16);
  // A pod being re-created is still part of the world.
  EXPECT_EQ(WorldSizeOf(ViewWithPods({0}, 8), 2), 16);
  // A pod rank beyond the replicas widens it rather than refusing that pod's ranks.
  EXPECT_EQ(WorldSizeOf(ViewWithPods({0, 3}, 8), 2), 32);
  // A corrupt rank index cannot lift the bound past the hard maximum.
  EXPECT_EQ(WorldSizeOf(ViewWithPods({0, int64_t{1} << 40}, 8), 2), kMaxWorldSize);
}

TEST(RecoverConvert, WorldSizeIsUnknownWithoutPodsOrReplicas) {
  EXPECT_EQ(WorldSizeOf(ViewWithPods({}, 8), 2), std::nullopt);
  EXPECT_EQ(WorldSizeOf(ViewWithPods({0, 1}, 8), 0), std::nullopt);
}

TEST(RecoverConvert, IsolateRanksDropNonIntegers) {
  ::RecoverStatusRequest req;
  req.add_isolaterankids("4");
  req.add_isolaterankids("four");
  req.add_isolaterankids("-1");
  int dropped = 0;
  EXPECT_THAT(ParseIsolateRanks(req.isolaterankids(), &dropped), ElementsAre(4));
  EXPECT_EQ(dropped, 2);
}

TEST(RecoverConvert, StressResultsNeedRankKeys) {
  ::StressTestResult req;
  (*(*req.mutable_stressresult())["5"].mutable_rankresult())["aic"].set_code("2");
  auto ok = ParseStressResults(req);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->at(5).at("aic").code, "2");
  (*req.mutable_stressresult())["node-a"];
  EXPECT_FALSE(ParseStressResults(req).ok());
}

TEST(RecoverConvert, HardwareSnapshotDropsIgnoredLevelsAndNotReadyPseudoRanks) {
  cluster::JobFaultRanks j;
  j.job_id = "job-1";
  j.health = "UnHealthy";
  cluster::FaultRankEntry uce;
  uce.rank_id = 3;
  uce.pod_uid = "pod-0";
  uce.pod_rank = 0;
  uce.code = "80E01801";
  uce.level = "RestartRequest";
  uce.do_step_retry = true;
  uce.device_id = "3";
  cluster::FaultRankEntry ignored = uce;
  ignored.rank_id = 4;
  ignored.level = "NotHandleFault";
  cluster::FaultRankEntry presep = uce;
  presep.rank_id = 5;
  presep.level = "PreSeparateNPU";
  cluster::FaultRankEntry not_ready;
  not_ready.rank_id = 8;
  not_ready.level = "SeparateNPU";
  j.ranks = {uce, ignored, presep, not_ready};
  recovery::HardwareFaultsPublished out = HardwareFaultsOf(j);
  EXPECT_EQ(out.health, "UnHealthy");
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(out.faults[0].rank, 3);
  EXPECT_EQ(out.faults[0].pod_uid, "pod-0");
  EXPECT_EQ(out.faults[0].pod_rank, 0);
  EXPECT_EQ(out.faults[0].fault_code, "80E01801");
  EXPECT_TRUE(out.faults[0].do_step_retry);
}

TEST(RecoverConvert, TopologyComesFromTheRankTable) {
  cluster::JobRecord r;
  r.status = model::JobStatus::kRunning;
  model::RankTableServer s;
  s.server_name = "node-a";
  s.super_pod_id = 2;
  s.devices = {{"0", "10.0.0.1", "8", ""}, {"1", "10.0.0.2", "9", ""}};
  r.rank_table.server_list = std::vector<model::RankTableServer>{s};
  recovery::JobTopology t = TopologyOf(r, true);
  EXPECT_TRUE(t.job_known);
  EXPECT_TRUE(t.registered);
  EXPECT_TRUE(t.running);
  ASSERT_TRUE(t.nodes.contains("node-a"));
  EXPECT_EQ(t.nodes["node-a"].super_pod_id, 2);
  EXPECT_EQ(t.nodes["node-a"].device_ranks["1"], 9);
  EXPECT_FALSE(TopologyOf(std::nullopt, false).job_known);
}

TEST(RecoverConvert, SwitchRankListKeepsRanksAndOpsAligned) {
  ::SwitchRankList p = SwitchRankListToProto("job-1", {{8, 9}, {true, false}});
  EXPECT_THAT(p.rankid(), ElementsAre("8", "9"));
  EXPECT_THAT(p.op(), ElementsAre(true, false));
  EXPECT_EQ(p.jobid(), "job-1");
}

TEST(RecoverConvert, RecoveryJsonShowsStateStrategyFaultsAndHistory) {
  recovery::JobRecovery job = recovery::NewJobRecovery("job-1", recovery::JobConfig{});
  job.state = recovery::State::kWaitReportStopComplete;
  job.uuid = "U-1";
  job.decided = "recover";
  job.caches.normal = {{8, 1}};
  job.history.push_back(
      {absl::FromUnixMillis(1700000000123), "INIT", "faultOccur", "NotifyWaitFaultFlushingState"});
  recovery::JobIdentity id{"job-1", "default", "pt-pg", "pt"};
  nlohmann::ordered_json j = RecoveryJson(id, job, true);
  EXPECT_EQ(j["jobId"], "job-1");
  EXPECT_EQ(j["namespace"], "default");
  EXPECT_EQ(j["name"], "pt");
  EXPECT_EQ(j["state"], "WaitReportStopCompleteState");
  EXPECT_EQ(j["strategy"], "recover");
  EXPECT_EQ(j["uuid"], "U-1");
  EXPECT_EQ(j["subscribed"], true);
  EXPECT_TRUE(j["worldSize"].is_null());
  EXPECT_EQ(RecoveryJson(id, job, true, 16)["worldSize"], 16);
  EXPECT_EQ(j["faultRanks"].dump(), R"([{"rank":8,"type":1}])");
  ASSERT_EQ(j["history"].size(), 1u);
  EXPECT_EQ(j["history"][0]["at"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(j["history"][0]["event"], "faultOccur");
  EXPECT_EQ(j["history"][0]["to"], "NotifyWaitFaultFlushingState");
}

}  // namespace recover_convert_test
TEST(RecoverConvert, RecoveryJsonSaysWhatTheArmedTimersWaitFor) {
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  recovery::JobRecovery job = recovery::NewJobRecovery("job-1", recovery::JobConfig{});
  job.phase = recovery::Phase::kRestartAllDelay;
  job.timers[recovery::TimerKind::kStep] = now + absl::Seconds(42);
  job.timers[recovery::TimerKind::kPreExitGrace] = now - absl::Seconds(1);  // stale
  recovery::JobIdentity id{"job-1", "default", "pt-pg", "pt"};
  nlohmann::ordered_json j = RecoveryJson(id, job, true, std::nullopt, now);
  ASSERT_EQ(j["waiting"].size(), 1u) << j["waiting"].dump();
  EXPECT_EQ(j["waiting"][0]["for"], "all processes to restart");
  EXPECT_EQ(j["waiting"][0]["secondsLeft"], 42.0);
  job.timers[recovery::TimerKind::kPreExitGrace] = now + absl::Seconds(10);
  j = RecoveryJson(id, job, true, std::nullopt, now);
  ASSERT_EQ(j["waiting"].size(), 2u);
  EXPECT_EQ(j["waiting"][1]["for"], "the pre-exit grace");
}

}  // namespace clusterd::server
