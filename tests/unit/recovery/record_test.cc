// The durable record: round trips at every step of whole timelines, and resuming a cycle.

#include "recovery/record.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace record_test {

using ::testing::ElementsAre;
using testing::Harness;
using testing::Hw;
using testing::MakeConfig;
using testing::MakeView;

// What a restore gives back: everything but the view, the stream and blocked RPCs.
JobRecovery Restorable(JobRecovery job) {
  job.view = JobView{};
  job.stream_id = 0;
  job.resumed = true;
  job.mailboxes.stop_complete.blocked.clear();
  job.mailboxes.recover_strategy.blocked.clear();
  job.mailboxes.recover_status.blocked.clear();
  job.mailboxes.nic_result.blocked.clear();
  job.mailboxes.stress_result.blocked.clear();
  return job;
}

void ExpectRoundTrip(const JobRecovery& job) {
  const store::Object cm = RecordConfigMap(job, "ns");
  absl::StatusOr<JobRecovery> back = RecordFromConfigMap(cm);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == Restorable(job)) << "state " << StateName(job.state) << "\n"
                                        << RecordToJson(job).dump() << "\n"
                                        << RecordToJson(*back).dump();
}

TEST(Record, RoundTripsAtEveryStepOfTheSection15Sequence) {
  Harness h(MakeConfig("retry,recover,dump"), MakeView(2, 8));
  int steps = 0;
  h.on_step = [&steps](const JobRecovery& job) {
    ++steps;
    ExpectRoundTrip(job);
  };
  h.Subscribe();
  h.Hardware({Hw(10, 1)});
  h.Elapse(absl::Seconds(3));
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Status(0, "recover");  // early: kept in the mailbox
  h.Elapse(absl::Seconds(11));
  h.Strategies({"retry", "recover", "dump", "exit"});
  JobView replaced = MakeView(2, 8);
  replaced.pods[1].uid = "uid-p1-new";
  h.Elapse(absl::Seconds(5));
  h.View(replaced);
  EXPECT_GT(steps, 10);
}

TEST(Record, RoundTripsThroughOmAndHotSwitchAndScaleState) {
  Harness h(MakeConfig("elastic-training,dump",
                       {{"subHealthyStrategy", "hotSwitch"}, {"framework", "pytorch"}}),
            MakeView(3, 8));
  h.on_step = [](const JobRecovery& job) { ExpectRoundTrip(job); };
  h.Subscribe();
  h.Apply(StressTestRequested{StressParams{{"n1", {{0, {0, 1}}}}}, h.Ticket()});
  h.StopComplete(0);
  StressResults results;
  results[0]["aic"] = {"3", "timeout"};
  h.Apply(StressTestResultReplied{results, h.Ticket()});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"downgrade", "dump", "exit"});
  h.Status(201, "downgrade", {16});
  h.Status(0, "downgrade");
  EXPECT_EQ(h.state(), State::kScaleRunning);
  h.Subscribe();
  h.Hardware({Hw(9, 1, "80C98008", false, "SubHealthFault")}, "SubHealthy");
  EXPECT_EQ(h.state(), State::kWaitNewPod);
}

TEST(Record, CorruptRecordsAreRejectedWithAReason) {
  EXPECT_FALSE(RecordFromJson(nlohmann::ordered_json::object()).ok());
  nlohmann::ordered_json r = RecordToJson(NewJobRecovery("J", MakeConfig("recover")));
  r["state"] = "NoSuchState";
  auto bad = RecordFromJson(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("NoSuchState"));
  store::Object cm = {{"metadata", {{"name", "clusterd-recovery-J"}, {"namespace", "ns"}}},
                      {"data", {{"record.json", "{"}}}};
  EXPECT_FALSE(RecordFromConfigMap(cm).ok());
  EXPECT_EQ(RecordConfigMapName("J"), "clusterd-recovery-j");
}

