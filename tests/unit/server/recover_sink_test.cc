// RecoverySink without gRPC: the per-job stream registry, bounded queues, keep-alive deadlines,
// OM queues and tickets (the reactors are exercised by tests/integration/recover_service_test.cc).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/signal.h"
#include "recovery/vocabulary.h"
#include "server/recovery_sink.h"

namespace clusterd::server {
namespace recover_sink_test {

recovery::Signal Stop(const std::string& uuid) {
  return recovery::StopSignal("job-1", uuid, {{3, 1}});
}

class RecoverySinkTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  RecoverySink sink_{clock_};
};

TEST_F(RecoverySinkTest, ASignalWithoutAStreamIsAFailedSend) {
  EXPECT_FALSE(sink_.WriteSignal("job-1", Stop("U")));
}

TEST_F(RecoverySinkTest, SignalsGoToTheNewestStreamOfTheJob) {
  auto first = sink_.OpenSignalStream("job-1");
  auto second = sink_.OpenSignalStream("job-1");
  EXPECT_GT(second.stream_id, first.stream_id);
  ASSERT_TRUE(sink_.WriteSignal("job-1", Stop("U")));
  EXPECT_EQ(first.channel->size(), 0u);
  ASSERT_EQ(second.channel->size(), 1u);
  EXPECT_EQ(second.channel->TakeQueuedForTest().front().signaltype(), "stopTrain");
  EXPECT_FALSE(sink_.WriteSignal("job-2", Stop("U")));
}

TEST_F(RecoverySinkTest, TheLastSignalsAreKeptForWatchSignalsWithoutKeepAlives) {
  EXPECT_FALSE(sink_.WriteSignal("job-1", Stop("U")));  // no stream yet: recorded as not sent
  auto stream = sink_.OpenSignalStream("job-1");
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(sink_.WriteSignal("job-1", recovery::KeepAliveSignal("job-1", "U")));
  ASSERT_TRUE(sink_.WriteSignal("job-1", Stop("U")));
  std::vector<RecoverySink::SentSignal> sent = sink_.SentSignals("job-1");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_FALSE(sent[0].queued);
  EXPECT_TRUE(sent[1].queued);
  EXPECT_EQ(sent[1].signal_type, "stopTrain");
  EXPECT_EQ(sent[1].at - sent[0].at, absl::Seconds(1));
  for (size_t i = 0; i < RecoverySink::kSentSignalsKept + 10; ++i) {
    (void)sink_.WriteSignal("job-1", Stop("U"));
  }
  EXPECT_EQ(sink_.SentSignals("job-1").size(), RecoverySink::kSentSignalsKept);
  EXPECT_TRUE(sink_.SentSignals("job-2").empty());
}

TEST_F(RecoverySinkTest, EndStreamsKeepsOnlyTheNamedStream) {
  auto first = sink_.OpenSignalStream("job-1");
  auto second = sink_.OpenSignalStream("job-1");
  sink_.EndStreams("job-1", second.stream_id);
  EXPECT_TRUE(first.channel->closing());
  EXPECT_FALSE(second.channel->closing());
  EXPECT_EQ(sink_.SignalStreams("job-1"), 1u);
  // The ended stream's RPC finishing later is not a client disconnect.
  EXPECT_FALSE(sink_.SignalStreamDone("job-1", first.stream_id));
  // The kept one ending on its own is.
  EXPECT_TRUE(sink_.SignalStreamDone("job-1", second.stream_id));
  EXPECT_EQ(sink_.SignalStreams("job-1"), 0u);
}

// Two Subscribes in quick succession: the controller handles the first one's reset after the
// second stream opened. That reset must not end the newer stream, whose own Subscribed event
// follows and ends the first.
TEST_F(RecoverySinkTest, EndStreamsLeavesStreamsNewerThanTheKeptOne) {
  auto first = sink_.OpenSignalStream("job-1");
  auto second = sink_.OpenSignalStream("job-1");
  sink_.EndStreams("job-1", first.stream_id);
  EXPECT_FALSE(first.channel->closing());
  EXPECT_FALSE(second.channel->closing());
  sink_.EndStreams("job-1", second.stream_id);
  EXPECT_TRUE(first.channel->closing());
  EXPECT_FALSE(second.channel->closing());
  EXPECT_EQ(sink_.SignalStreams("job-1"), 1u);
}

TEST_F(RecoverySinkTest, EndStreamsWithZeroEndsEveryStream) {
  auto s = sink_.OpenSignalStream("job-1");
  ASSERT_TRUE(sink_.WriteSignal("job-1", recovery::KillMasterSignal("job-1", "U")));
  sink_.EndStreams("job-1", 0);
  EXPECT_TRUE(s.channel->closing());
  // What was queued before the end is still written (killMaster then end of stream).
  EXPECT_EQ(s.channel->size(), 1u);
  EXPECT_FALSE(sink_.WriteSignal("job-1", Stop("U2")));
}

TEST_F(RecoverySinkTest, AFullQueueDropsTheNewSignalInsteadOfWaiting) {
  auto s = sink_.OpenSignalStream("job-1");
  for (size_t i = 0; i < RecoverySink::kSignalQueueCapacity; ++i) {
    ASSERT_TRUE(sink_.WriteSignal("job-1", Stop("U")));
  }
  EXPECT_FALSE(sink_.WriteSignal("job-1", Stop("U")));
  EXPECT_EQ(s.channel->size(), RecoverySink::kSignalQueueCapacity);
}

TEST_F(RecoverySinkTest, KeepAlivesAreDueFiveSecondsAfterOpeningThenEveryFive) {
  auto s = sink_.OpenSignalStream("job-1");
  EXPECT_TRUE(sink_.DueKeepAlives(clock_.Now()).empty());
  clock_.Advance(absl::Seconds(4));
  EXPECT_TRUE(sink_.DueKeepAlives(clock_.Now()).empty());
  clock_.Advance(absl::Seconds(1));
  auto due = sink_.DueKeepAlives(clock_.Now());
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].first, "job-1");
  EXPECT_EQ(due[0].second, s.channel);
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(sink_.DueKeepAlives(clock_.Now()).empty());
  // A long pause gives one keep-alive, not a burst.
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(sink_.DueKeepAlives(clock_.Now()).size(), 1u);
  EXPECT_TRUE(sink_.DueKeepAlives(clock_.Now()).empty());
}

