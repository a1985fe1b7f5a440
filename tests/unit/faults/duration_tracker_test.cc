#include "faults/duration_tracker.h"

#include "gtest/gtest.h"

namespace clusterd::faults {
namespace duration_tracker_test {

const DurationPolicy kRoce{"81078603", 20000, 60000, model::FaultLevel::kPreSeparateNPU};

struct Step {
  std::vector<DurationEvent> events;
  int64_t now;
};

TEST(DurationTracker, ShortBlipIsIgnored) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{true, 0}}, kRoce, 1000, &out);
  t.Advance({{false, 8000}}, kRoce, 9000, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(t.timed_out());
  EXPECT_TRUE(t.queue().empty());
  EXPECT_EQ(t.NextDeadlineMs(kRoce), std::nullopt);
}

TEST(DurationTracker, UnpairedOccurTimesOutStrictlyAfterTheTimeout) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{true, 100000}}, kRoce, 100000, &out);
  EXPECT_EQ(t.NextDeadlineMs(kRoce), 120001);
  t.Advance({}, kRoce, 120000, &out);
  EXPECT_FALSE(t.timed_out());
  t.Advance({}, kRoce, 120001, &out);
  EXPECT_TRUE(t.timed_out());
  EXPECT_EQ(t.fault_alarm_time_ms(), 120000);
  EXPECT_EQ(out, (std::vector<DurationTransition>{{true, 120000}}));
  EXPECT_EQ(t.NextDeadlineMs(kRoce), std::nullopt);  // waits for a recover
}

TEST(DurationTracker, RecoveryIsConfirmedAfterTheRecoverTimeout) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{true, 100000}}, kRoce, 125000, &out);
  t.Advance({{false, 150000}}, kRoce, 151000, &out);
  EXPECT_TRUE(t.timed_out());
  EXPECT_EQ(t.recover_duration_ms(), 1000);
  EXPECT_EQ(t.NextDeadlineMs(kRoce), 210001);
  t.Advance({}, kRoce, 210001, &out);
  EXPECT_FALSE(t.timed_out());
  EXPECT_EQ(t.fault_alarm_time_ms(), 210000);
  EXPECT_EQ(out, (std::vector<DurationTransition>{{true, 120000}, {false, 210000}}));
}

TEST(DurationTracker, ShortRecoveriesKeepItTimedOut) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{true, 0}}, kRoce, 30000, &out);
  t.Advance({{false, 40000}, {true, 50000}}, kRoce, 60000, &out);  // up for 10 s only
  EXPECT_TRUE(t.timed_out());
  EXPECT_TRUE(t.queue().empty());
  EXPECT_EQ(out.size(), 1u);
}

TEST(DurationTracker, LongPairInOneCycleFiresAndLeavesTheRecoverForTheNextCycle) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{true, 100000}, {false, 150000}}, kRoce, 160000, &out);
  EXPECT_TRUE(t.timed_out());
  EXPECT_EQ(t.fault_alarm_time_ms(), 120000);
  EXPECT_EQ(t.NextDeadlineMs(kRoce), 100000);  // due now: the recovery test waits
  t.Advance({}, kRoce, 161000, &out);
  EXPECT_TRUE(t.timed_out());
  EXPECT_EQ(t.NextDeadlineMs(kRoce), 210001);
}

TEST(DurationTracker, ConfirmedRecoveryThenNewTimeoutInOneCycle) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{true, 0}}, kRoce, 21000, &out);                        // timed out at 20 s
  t.Advance({{false, 30000}, {true, 100000}}, kRoce, 130000, &out);  // up 70 s, down 30 s
  EXPECT_EQ(out, (std::vector<DurationTransition>{{true, 20000}, {false, 90000}, {true, 120000}}));
  EXPECT_TRUE(t.timed_out());
}

TEST(DurationTracker, RepeatedAssertionsCollapse) {
  DurationTracker t;
  std::vector<DurationTransition> out;
  t.Advance({{false, 0}, {true, 10}, {true, 5000}, {false, 15000}}, kRoce, 16000, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(t.queue().empty());
}

TEST(DurationTracker, RestoredTimedOutRecoversUnlessTheCodeReturns) {
  DurationTracker t;
  t.RestoreTimedOut(5000, 100000);
  std::vector<DurationTransition> out;
  t.Advance({}, kRoce, 160001, &out);
  EXPECT_FALSE(t.timed_out());
  EXPECT_EQ(out, (std::vector<DurationTransition>{{false, 160000}}));
}

}  // namespace duration_tracker_test
}  // namespace clusterd::faults
