// §9.6 platform mode: the PodGroup annotations are the interface to a third-party AI platform.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace platform_test {

using ::testing::ElementsAre;
using testing::Harness;
using testing::Hw;
using testing::MakeConfig;
using testing::MakeView;
using testing::Ranks;

class Platform : public ::testing::Test {
 protected:
  Platform()
      : annotations_{{"ProcessRecoverStrategy", ""}},
        h_(MakeConfig("retry,recover,dump", {}, {{"ProcessRecoverStrategy", ""}}),
           MakeView(2, 8, {}, annotations_)) {}

  void Annotate(const std::string& key, const std::string& value) {
    annotations_[key] = value;
    h_.View(MakeView(2, 8, {}, annotations_));
  }

  std::string LastAnnotationPatch(const std::string& key) const {
    const auto patches = h_.All<PatchPodGroup>();
    for (auto it = patches.rbegin(); it != patches.rend(); ++it) {
      const auto& a = it->patch["metadata"]["annotations"];
      if (a.contains(key)) return a[key];
    }
    return "<none>";
  }

  StringMap annotations_;
  Harness h_;
};

TEST_F(Platform, RecoverDecidedByThePlatform) {
  ASSERT_TRUE(h_.job().config.platform_mode);
  h_.Subscribe();
  h_.ProcessFault({{10, 1}});
  // Waits for ProcessRecoverStrategy to hold retry, recover or dump.
  EXPECT_EQ(h_.state(), State::kNotifyWaitFaultFlushing);
  EXPECT_EQ(h_.job().phase, Phase::kWaitPlatStrategy);
  Annotate("ProcessRecoverStrategy", " recover,");
  EXPECT_EQ(h_.job().plat_strategy, "recover");
  EXPECT_EQ(h_.state(), State::kWaitReportStopComplete);
  h_.StopComplete(0);
  h_.Elapse(absl::Seconds(11));
  // Confirm/result exchange on the normal faults (before expansion).
  EXPECT_EQ(LastAnnotationPatch("ProcessConfirmFault"), "10:1");
  EXPECT_EQ(h_.job().phase, Phase::kPlatResultWait);
  Annotate("ProcessConfirmFault", "10:1");
  Annotate("ProcessResultFault", "10:1,bad,12:1");
  const Signal global = h_.Signals().back();
  EXPECT_EQ(global.signal_type, "globalFault");
  EXPECT_EQ(global.fault_ranks, Ranks(8, 15));
  h_.Strategies({"retry", "recover", "dump", "exit"});
  // recover in platform mode waits for RankTableReady.
  EXPECT_EQ(h_.job().phase, Phase::kRankTableWait);
  Annotate("RankTableReady", "true");
  EXPECT_EQ(h_.Signals().back().change_strategy, "recover");
  h_.Status(0, "recover");
  EXPECT_EQ(LastAnnotationPatch("ProcessRecoverStatus"), "recover-success");
  EXPECT_EQ(h_.state(), State::kInit);
}

TEST_F(Platform, StrategyWaitTimesOutAndHandsTheJobToTheScheduler) {
  h_.Subscribe();
  h_.ProcessFault({{10, 1}});
  Annotate("ProcessRecoverStrategy", "bogus");
  h_.Elapse(absl::Seconds(300));
  EXPECT_EQ(h_.state(), State::kFaultRetry);
}

TEST_F(Platform, NonEmptyConfirmFaultFailsTheExchange) {
  Annotate("ProcessConfirmFault", "1:1");
  Annotate("ProcessRecoverStrategy", "recover");
  h_.Subscribe();
  h_.ProcessFault({{10, 1}});
  h_.StopComplete(0);
  h_.Elapse(absl::Seconds(11));
  EXPECT_EQ(h_.state(), State::kFaultRetry);
}

TEST_F(Platform, ResultWaitTimesOut) {
  Annotate("ProcessRecoverStrategy", "recover");
  h_.Subscribe();
  h_.ProcessFault({{10, 1}});
  h_.StopComplete(0);
  h_.Elapse(absl::Seconds(11));
  h_.Elapse(absl::Seconds(300));
  EXPECT_EQ(h_.state(), State::kFaultRetry);
}

TEST_F(Platform, RankTableNotReadyFallsBackToDumpOrExit) {
  Annotate("ProcessRecoverStrategy", "recover");
  h_.Subscribe();
  h_.ProcessFault({{10, 1}});
  h_.StopComplete(0);
  h_.Elapse(absl::Seconds(11));
  Annotate("ProcessResultFault", "");
  h_.Strategies({"recover", "dump", "exit"});
  Annotate("ProcessRecoverStrategy", "dump");
  Annotate("RankTableReady", "false");  // non-empty, not "true": fails at once
  EXPECT_EQ(h_.Signals().back().change_strategy, "dump");
}

TEST_F(Platform, RetryReachableInPlatformMode) {
  // The reference cannot start a retry cycle in platform mode (§9.6); we can.
  h_.Subscribe();
  h_.Hardware({Hw(3, 0, "80E01801", true)});
  EXPECT_EQ(h_.state(), State::kNotifyWaitFaultFlushing);
  Annotate("ProcessRecoverStrategy", "retry");
  h_.StopComplete(0);
  EXPECT_EQ(LastAnnotationPatch("ProcessConfirmFault"), "3:0");
  Annotate("ProcessResultFault", "");
  const Signal global = h_.Signals().back();
  EXPECT_THAT(global.actions, ElementsAre("on_global_rank"));
  EXPECT_EQ(global.fault_ranks, (std::vector<FaultRank>{{3, 0}}));
  h_.Strategies({"retry", "recover", "dump", "exit"});
  EXPECT_EQ(h_.Signals().back().change_strategy, "retry");
  h_.Status(0, "retry");
  EXPECT_EQ(LastAnnotationPatch("ProcessRecoverStatus"), "retry-success");
}

TEST_F(Platform, RetryResultWithANormalFaultSwitchesToTheExitVariantWithTheMergedSet) {
  // Quirk 9, fixed: the merged set is used, not the empty normal cache.
  h_.Subscribe();
  h_.Hardware({Hw(3, 0, "80E01801", true)});
  Annotate("ProcessRecoverStrategy", "retry");
  h_.StopComplete(0);
  Annotate("ProcessResultFault", "12:1");
  const Signal global = h_.Signals().back();
  EXPECT_THAT(global.actions, ElementsAre("on_global_rank", "fault_nodes_exit"));
  EXPECT_EQ(global.fault_ranks, Ranks(0, 15));
  EXPECT_THAT(global.node_rank_ids, ElementsAre(0, 1));
  EXPECT_EQ(h_.All<WriteResetConfig>().back().ranks.size(), 16u);
}

TEST_F(Platform, ScheduleChecksFinishAtOnce) {
  Annotate("ProcessRecoverStrategy", "dump");
  h_.Subscribe();
  h_.ProcessFault({{10, 1}});
  // dump-only in platform mode + UnHealthy: dump at once.
  EXPECT_EQ(h_.state(), State::kWaitReportDumpStatus);
  h_.Status(0, "dump");
  // ListenSchedule and the restart-all wait are immediate: FaultRetry next.
  EXPECT_EQ(h_.state(), State::kFaultRetry);
}

}  // namespace platform_test
}  // namespace clusterd::recovery
