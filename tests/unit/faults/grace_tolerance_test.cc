#include "faults/grace_tolerance.h"

#include "gtest/gtest.h"

namespace clusterd::faults {
namespace grace_tolerance_test {

using model::FaultLevel;

constexpr int64_t kT0 = 1718000000000;
constexpr int64_t kS = 1000;

GraceNpuView View(int npu, int rank, FaultLevel level, int64_t since = kT0) {
  GraceNpuView v;
  v.npu_id = npu;
  v.rank_id = rank;
  v.level = level;
  if (model::IsFault(level)) {
    v.error_codes = {2162169857};  // 0x80E01801
    v.error_code_hex = "80E01801";
  }
  v.fault_since_ms = since;
  return v;
}

std::string Status(const GraceJobTracker& t, int i = 0) { return t.RankList()[i].status; }

TEST(GraceJobTracker, RestartBusinessThatHealsIsRecoveredWithoutReset) {
  GraceJobTracker t(GraceTolerance{}, true);
  GraceCommands c = t.Advance({View(3, 11, FaultLevel::kRestartBusiness)}, {}, kT0);
  EXPECT_TRUE(c.write_reset_config);
  ASSERT_EQ(t.RankList().size(), 1u);
  const model::TaskDevInfo d = t.RankList()[0];
  EXPECT_EQ(d.rank_id, 11);
  EXPECT_EQ(d.logic_id, 3);
  EXPECT_EQ(d.status, "unrecovered");
  EXPECT_EQ(d.policy, "restart");
  EXPECT_EQ(d.initial_policy, "restart");
  EXPECT_EQ(d.error_code, (std::vector<int64_t>{2162169857}));
  EXPECT_EQ(d.error_code_hex, "80E01801");
  EXPECT_EQ(t.NextDeadlineMs(), kT0 + 30 * kS);  // WaitProcessReadCMTime

  EXPECT_FALSE(
      t.Advance({View(3, 11, FaultLevel::kRestartBusiness)}, {}, kT0 + 30 * kS).write_reset_config);
  EXPECT_EQ(t.NextDeadlineMs(), kT0 + 45 * kS);  // + WaitFaultSelfHealingTime
  c = t.Advance({View(3, 11, FaultLevel::kNormalNPU)}, {}, kT0 + 40 * kS);
  EXPECT_TRUE(c.write_reset_config);
  EXPECT_TRUE(c.hot_reset.empty());
  EXPECT_EQ(Status(t), "recovered");
}

TEST(GraceJobTracker, RestartBusinessThatPersistsEscalatesToAHotReset) {
  GraceJobTracker t(GraceTolerance{}, true);
  t.Advance({View(3, 11, FaultLevel::kRestartBusiness)}, {}, kT0);
  t.Advance({View(3, 11, FaultLevel::kRestartBusiness)}, {}, kT0 + 30 * kS);
  GraceCommands c = t.Advance({View(3, 11, FaultLevel::kRestartBusiness)}, {}, kT0 + 45 * kS);
  EXPECT_TRUE(c.write_reset_config);
  EXPECT_EQ(t.RankList()[0].policy, "reset");
  EXPECT_EQ(t.RankList()[0].initial_policy, "restart");
  EXPECT_EQ(c.hot_reset, (std::vector<int>{3}));  // the processes have stopped: reset at once
  c = t.Advance({View(3, 11, FaultLevel::kRestartBusiness)}, {{3, true}}, kT0 + 56 * kS);
  EXPECT_EQ(Status(t), "recovered");
}

TEST(GraceJobTracker, ResetWaitsForTheRingAndPersistenceOffA910B) {
  GraceJobTracker t(GraceTolerance{}, /*reset_without_persistence=*/false);
  GraceNpuView v = View(1, 1, FaultLevel::kRestartNPU);
  t.Advance({v}, {}, kT0);
  EXPECT_EQ(t.RankList()[0].policy, "reset");
  t.Advance({v}, {}, kT0 + 30 * kS);
  EXPECT_EQ(t.NextDeadlineMs(), kT0 + 60 * kS + 1);  // the fault must persist > 60 s
  EXPECT_TRUE(t.Advance({v}, {}, kT0 + 60 * kS).hot_reset.empty());
  v.ring_idle = false;
  EXPECT_TRUE(t.Advance({v}, {}, kT0 + 61 * kS).hot_reset.empty());
  v.ring_idle = true;
  EXPECT_EQ(t.Advance({v}, {}, kT0 + 70 * kS).hot_reset, (std::vector<int>{1}));
}

TEST(GraceJobTracker, FailedOrTimedOutResetIsolates) {
  GraceJobTracker t(GraceTolerance{}, true);
  GraceNpuView a = View(1, 1, FaultLevel::kRestartNPU), b = View(2, 2, FaultLevel::kFreeRestartNPU);
  t.Advance({a, b}, {}, kT0);
  EXPECT_EQ(t.RankList()[1].policy, "free_reset");
  GraceCommands c = t.Advance({a, b}, {}, kT0 + 30 * kS);
  EXPECT_EQ(c.hot_reset, (std::vector<int>{1, 2}));
  c = t.Advance({a, b}, {{1, false}}, kT0 + 40 * kS);
  EXPECT_EQ(c.isolate, (std::vector<int>{1}));
  EXPECT_EQ(Status(t, 0), "failed");
  EXPECT_EQ(t.RankList()[0].policy, "isolate");
  EXPECT_EQ(t.RankList()[0].initial_policy, "reset");
  c = t.Advance({a, b}, {}, kT0 + 30 * kS + 150 * kS + 1);  // WaitDeviceResetTime
  EXPECT_EQ(c.isolate, (std::vector<int>{2}));
  EXPECT_EQ(Status(t, 1), "failed");
}

TEST(GraceJobTracker, IsolateFaultsFailAfterTheProcessesReadTheConfig) {
  GraceJobTracker t(GraceTolerance{}, true);
  t.Advance({View(5, 7, FaultLevel::kSeparateNPU)}, {}, kT0);
  EXPECT_EQ(t.RankList()[0].policy, "isolate");
  EXPECT_EQ(Status(t), "unrecovered");
  GraceCommands c = t.Advance({View(5, 7, FaultLevel::kSeparateNPU)}, {}, kT0 + 30 * kS);
  EXPECT_EQ(c.isolate, (std::vector<int>{5}));
  EXPECT_EQ(Status(t), "failed");
}

TEST(GraceJobTracker, NotHandledAndSubHealthFaultsAreNotListed) {
  GraceJobTracker t(GraceTolerance{}, true);
  EXPECT_FALSE(
      t.Advance({View(0, 0, FaultLevel::kNotHandleFault), View(1, 1, FaultLevel::kSubHealthFault)},
                {}, kT0)
          .write_reset_config);
  EXPECT_TRUE(t.RankList().empty());
}

TEST(GraceJobTracker, ANewFaultAfterRecoveryStartsANewRankList) {
  GraceJobTracker t(GraceTolerance{}, true);
  t.Advance({View(0, 0, FaultLevel::kRestartBusiness)}, {}, kT0);
  t.Advance({View(0, 0, FaultLevel::kRestartBusiness)}, {}, kT0 + 30 * kS);
  t.Advance({View(0, 0, FaultLevel::kNormalNPU)}, {}, kT0 + 31 * kS);
  ASSERT_EQ(Status(t), "recovered");
  t.Advance({View(0, 0, FaultLevel::kNormalNPU), View(4, 4, FaultLevel::kRestartNPU)}, {},
            kT0 + 100 * kS);
  ASSERT_EQ(t.RankList().size(), 1u);
  EXPECT_EQ(t.RankList()[0].rank_id, 4);
}

TEST(ResetRing, RingsOfTheChipFamilies) {
  EXPECT_EQ(ResetRing(5, 8, 4), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(ResetRing(9, 16, 16).size(), 16u);
  EXPECT_EQ(ResetRing(3, 8, 1), (std::vector<int>{3}));
}

}  // namespace grace_tolerance_test
}  // namespace clusterd::faults