TEST_F(RecoverySinkTest, ATicketIsAnsweredOnce) {
  int calls = 0;
  int32_t code = -1;
  std::string info;
  const uint64_t t = sink_.AddTicket([&](int32_t c, const std::string& i) {
    ++calls;
    code = c;
    info = i;
  });
  EXPECT_EQ(sink_.PendingTickets(), 1u);
  sink_.Reply(t, 0, "receive ReportProcessFault");
  sink_.Reply(t, 599, "late");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(info, "receive ReportProcessFault");
  EXPECT_FALSE(sink_.CancelTicket(t));
}

TEST_F(RecoverySinkTest, ACancelledTicketIsNeverAnswered) {
  int calls = 0;
  const uint64_t t = sink_.AddTicket([&](int32_t, const std::string&) { ++calls; });
  EXPECT_TRUE(sink_.CancelTicket(t));
  sink_.Reply(t, 0, "x");
  EXPECT_EQ(calls, 0);
}

TEST_F(RecoverySinkTest, OmMessagesWaitForTheOperatorAndAResetDropsThem) {
  sink_.QueueOmMessage("job-1", recovery::OmKind::kSwitchNic, "switch nic finish");
  EXPECT_EQ(sink_.QueuedOmMessages("job-1", recovery::OmKind::kSwitchNic), 1u);
  auto om = sink_.OpenSwitchOm("job-1");
  auto queued = om->TakeQueuedForTest();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued.front().msg(), "switch nic finish");
  EXPECT_EQ(queued.front().jobid(), "job-1");

  sink_.QueueOmMessage("job-1", recovery::OmKind::kStressTest, "stress test finish, result:{}");
  EXPECT_EQ(sink_.QueuedOmMessages("job-1", recovery::OmKind::kStressTest), 1u);
  sink_.EndStreams("job-1", 0);
  EXPECT_EQ(sink_.QueuedOmMessages("job-1", recovery::OmKind::kStressTest), 0u);
}

TEST_F(RecoverySinkTest, AWaitingOperatorGetsTheNextMessage) {
  auto om = sink_.OpenStressOm("job-1");
  EXPECT_EQ(om->size(), 0u);
  sink_.QueueOmMessage("job-1", recovery::OmKind::kStressTest, "pause train timeout");
  EXPECT_EQ(om->size(), 1u);
  EXPECT_EQ(sink_.QueuedOmMessages("job-1", recovery::OmKind::kStressTest), 0u);
}

TEST_F(RecoverySinkTest, AnOperatorWaitingFifteenMinutesEndsEmptyAndTheTimeoutIsQueued) {
  auto om = sink_.OpenSwitchOm("job-1");
  clock_.Advance(absl::Minutes(15));
  sink_.ExpireOmWaiters(clock_.Now());
  EXPECT_TRUE(om->closing());
  EXPECT_EQ(om->size(), 0u);
  auto next = sink_.OpenSwitchOm("job-1");
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ(next->TakeQueuedForTest().front().msg(), recovery::kOmReportSwitchNicTimeout);
}

TEST_F(RecoverySinkTest, NotifyStreamsTakeOmPushesAndEndAtAReset) {
  EXPECT_FALSE(sink_.PushSwitchRankList("job-1", {{1}, {true}}));
  auto ch = sink_.OpenNotifySwitch("job-1");
  EXPECT_TRUE(sink_.PushSwitchRankList("job-1", {{1}, {true}}));
  auto replacement = sink_.OpenNotifySwitch("job-1");
  EXPECT_TRUE(ch->closing());
  sink_.EndStreams("job-1", 0);
  EXPECT_TRUE(replacement->closing());
  EXPECT_FALSE(sink_.PushSwitchRankList("job-1", {{1}, {true}}));

  EXPECT_FALSE(sink_.PushStressTestParams("job-1", {{0, {0, 1}}}));
  auto stress = sink_.OpenNotifyStress("job-1");
  EXPECT_TRUE(sink_.PushStressTestParams("job-1", {{0, {0, 1}}}));
  EXPECT_EQ(stress->TakeQueuedForTest().front().stressparam().at("0").ops_size(), 2);
}

TEST_F(RecoverySinkTest, ShutdownAnswersPendingTicketsAndEndsStreams) {
  auto s = sink_.OpenSignalStream("job-1");
  int32_t code = 0;
  sink_.AddTicket([&](int32_t c, const std::string&) { code = c; });
  sink_.CloseAll();
  EXPECT_EQ(code, recovery::kCodeServerInnerError);
  EXPECT_TRUE(s.channel->closing());
  EXPECT_FALSE(sink_.WriteSignal("job-1", Stop("U")));
}

}  // namespace recover_sink_test
}  // namespace clusterd::server