// Builds a controller restored from the record of `h` (as a restarted clusterd would).
Harness Restore(const Harness& h, JobView view) {
  absl::StatusOr<JobRecovery> back = RecordFromConfigMap(RecordConfigMap(h.job(), "ns"));
  EXPECT_TRUE(back.ok());
  Harness r(h.job().config, view);
  r.mutable_job() = *back;
  r.mutable_job().view = view;
  return r;
}

// A `recover` job on 2 pods whose cycle waits for the agent's strategies (globalFault written).
Harness AtTheStrategyWait() {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  EXPECT_EQ(h.state(), State::kWaitReportRecoverStrategy);
  return h;
}

TEST(Resume, SubscribeAfterRestoreContinuesTheCycle) {
  Harness h = AtTheStrategyWait();
  const std::string uuid = h.job().uuid;

  Harness r = Restore(h, MakeView(2, 8));
  EXPECT_TRUE(r.job().resumed);
  const std::vector<Command> resume = ResumeCommands(r.job());
  EXPECT_FALSE(resume.empty());  // the report wait and the schedule watcher are re-armed
  r.Subscribe();
  EXPECT_EQ(r.state(), State::kWaitReportRecoverStrategy);
  EXPECT_EQ(r.job().uuid, uuid);
  EXPECT_TRUE(r.ResetOps().empty());
  EXPECT_FALSE(r.job().resumed);
  EXPECT_EQ(r.Notes("resume").size(), 2u);  // continues; globalFault asked again
  r.Strategies({"recover", "exit"});
  EXPECT_EQ(r.Signals().back().change_strategy, "recover");
  EXPECT_EQ(r.Signals().back().uuid, uuid);
  // A later Subscribe on the live server resets again (quirk 2 kept).
  r.Subscribe();
  EXPECT_EQ(r.state(), State::kInit);
}

TEST(Resume, UnansweredSignalIsSentAgainWithTheSameUuid) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_signals = false;  // crash after the record was written, before the write result
  h.ProcessFault({{10, 1}});
  ASSERT_EQ(h.state(), State::kNotifyStopTrain);
  const SendSignal sent = h.All<SendSignal>().back();

  Harness r = Restore(h, MakeView(2, 8));
  r.ack_signals = false;
  r.Subscribe();
  const auto again = r.All<SendSignal>();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].id, sent.id);
  EXPECT_EQ(again[0].signal, sent.signal);
  r.ack_signals = true;
  r.Apply(SignalWritten{sent.id, true});
  EXPECT_EQ(r.state(), State::kWaitReportStopComplete);
}

TEST(Resume, SignalAnsweredWhileDownIsNotSentAgain) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_signals = false;
  h.ProcessFault({{10, 1}});

  Harness r = Restore(h, MakeView(2, 8));
  // The client got the stop signal before the crash and reports before re-subscribing.
  r.StopComplete(0);
  EXPECT_EQ(r.state(), State::kNotifyStopTrain);
  r.Subscribe();
  EXPECT_TRUE(r.All<SendSignal>().empty());
  EXPECT_EQ(r.state(), State::kWaitFaultFlushFinished);
}

// The stall seen beside a real peer (docs/benchmarks.md): stopTrain was written and the record
// said so; the client's ReportStopComplete went to the dying process and failed in transport,
// which the Python toolkit does not repeat. The restored wait asks once more, same uuid.
TEST(Resume, AWaitWhoseReportNeverCameAsksForItOnceMore) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  ASSERT_EQ(h.state(), State::kWaitReportStopComplete);
  const Signal stop = h.Signals().back();
  ASSERT_EQ(stop.signal_type, "stopTrain");

  Harness r = Restore(h, MakeView(2, 8));
  r.Subscribe();
  ASSERT_EQ(r.Signals().size(), 1u);
  EXPECT_EQ(r.Signals()[0], stop);  // byte for byte: the TaskD manager drops it by uuid
  EXPECT_EQ(r.state(), State::kWaitReportStopComplete);
  EXPECT_THAT(r.Notes("resume"), ::testing::Contains(::testing::HasSubstr("stopTrain sent again")));
  // The deadline of the wait is the one before the restart, not a fresh 15 minutes.
  EXPECT_EQ(r.job().timers.at(TimerKind::kStep), h.job().timers.at(TimerKind::kStep));
  r.StopComplete(0);
  EXPECT_EQ(r.state(), State::kWaitFaultFlushFinished);
  // Once only: a later live Subscribe resets, as on the original.
  r.Subscribe();
  EXPECT_EQ(r.state(), State::kInit);
  EXPECT_EQ(r.Signals().size(), 1u);
}

