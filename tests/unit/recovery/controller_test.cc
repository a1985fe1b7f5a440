// §6 controller behaviour (reset, streams, mailboxes) and §8 fault intake, incl. faults that
// arrive mid-recovery.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace controller_test {

using ::testing::ElementsAre;
using testing::Harness;
using testing::Hw;
using ::testing::IsEmpty;
using testing::MakeConfig;
using testing::MakeView;
using testing::Ranks;

TEST(Controller, SubscribeResetsAndEndsEarlierStreams) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
  h.Subscribe();  // quirk 2: a new subscription aborts the cycle
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_EQ(h.job().uuid, "");
  EXPECT_TRUE(h.job().caches.Empty());
  const auto ends = h.All<EndStreams>();
  EXPECT_EQ(ends.back().keep_stream_id, 2u);
  EXPECT_EQ(h.job().stream_id, 2u);
  EXPECT_EQ(h.ResetOps().back(), "clear");
}

TEST(Controller, ClientDisconnectResets) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.Apply(StreamClosed{7});  // not the current stream: ignored
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
  h.Apply(StreamClosed{1});
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_EQ(h.job().stream_id, 0u);
}

TEST(Controller, JobDeletionForgetsTheJobWithoutClearingTheConfigMap) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Hardware({Hw(10, 1)});
  h.ClearLog();
  h.Apply(JobDeleted{});
  EXPECT_EQ(h.All<ForgetJob>().size(), 1u);
  EXPECT_THAT(h.ResetOps(), IsEmpty());
  EXPECT_TRUE(h.job().hw_snapshot.empty());
}

TEST(Controller, EarlyReportIsKeptForTheNextWait) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_signals = false;
  h.ProcessFault({{10, 1}});
  EXPECT_EQ(h.state(), State::kNotifyStopTrain);
  h.StopComplete(0);  // before the stop signal was even written
  EXPECT_EQ(h.Replies().back().code, 0);
  EXPECT_EQ(h.state(), State::kNotifyStopTrain);
  h.ack_signals = true;
  const auto sent = h.All<SendSignal>();
  h.Apply(SignalWritten{sent.back().id, true});
  EXPECT_EQ(h.state(), State::kWaitFaultFlushFinished);
}

// Quirk 3 bounded: a report must answer the cycle it arrives in. The three reports sent while
// the job is idle are acknowledged as the reference does, but dropped (noted, counted), so that
// the next cycle waits for its own and cannot run to recover-success on them.
TEST(Controller, ReportsSentWhileIdleCannotFinishTheNextCycle) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.StopComplete(0);
  h.Strategies({"recover"});
  h.Status(0, "recover");
  const std::vector<ReplyReport> replies = h.Replies();
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0].code, 0);
  EXPECT_EQ(replies[0].info, "jobId=J, uuid=, receive ReportStopComplete");
  EXPECT_EQ(replies[1].info, "jobId=J, uuid=, receive ReportRecoverStrategy");
  EXPECT_EQ(replies[2].info, "jobId=J, uuid=, receive ReportRecoverStatus");
  EXPECT_EQ(h.Notes("stale_report").size(), 3u);
  EXPECT_FALSE(h.job().mailboxes.stop_complete.slot.has_value());
  EXPECT_FALSE(h.job().mailboxes.recover_strategy.slot.has_value());
  EXPECT_FALSE(h.job().mailboxes.recover_status.slot.has_value());

  h.ProcessFault({{10, 1}});
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
  h.Elapse(absl::Minutes(1));
  EXPECT_THAT(h.SignalSummary(), ElementsAre("stopTrain"));
  for (const PatchPodGroup& p : h.All<PatchPodGroup>()) {
    EXPECT_FALSE(p.patch.dump().find("recover-success") != std::string::npos) << p.patch.dump();
  }
}

// The cut is the cycle's first signal, not the wait state: a report that arrives after the cycle
// began but before its stopTrain went out answers nothing of this cycle.
TEST(Controller, AReportBeforeTheCyclesFirstSignalIsDropped) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_writes = false;
  h.ProcessFault({{10, 1}});
  ASSERT_EQ(h.state(), State::kNotifyWaitFaultFlushing);
  ASSERT_THAT(h.Signals(), IsEmpty());
  h.StopComplete(0);
  EXPECT_EQ(h.Notes("stale_report").size(), 1u);
  EXPECT_EQ(h.Replies().back().code, 0);
  h.ack_writes = true;
  const auto writes = h.All<WriteResetConfig>();
  h.Apply(WriteDone{writes.back().id, true});
  EXPECT_THAT(h.SignalSummary(), ElementsAre("stopTrain"));
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
  // The report of this cycle moves it on.
  h.StopComplete(0);
  EXPECT_EQ(h.state(), State::kWaitFaultFlushFinished);
}

