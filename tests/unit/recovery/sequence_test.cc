// §15 of recovery-protocol.md as golden tests: the exact signals, in order, with their fields,
// and the reset ConfigMap content at each write.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace sequence_test {

using ::testing::ElementsAre;
using testing::Harness;
using testing::Hw;
using testing::MakeConfig;
using testing::MakeView;
using testing::Ranks;
using testing::T0;

class Section15 : public ::testing::Test {
 protected:
  Section15() : h_(MakeConfig("retry,recover,dump"), MakeView(2, 8)) {}
  Harness h_;
};

TEST_F(Section15, HappyPathProcessLevelReschedulingSignalsInOrder) {
  EXPECT_EQ(h_.job().config.strategies,
            (std::vector<std::string>{"retry", "recover", "dump", "exit"}));

  // 3. Subscribe resets the controller: reset ConfigMap <- clear.
  h_.Subscribe();
  EXPECT_THAT(h_.ResetOps(), ElementsAre("clear"));
  EXPECT_EQ(h_.state(), State::kInit);
  EXPECT_EQ(KeepAlive(h_.job()), KeepAliveSignal("J", ""));

  // 4. The fault centre publishes rank 10 (pod 1), not retry class: pre-exit after <= 10 s.
  h_.Hardware({Hw(10, 1)});
  EXPECT_EQ(h_.job().fault_pods.at(1), "uid-p1");
  EXPECT_EQ(h_.job().caches.normal, Ranks(10, 10));
  EXPECT_TRUE(h_.Signals().empty());
  h_.Elapse(absl::Seconds(10));
  ASSERT_EQ(h_.Signals().size(), 1u);
  const Signal pre_exit = h_.Signals()[0];
  EXPECT_EQ(pre_exit.signal_type, "preExitProcess");
  EXPECT_THAT(pre_exit.actions, ElementsAre("pre exit process"));
  EXPECT_EQ(pre_exit.fault_ranks, Ranks(10, 10));
  EXPECT_THAT(pre_exit.node_rank_ids, ElementsAre(1));
  EXPECT_FALSE(pre_exit.uuid.empty());
  EXPECT_EQ(h_.job().uuid, "");  // the pre-exit uuid is not stored

  // 5. ReportProcessFault: pod 1 already in faultPod, so no fault-type label.
  h_.ProcessFault({{10, 1}});
  EXPECT_EQ(h_.Replies().back().info, "receive ReportProcessFault");
  EXPECT_TRUE(h_.All<PatchPod>().empty());
  EXPECT_EQ(h_.job().health, "UnHealthy");

  // 6. notifyFaultFlushing, then stopTrain with a new uuid.
  ASSERT_EQ(h_.ResetJsons().size(), 2u);
  EXPECT_EQ(h_.ResetJsons()[1],
            "{\"RankList\":[],\"UpdateTime\":1718000010,\"RetryTime\":0,\"FaultFlushing\":true,"
            "\"GracefulExit\":0,\"RestartFaultProcess\":false}");
  ASSERT_EQ(h_.Signals().size(), 2u);
  const Signal stop = h_.Signals()[1];
  const std::string u1 = stop.uuid;
  EXPECT_NE(u1, pre_exit.uuid);
  EXPECT_EQ(stop, StopSignal("J", u1, Ranks(10, 10)));
  EXPECT_EQ(stop.change_strategy, "");
  EXPECT_EQ(stop.timeout, 0);
  EXPECT_EQ(h_.state(), State::kWaitReportStopComplete);

  // 7. StopComplete; 1 s flush wait.
  h_.StopComplete(0);
  EXPECT_EQ(h_.Replies().back().info, "jobId=J, uuid=" + u1 + ", receive ReportStopComplete");
  EXPECT_EQ(h_.state(), State::kWaitFaultFlushFinished);
  h_.Elapse(absl::Seconds(1));
  EXPECT_EQ(h_.state(), State::kNotifyGlobalFault);

  // 8. 10 s force-release pause, then reset ConfigMap `fault` (ranks 8-15) and globalFault.
  h_.Elapse(absl::Seconds(10));
  ASSERT_EQ(h_.ResetJsons().size(), 3u);
  std::string ranks;
  for (int r = 8; r <= 15; ++r) {
    if (!ranks.empty()) ranks += ",";
    ranks += "{\"RankId\":" + std::to_string(r) +
             ",\"LogicId\":0,\"Status\":\"fault\",\"Policy\":\"\",\"InitialPolicy\":\"\","
             "\"ErrorCode\":null,\"ErrorCodeHex\":\"\"}";
  }
  EXPECT_EQ(h_.ResetJsons()[2], "{\"RankList\":[" + ranks +
                                    "],\"UpdateTime\":1718000021,\"RetryTime\":0,"
                                    "\"FaultFlushing\":false,\"GracefulExit\":0,"
                                    "\"RestartFaultProcess\":false}");
  ASSERT_EQ(h_.Signals().size(), 3u);
  const Signal global = h_.Signals()[2];
  EXPECT_EQ(global.uuid, u1);
  EXPECT_EQ(global.signal_type, "globalFault");
  EXPECT_THAT(global.actions, ElementsAre("on_global_rank", "fault_nodes_exit"));
  EXPECT_EQ(global.fault_ranks, Ranks(8, 15));
  EXPECT_THAT(global.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(global.timeout, 0);
  EXPECT_EQ(h_.state(), State::kWaitReportRecoverStrategy);
  EXPECT_TRUE(h_.job().schedule_watch);
  EXPECT_EQ(h_.job().timers.at(TimerKind::kScheduleWatch), h_.now() + absl::Seconds(270));

  // 9-10. RecoverStrategy; the decision is `recover`.
  h_.Strategies({"retry", "recover", "dump", "exit"});
  EXPECT_EQ(h_.Replies().back().info, "jobId=J, uuid=" + u1 + ", receive ReportRecoverStrategy");
  ASSERT_EQ(h_.Signals().size(), 4u);
  const Signal decided = h_.Signals()[3];
  EXPECT_EQ(decided.uuid, u1);
  EXPECT_EQ(decided.signal_type, "changeStrategy");
  EXPECT_THAT(decided.actions, ElementsAre("change_strategy"));
  EXPECT_EQ(decided.change_strategy, "recover");
  EXPECT_EQ(decided.fault_ranks, Ranks(8, 15));
  EXPECT_THAT(decided.node_rank_ids, ElementsAre(1));
  EXPECT_EQ(decided.extra_params, "");
  EXPECT_EQ(h_.state(), State::kWaitReportProcessRecoverStatus);

  // 11. The replacement pod runs with AscendReal: the watcher posts true, reset CM <- clear.
  JobView replaced = MakeView(2, 8);
  replaced.pods[1].uid = "uid-p1-new";
  replaced.pods[1].name = "pt-1-new";
  h_.Elapse(absl::Seconds(5));
  h_.View(replaced);
  EXPECT_EQ(h_.ResetOps().back(), "clear");
  ASSERT_EQ(h_.ResetJsons().size(), 4u);
  EXPECT_EQ(h_.state(), State::kWaitReportProcessRecoverStatus);

  // 12. RecoverStatus success: recover-success, fault-job-info clean-up, reset, stream ends.
  h_.Status(0, "recover");
  EXPECT_EQ(h_.Replies().back().info, "jobId=J, uuid=" + u1 + ", receive ReportRecoverStatus");
  const auto patches = h_.All<PatchPodGroup>();
  ASSERT_FALSE(patches.empty());
  EXPECT_EQ(patches.back().patch["metadata"]["annotations"]["ProcessRecoverStatus"],
            "recover-success");
  const auto info = h_.All<UpdateFaultJobInfo>();
  ASSERT_EQ(info.size(), 1u);
  EXPECT_TRUE(info[0].remove);
  EXPECT_EQ(info[0].delay, absl::Seconds(10));
  EXPECT_EQ(h_.state(), State::kInit);
  EXPECT_EQ(h_.job().uuid, "");
  EXPECT_EQ(h_.ResetOps().back(), "clear");
  EXPECT_EQ(h_.All<EndStreams>().size(), 2u);  // the subscribe's and the final reset's

  EXPECT_THAT(h_.SignalSummary(),
              ElementsAre("preExitProcess", "stopTrain", "globalFault", "changeStrategy:recover"));
  EXPECT_TRUE(h_.Notes("order_mix").empty());
}

TEST_F(Section15, ReportBeforePreExitGraceEndsSendsPreExitFirst) {
  h_.Subscribe();
  h_.Hardware({Hw(10, 1)});
  h_.Elapse(absl::Seconds(2));
  h_.ProcessFault({{10, 1}});
  EXPECT_THAT(h_.SignalSummary(), ElementsAre("preExitProcess", "stopTrain"));
  EXPECT_EQ(h_.job().timers.count(TimerKind::kPreExitGrace), 0u);
}

// The online-recovery variant at the end of §15 (UCE on rank 3, pod 0).
TEST(Section15Variant, OnlineRecoveryUce) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  h.Subscribe();
  // The client's report goes to the fault centre only.
  h.ProcessFault({{3, 0}});
  const auto retry_reports = h.All<ReportRetryFaults>();
  ASSERT_EQ(retry_reports.size(), 1u);
  EXPECT_EQ(retry_reports[0].faults, (std::vector<FaultRank>{{3, 0}}));
  EXPECT_EQ(h.state(), State::kInit);
  // The fault centre publishes it with doStepRetry: faultOccur.
  h.Hardware({Hw(3, 0, "80E01801", /*step_retry=*/true, "RestartBusiness")});
  ASSERT_EQ(h.Signals().size(), 1u);
  EXPECT_EQ(h.Signals()[0].fault_ranks, (std::vector<FaultRank>{{3, 0}}));
  h.StopComplete(0);
  // No flush wait after the stop report.
  EXPECT_EQ(h.state(), State::kWaitReportRecoverStrategy);
  const Signal global = h.Signals()[1];
  EXPECT_THAT(global.actions, ElementsAre("on_global_rank"));
  EXPECT_EQ(global.fault_ranks, (std::vector<FaultRank>{{3, 0}}));
  EXPECT_EQ(global.timeout, 0);
  h.Strategies({"retry", "recover", "dump", "exit"});
  const Signal decided = h.Signals()[2];
  EXPECT_EQ(decided.change_strategy, "retry");
  EXPECT_EQ(decided.fault_ranks, (std::vector<FaultRank>{{3, 0}}));
  EXPECT_THAT(decided.node_rank_ids, ElementsAre(0));
  EXPECT_EQ(h.state(), State::kWaitReportStepRetryStatus);
  h.Status(0, "retry");
  EXPECT_EQ(h.All<PatchPodGroup>().back().patch["metadata"]["annotations"]["ProcessRecoverStatus"],
            "retry-success");
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_THAT(h.SignalSummary(), ElementsAre("stopTrain", "globalFault", "changeStrategy:retry"));
}

TEST(Section15Variant, NetworkRetryCarriesTimeout33AndWaitsForRouteConvergence) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  h.Subscribe();
  h.Hardware({Hw(9, 1, "8C1F860B", /*step_retry=*/true)});
  h.StopComplete(0);
  EXPECT_EQ(h.Signals()[1].timeout, 33);
  h.Strategies({"retry", "recover", "dump", "exit"});
  EXPECT_EQ(h.Signals().size(), 2u);  // 3 s HCCL route convergence first
  EXPECT_EQ(h.job().phase, Phase::kHcclDelay);
  h.Elapse(absl::Seconds(3));
  ASSERT_EQ(h.Signals().size(), 3u);
  EXPECT_EQ(h.Signals()[2].change_strategy, "retry");
  EXPECT_EQ(h.Signals()[2].fault_ranks, (std::vector<FaultRank>{{9, 2}}));
}

}  // namespace sequence_test
}  // namespace clusterd::recovery