TEST(Resume, AStrategyListWaitAsksForTheListOnceMore) {
  Harness h = AtTheStrategyWait();
  const Signal global = h.Signals().back();
  ASSERT_EQ(global.signal_type, "globalFault");

  Harness r = Restore(h, MakeView(2, 8));
  r.Subscribe();
  ASSERT_EQ(r.Signals().size(), 1u);
  EXPECT_EQ(r.Signals()[0], global);
  r.Strategies({"recover"});
  EXPECT_EQ(r.Signals().back().change_strategy, "recover");
}

// A strategy is never carried out twice: a wait for its result sends nothing on resume.
TEST(Resume, AStrategyResultWaitSendsNothingAgain) {
  Harness h = AtTheStrategyWait();
  h.Strategies({"recover"});
  ASSERT_EQ(h.state(), State::kWaitReportProcessRecoverStatus);
  EXPECT_FALSE(h.job().report_signal.has_value());

  Harness r = Restore(h, MakeView(2, 8));
  r.Subscribe();
  EXPECT_TRUE(r.Signals().empty());
  EXPECT_EQ(r.state(), State::kWaitReportProcessRecoverStatus);
}

// The report came to the new process before the client subscribed again: nothing to ask.
TEST(Resume, AReportReceivedBeforeTheSubscribeIsNotAskedFor) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  Harness r = Restore(h, MakeView(2, 8));
  r.StopComplete(0);
  EXPECT_EQ(r.state(), State::kWaitFaultFlushFinished);
  EXPECT_FALSE(r.job().report_signal.has_value());
  r.Subscribe();
  EXPECT_TRUE(r.Signals().empty());
}

// A record written before the field existed restores without it and asks for nothing.
TEST(Resume, ARecordWithoutTheAskingSignalStillRestores) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  nlohmann::ordered_json record = RecordToJson(h.job());
  ASSERT_TRUE(record.contains("reportSignal"));
  nlohmann::ordered_json malformed = record;
  malformed["reportSignal"] = "not a signal";
  EXPECT_FALSE(RecordFromJson(malformed).ok()) << "a malformed reportSignal is refused";
  record.erase("reportSignal");
  absl::StatusOr<JobRecovery> back = RecordFromJson(record);
  ASSERT_TRUE(back.ok()) << back.status();
  Harness r(h.job().config, MakeView(2, 8));
  r.mutable_job() = *back;
  r.mutable_job().view = MakeView(2, 8);
  r.Subscribe();
  EXPECT_TRUE(r.Signals().empty());
  EXPECT_EQ(r.state(), State::kWaitReportStopComplete);
}

TEST(Resume, PendingWriteIsIssuedAgain) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_writes = false;
  h.ProcessFault({{10, 1}});
  ASSERT_EQ(h.job().phase, Phase::kAwaitWrite);
  const WriteResetConfig pending = h.All<WriteResetConfig>().back();
  const std::vector<Command> resume = ResumeCommands(Restore(h, MakeView(2, 8)).job());
  bool found = false;
  for (const Command& c : resume) {
    if (const auto* w = std::get_if<WriteResetConfig>(&c)) {
      EXPECT_EQ(w->id, pending.id);
      EXPECT_EQ(w->op, ResetOperation::kNotifyFaultFlushing);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Resume, TimerDueDuringTheOutageFiresOnRestart) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  Harness r = Restore(h, MakeView(2, 8));
  r.Elapse(absl::Minutes(15));  // the StopComplete wait expired while clusterd was down
  EXPECT_EQ(r.state(), State::kFaultRetry);
}

