// The per-cycle log lines and metrics (recovery/cycle_log.h): a cycle starts with a new uuid,
// ends with the controller's reset, takes its outcome from the newest ProcessRecoverStatus it
// wrote, and is timed from its start.
#include "recovery/cycle_log.h"

#include "common/metrics.h"
#include "gtest/gtest.h"
#include "recovery/side_effects.h"

namespace clusterd::recovery {
namespace cycle_log_test {

uint64_t Cycles(const std::string& strategy, const std::string& outcome) {
  return MetricsRegistry::Default()
      .GetCounter("clusterd_recovery_cycles_total", "", {{"strategy", strategy}, {"outcome", outcome}})
      .Value();
}

Histogram::Snapshot Durations(const std::string& strategy, const std::string& outcome) {
  return MetricsRegistry::Default()
      .GetHistogram("clusterd_recovery_duration_seconds", "", {1},
                    {{"strategy", strategy}, {"outcome", outcome}})
      .Read();
}

Command Status(std::string_view value) { return PatchPodGroup{1, RecoverStatusPatch(value), 4}; }
Command ResetNote(std::string_view why) {
  return Note{"reset", std::string("controller reset: ") + std::string(why)};
}

const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);

TEST(CycleLog, ACycleIsTimedFromItsStartAndCountedByStrategyAndOutcome) {
  CycleTracking cycle;
  JobRecovery job;
  job.job_id = "job-uid-1";
  const uint64_t count = Cycles("recover", "success");
  const uint64_t observed = Durations("recover", "success").count;

  job.uuid = "cycle-1";
  job.caches.normal = {{3, 1}};
  LogCycleStep("ns/llama", "", job, {}, t0, &cycle);
  EXPECT_EQ(cycle.started, t0);
  EXPECT_EQ(cycle.uuid, "cycle-1");

  job.decided = "recover";
  LogCycleStep("ns/llama", "", job, {}, t0 + absl::Seconds(2), &cycle);
  EXPECT_EQ(cycle.started, t0) << "a decision does not restart the clock";
  EXPECT_EQ(cycle.strategy, "recover");

  // The status and the reset come in one step; the reset leaves a fresh state without a uuid.
  JobRecovery fresh;
  fresh.job_id = job.job_id;
  LogCycleStep("ns/llama", "recover", fresh, {Status("recover-success"), ResetNote("cycle finished")},
               t0 + absl::Seconds(42), &cycle);
  EXPECT_EQ(Cycles("recover", "success"), count + 1);
  Histogram::Snapshot d = Durations("recover", "success");
  EXPECT_EQ(d.count, observed + 1);
  EXPECT_GE(d.sum, 42);
  EXPECT_EQ(cycle.started, absl::InfinitePast()) << "no cycle runs after the reset";
}

TEST(CycleLog, AFailedOrUnansweredCycleSaysSoAndAClockStepBackIsNotNegative) {
  CycleTracking cycle;
  JobRecovery job;
  const uint64_t ended = Cycles("none", "ended");
  const uint64_t failed = Cycles("dump", "failed");
  job.uuid = "cycle-2";
  LogCycleStep("ns/gpt", "", job, {}, t0, &cycle);
  LogCycleStep("ns/gpt", "", JobRecovery{}, {ResetNote("client disconnected")}, t0, &cycle);
  EXPECT_EQ(Cycles("none", "ended"), ended + 1);

  job.uuid = "cycle-3";
  LogCycleStep("ns/gpt", "", job, {}, t0, &cycle);
  job.decided = "dump";
  LogCycleStep("ns/gpt", "", job, {Status("recover-failed")}, t0, &cycle);
  LogCycleStep("ns/gpt", "dump", JobRecovery{}, {Status("dump-failed"), ResetNote("cycle finished")},
               t0 - absl::Seconds(5), &cycle);
  EXPECT_EQ(Cycles("dump", "failed"), failed + 1);
  const Histogram::Snapshot d = Durations("dump", "failed");
  EXPECT_GE(d.sum, 0) << "no negative durations";
  EXPECT_GE(d.cumulative[0], 1u) << "counted as a zero-length cycle";
}

TEST(CycleLog, AResetWithoutACycleCountsNothing) {
  CycleTracking cycle;
  const uint64_t ended = Cycles("none", "ended");
  LogCycleStep("ns/idle", "", JobRecovery{}, {ResetNote("new subscription")}, t0, &cycle);
  EXPECT_EQ(Cycles("none", "ended"), ended);
}

TEST(CycleLog, FaultRanksReadAsRankColonType) {
  EXPECT_EQ(FaultRanksText({}), "<none>");
  EXPECT_EQ(FaultRanksText({{0, 1}, {7, 0}}), "0:1,7:0");
}

}  // namespace cycle_log_test
}  // namespace clusterd::recovery