TEST(Controller, SecondReportWaitsAndGets599OnReset) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});  // stopTrain is out: reports from now on answer this cycle
  const std::string uuid = h.job().uuid;
  h.Status(0, "recover");  // buffered
  const size_t replies = h.Replies().size();
  h.Status(0, "recover");  // blocks: no reply yet
  EXPECT_EQ(h.Replies().size(), replies);
  h.Subscribe();  // reset
  const ReplyReport last = h.Replies().back();
  EXPECT_EQ(last.code, 599);
  EXPECT_EQ(last.info, "jobId=J, uuid=" + uuid + ", chan closed");
  EXPECT_FALSE(h.job().mailboxes.recover_status.slot.has_value());
}

TEST(Controller, BlockedReportIsAnsweredWhenTheSlotFrees) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_signals = false;
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  const uint64_t blocked_ticket = h.Ticket() + 1;
  h.StopComplete(0);  // blocks
  const size_t before = h.Replies().size();
  const auto sent = h.All<SendSignal>();
  h.ack_signals = true;
  h.Apply(SignalWritten{sent.back().id, true});
  ASSERT_EQ(h.Replies().size(), before + 1);
  EXPECT_EQ(h.Replies().back().ticket, blocked_ticket);
  EXPECT_EQ(h.Replies().back().code, 0);
  // The second report now sits in the slot (a stale report, quirk 3).
  EXPECT_TRUE(h.job().mailboxes.stop_complete.slot.has_value());
}

TEST(Controller, FaultOccurOutsideInitIsDroppedButMerged) {
  Harness h(MakeConfig("recover"), MakeView(3, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.ProcessFault({{17, 1}});  // mid-recovery
  EXPECT_EQ(h.Notes("order_mix").size(), 1u);
  EXPECT_EQ(h.job().caches.normal, (std::vector<FaultRank>{{10, 1}, {17, 1}}));
  EXPECT_EQ(h.job().fault_pods.count(2), 1u);
  // The new fault shows up in the global fault set.
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  const Signal global = h.Signals().back();
  EXPECT_EQ(global.fault_ranks.size(), 16u);
  EXPECT_THAT(global.node_rank_ids, ElementsAre(1, 2));
}

TEST(Controller, HardwareFaultMidRecoveryGetsAPreExitAtOnce) {
  Harness h(MakeConfig("recover"), MakeView(3, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.Hardware({Hw(20, 2)});
  const Signal pre_exit = h.Signals().back();
  EXPECT_EQ(pre_exit.signal_type, "preExitProcess");
  EXPECT_THAT(pre_exit.node_rank_ids, ElementsAre(2));
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
}

TEST(Controller, PreExitSkipsPodsAlreadyReplaced) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  HardwareFault f = Hw(10, 1);
  f.pod_uid = "uid-old";
  h.Hardware({f});
  h.Elapse(absl::Seconds(10));
  EXPECT_THAT(h.Signals(), IsEmpty());
  EXPECT_EQ(h.Notes("pre_exit_skipped").size(), 1u);
}

TEST(Controller, RepeatedHardwareDeliveryIsNotAddedAgain) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Hardware({Hw(10, 1)});
  h.Elapse(absl::Seconds(10));
  h.Hardware({Hw(10, 1)});
  h.Elapse(absl::Seconds(10));
  EXPECT_EQ(h.Signals().size(), 1u);
}

TEST(Controller, FaultsBeforeTheFirstSubscribeAreRaisedAgain) {
  // Quirk 11, fixed.
  Harness h(MakeConfig("retry,recover"), MakeView(2, 8));
  h.Hardware({Hw(3, 0, "80E01801", true)});
  h.Subscribe();
  EXPECT_EQ(h.state(), State::kInit);
  h.Hardware({Hw(3, 0, "80E01801", true)});
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete) << "the delivery starts the cycle";
}

TEST(Controller, RetryClassHardwareFaultWithoutRetryConfiguredTakesThePreExitPath) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.Hardware({Hw(3, 0, "80E01801", true)});
  EXPECT_EQ(h.state(), State::kInit);
  h.Elapse(absl::Seconds(10));
  EXPECT_EQ(h.Signals().back().signal_type, "preExitProcess");
  EXPECT_EQ(h.Signals().back().fault_ranks, (std::vector<FaultRank>{{3, 1}}));
}