TEST(Resume, SignalDueBeforeTheClientIsBackIsHeldUntilItSubscribes) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  ASSERT_EQ(h.state(), State::kWaitFaultFlushFinished);
  Harness r = Restore(h, MakeView(2, 8));
  r.Elapse(absl::Seconds(11));  // flush wait and force-release pause run out while down
  EXPECT_EQ(r.state(), State::kNotifyGlobalFault);
  EXPECT_TRUE(r.All<SendSignal>().empty());
  r.Subscribe();
  ASSERT_EQ(r.All<SendSignal>().size(), 1u);
  EXPECT_EQ(r.Signals()[0].signal_type, "globalFault");
  EXPECT_EQ(r.state(), State::kWaitReportRecoverStrategy);
}

TEST(Resume, HeldSignalFailsWhenTheClientNeverComesBack) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  Harness r = Restore(h, MakeView(2, 8));
  r.Elapse(absl::Seconds(11));
  r.Elapse(absl::Minutes(15));
  // globalFault fails -> killMaster, which cannot be delivered either: 60 s later the
  // controller resets, so the returning client starts from a clean INIT.
  EXPECT_EQ(r.state(), State::kNotifyKillJob);
  r.Elapse(absl::Seconds(60));
  EXPECT_EQ(r.state(), State::kInit);
  EXPECT_TRUE(r.Signals().empty());
  EXPECT_FALSE(r.job().resumed);
}

// The cut of quirk 3 survives a restart: a cycle that had signalled keeps taking its reports
// (sent to the new process before the Subscribe), an idle job keeps dropping stale ones.
TEST(Record, KeepsWhetherTheCycleHasSignalled) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  EXPECT_FALSE(RecordFromJson(RecordToJson(h.job()))->cycle_signalled);
  h.ProcessFault({{10, 1}});
  ASSERT_TRUE(h.job().cycle_signalled);
  EXPECT_TRUE(RecordFromJson(RecordToJson(h.job()))->cycle_signalled);
}

TEST(Record, AnOlderRecordCountsACycleInFlightAsSignalled) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  nlohmann::ordered_json idle = RecordToJson(h.job());
  idle.erase("cycleSignalled");
  EXPECT_FALSE(RecordFromJson(idle)->cycle_signalled);
  h.ProcessFault({{10, 1}});
  nlohmann::ordered_json in_flight = RecordToJson(h.job());
  in_flight.erase("cycleSignalled");
  EXPECT_TRUE(RecordFromJson(in_flight)->cycle_signalled);
}

// The record's name is clusterd-recovery-<jobId, lower-cased>, and the store takes only DNS-1123
// subdomains: a job id that cannot form one is refused with the reason.
TEST(Record, CheckRecordNameFollowsTheStoresRule) {
  EXPECT_TRUE(CheckRecordName("7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11").ok());
  EXPECT_TRUE(CheckRecordName("J").ok());  // lower-cased: clusterd-recovery-j
  EXPECT_TRUE(CheckRecordName("job.v2").ok());
  EXPECT_TRUE(CheckRecordName(std::string(253 - 18, 'a')).ok());
  const absl::Status bad = CheckRecordName("job_7");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(),
              ::testing::HasSubstr("jobId \"job_7\" cannot name its recovery record"));
  EXPECT_THAT(bad.message(), ::testing::HasSubstr("clusterd-recovery-job_7"));
  EXPECT_THAT(bad.message(), ::testing::HasSubstr("DNS-1123"));
  EXPECT_FALSE(CheckRecordName(std::string(253 - 17, 'a')).ok());  // 254 characters
  EXPECT_FALSE(CheckRecordName("").ok());
  EXPECT_FALSE(CheckRecordName(".x").ok());
  EXPECT_FALSE(CheckRecordName("x/y").ok());
  EXPECT_FALSE(CheckRecordName("a b").ok());
}

}  // namespace record_test
}  // namespace clusterd::recovery