TEST(Controller, SoftwareFaultLabelsPodsOncePerCycle) {
  Harness h(MakeConfig("retry,recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{3, 0}});
  auto labels = h.All<PatchPod>();
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_EQ(labels[0].pod_name, "pt-0");
  EXPECT_EQ(labels[0].patch["metadata"]["labels"]["fault-type"], "retry-fault");
  h.ProcessFault({{12, 1}});
  labels = h.All<PatchPod>();
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[1].pod_name, "pt-1");
  EXPECT_EQ(labels[1].patch["metadata"]["labels"]["fault-type"], "software");
  h.ProcessFault({{4, 1}});  // pod 0 already labelled
  EXPECT_EQ(h.All<PatchPod>().size(), 2u);
}

TEST(Controller, RetryFaultsMidRecoveryAreMergedIntoTheNextSignal) {
  Harness h(MakeConfig("retry,recover"), MakeView(2, 8));
  h.Subscribe();
  h.ack_signals = false;
  h.Hardware({Hw(3, 0, "80E01801", true)});
  h.Hardware({Hw(3, 0, "80E01801", true), Hw(5, 0, "80E01801", true)});
  h.ack_signals = true;
  h.Apply(SignalWritten{h.All<SendSignal>().back().id, true});
  h.StopComplete(0);
  EXPECT_EQ(h.Signals().back().fault_ranks, (std::vector<FaultRank>{{3, 0}, {5, 0}}));
}

TEST(Controller, StallIsResetInsteadOfWaitingForever) {
  // A downgrade 201 reported after the isolation step: the reference stalls (no row for the
  // faultNodesExit send result in CheckRecoverResultState). We re-decide instead.
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"downgrade", "dump", "exit"});
  h.Status(201, "downgrade", {16});
  h.Status(201, "downgrade", {16});
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
}

TEST(Controller, UnknownReportedStrategyResets) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"recover"});
  h.Status(0, "bogus");
  EXPECT_EQ(h.state(), State::kInit);
  EXPECT_THAT(h.Notes("reset").back(), ::testing::HasSubstr("bogus"));
}

TEST(Controller, KeepAliveCarriesTheCurrentUuid) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  EXPECT_EQ(KeepAlive(h.job()).uuid, h.Signals()[0].uuid);
  EXPECT_EQ(KeepAlive(h.job()).signal_type, "keep-alive");
}

TEST(Controller, UuidFormat) {
  const std::string u = MakeUuid("J", absl::FromUnixNanos(0x17D5A5F2B3C4D5E6), 1);
  EXPECT_EQ(u.substr(0, 17), "17D5A5F2B3C4D5E6-");
  EXPECT_EQ(u.size(), 17u + 32u);
  EXPECT_EQ(u.find_first_not_of("0123456789abcdef", 17), std::string::npos);
  EXPECT_NE(u, MakeUuid("J", absl::FromUnixNanos(0x17D5A5F2B3C4D5E6), 2));
}

TEST(Controller, HistoryRecordsTheCycle) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  ASSERT_GE(h.job().history.size(), 3u);
  EXPECT_EQ(h.job().history[0].from, "INIT");
  EXPECT_EQ(h.job().history[0].event, "faultOccur");
  EXPECT_EQ(h.job().history[0].to, "NotifyWaitFaultFlushingState");
  EXPECT_EQ(h.job().history.back().to, "WaitReportStopCompleteState");
}

TEST(Controller, ScaleRunningFaultStartsAStopWithoutFlush) {
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"downgrade", "dump", "exit"});
  h.Status(201, "downgrade", {16});
  h.Status(0, "downgrade");
  ASSERT_EQ(h.state(), State::kScaleRunning);
  const std::string first_uuid = h.job().uuid;
  h.ProcessFault({{4, 1}});
  EXPECT_EQ(h.state(), State::kWaitReportStopComplete);
  EXPECT_NE(h.job().uuid, first_uuid);
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"downgrade", "dump", "exit"});
  // The scale-in result is still the last result: dump -> exit ladder.
  EXPECT_EQ(h.Signals().back().change_strategy, "dump");
}

TEST(Controller, ScaleRunningPodGroupDeletedFinishes) {
  Harness h(MakeConfig("elastic-training,dump"), MakeView(3, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  h.StopComplete(0);
  h.Elapse(absl::Seconds(11));
  h.Strategies({"downgrade", "dump", "exit"});
  h.Status(201, "downgrade", {16});
  h.Status(0, "downgrade");
  JobView gone;
  h.View(gone);
  EXPECT_EQ(h.state(), State::kInit);
}

TEST(Controller, TimersFromAnEarlierStateAreIgnored) {
  Harness h(MakeConfig("recover"), MakeView(2, 8));
  h.Subscribe();
  h.ProcessFault({{10, 1}});
  const absl::Time deadline = h.job().timers.at(TimerKind::kStep);
  h.StopComplete(0);
  h.Apply(TimerFired{TimerKind::kStep, deadline});
  EXPECT_EQ(h.state(), State::kWaitFaultFlushFinished);
}

}  // namespace controller_test
}  // namespace clusterd::recovery
