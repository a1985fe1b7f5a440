// Advance() as a table: (state, event, now) -> (next state, commands).

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/machine.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace advance_table_test {

using testing::MakeConfig;
using testing::MakeView;
using testing::T0;

std::string Kind(const Command& c) {
  static constexpr const char* kNames[] = {"SendSignal",
                                           "PushSwitchRankList",
                                           "PushStressTestParams",
                                           "OmMessage",
                                           "WriteResetConfig",
                                           "PatchPodGroup",
                                           "PatchPod",
                                           "PatchNode",
                                           "UpdateFaultJobInfo",
                                           "ArmTimer",
                                           "ReplyReport",
                                           "ReportRetryFaults",
                                           "ReportNotRetryable",
                                           "IgnoreStressTestFaults",
                                           "EndStreams",
                                           "ForgetJob",
                                           "Note"};
  static_assert(std::size(kNames) == std::variant_size_v<Command>);
  std::string out = kNames[c.index()];
  if (const auto* s = std::get_if<SendSignal>(&c)) {
    out += "(" + s->signal.signal_type +
           (s->signal.change_strategy.empty() ? "" : ":" + s->signal.change_strategy) + ")";
  } else if (const auto* w = std::get_if<WriteResetConfig>(&c)) {
    out += "(" + std::string(ResetOperationName(w->op)) + ")";
  } else if (const auto* r = std::get_if<ReplyReport>(&c)) {
    out += "(" + std::to_string(r->code) + ")";
  } else if (const auto* n = std::get_if<Note>(&c)) {
    out += "(" + n->kind + ")";
  }
  return out;
}

// A controller in `state`, waiting as its entry action left it, with fault 10 (pod 1) cached.
JobRecovery In(State state, Phase phase) {
  JobRecovery job = NewJobRecovery("J", MakeConfig("retry,recover,dump"));
  job.view = MakeView(2, 8);
  for (const auto& [rank, pod] : job.view.pods) job.origin_pods[rank] = pod.uid;
  job.state = state;
  job.phase = phase;
  job.uuid = "U1";
  job.caches.normal = {{10, 1}};
  job.fault_pods = {{1, "uid-p1"}};
  job.timers[TimerKind::kStep] = T0() + absl::Minutes(15);
  job.next_id = 100;
  // Past INIT the cycle's first signal is out, so that reports answer it.
  job.cycle_signalled = state != State::kInit;
  return job;
}

JobRecovery AwaitingWrite(State state, WritePurpose purpose) {
  JobRecovery job = In(state, Phase::kAwaitWrite);
  job.write_purpose = purpose;
  job.awaiting_write = 42;
  return job;
}

JobRecovery AwaitingSignal(State state, Signal signal) {
  JobRecovery job = In(state, Phase::kAwaitSignal);
  job.awaiting_signal = 42;
  job.pending_signal = std::move(signal);
  return job;
}

struct Row {
  std::string name;
  JobRecovery current;
  Event event;
  State next;
  std::vector<std::string> commands;
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class AdvanceTable : public ::testing::TestWithParam<Row> {};

TEST_P(AdvanceTable, Row) {
  const Row& row = GetParam();
  const Step step = Advance(row.current, row.event, T0());
  EXPECT_EQ(StateName(step.next.state), StateName(row.next));
  std::vector<std::string> kinds;
  for (const Command& c : step.commands) kinds.push_back(Kind(c));
  EXPECT_EQ(kinds, row.commands);
}

const std::vector<std::string> kReset = {"Note(reset)", "WriteResetConfig(clear)", "EndStreams"};

std::vector<std::string> Plus(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AdvanceTable,
    ::testing::Values(
        Row{"NormalFaultInInitStartsTheCycle",
            In(State::kInit, Phase::kNone),
            ProcessFaultReported{{{12, 1}}, 1},
            State::kNotifyWaitFaultFlushing,
            {"ReplyReport(0)", "WriteResetConfig(notifyFaultFlushing)"}},
        Row{"RetryFaultReportGoesToTheFaultCentre",
            In(State::kInit, Phase::kNone),
            ProcessFaultReported{{{3, 0}}, 1},
            State::kInit,
            {"ReplyReport(0)", "PatchPod", "ReportRetryFaults"}},
        Row{"FlushWrittenSendsStop",
            AwaitingWrite(State::kNotifyWaitFaultFlushing, WritePurpose::kFlushNotify),
            WriteDone{42, true},
            State::kNotifyStopTrain,
            {"SendSignal(stopTrain)"}},
        Row{"FlushWriteFailedKills",
            AwaitingWrite(State::kNotifyWaitFaultFlushing, WritePurpose::kFlushNotify),
            WriteDone{42, false},
            State::kNotifyKillJob,
            {"SendSignal(killMaster)", "ArmTimer"}},
        Row{"StaleWriteResultIgnored",
            AwaitingWrite(State::kNotifyWaitFaultFlushing, WritePurpose::kFlushNotify),
            WriteDone{41, true},
            State::kNotifyWaitFaultFlushing,
            {}},
        Row{"StopWrittenWaitsForTheReport",
            AwaitingSignal(State::kNotifyStopTrain, StopSignal("J", "U1", {{10, 1}})),
            SignalWritten{42, true},
            State::kWaitReportStopComplete,
            {"ArmTimer"}},
        Row{"StopComplete404Kills",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            StopCompleteReported{404, 1},
            State::kNotifyKillJob,
            {"ReplyReport(0)", "SendSignal(killMaster)", "ArmTimer"}},
        Row{"StopCompleteOkFlushes",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            StopCompleteReported{0, 1},
            State::kWaitFaultFlushFinished,
            {"ReplyReport(0)", "ArmTimer"}},
        Row{"StopCompleteTimeoutClears",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            TimerFired{TimerKind::kStep, T0() + absl::Minutes(15)},
            State::kFaultClear,
            {"WriteResetConfig(clear)"}},
        Row{"StaleTimerIgnored",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            TimerFired{TimerKind::kStep, T0()},
            State::kWaitReportStopComplete,
            {}},
        Row{"StrategyReportDecidesRecover",
            In(State::kWaitReportRecoverStrategy, Phase::kWaitReport),
            RecoverStrategyReported{{"recover", "dump"}, 1},
            State::kNotifyDecidedStrategy,
            {"ReplyReport(0)", "SendSignal(changeStrategy:recover)"}},
        Row{"RetrySuccessFinishes", In(State::kWaitReportStepRetryStatus, Phase::kWaitReport),
            RecoverStatusReported{0, "retry", {}, 1}, State::kInit,
            Plus({"ReplyReport(0)", "PatchPodGroup"}, kReset)},
        Row{"RetryTimeoutHandsOver",
            In(State::kWaitReportStepRetryStatus, Phase::kWaitReport),
            TimerFired{TimerKind::kStep, T0() + absl::Minutes(15)},
            State::kFaultRetry,
            {"PatchPodGroup"}},
        Row{"DumpFailedCleansUpAndListens",
            In(State::kWaitReportDumpStatus, Phase::kWaitReport),
            RecoverStatusReported{407, "dump", {}, 1},
            State::kListenScheduleResult,
            {"ReplyReport(0)", "PatchPodGroup", "SendSignal(changeStrategy:exit)", "ArmTimer"}},
        Row{"ClearFailedKills",
            AwaitingWrite(State::kFaultClear, WritePurpose::kClear),
            WriteDone{42, false},
            State::kNotifyKillJob,
            {"SendSignal(killMaster)", "ArmTimer"}},
        Row{"KillWriteFailedStillFinishes",
            AwaitingSignal(State::kNotifyKillJob, KillMasterSignal("J", "U1")),
            SignalWritten{42, false}, State::kInit, kReset},
        Row{"FaultRetryResumedFinishes",
            AwaitingWrite(State::kFaultRetry, WritePurpose::kFaultRetryResume), WriteDone{42, true},
            State::kInit, kReset},
        Row{"FaultRetryPauseFailedKills",
            AwaitingWrite(State::kFaultRetry, WritePurpose::kFaultRetryPause),
            WriteDone{42, false},
            State::kNotifyKillJob,
            {"SendSignal(killMaster)", "ArmTimer"}},
        Row{"FaultOccurOutsideInitIsAnOrderMix",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            ProcessFaultReported{{{12, 1}}, 1},
            State::kWaitReportStopComplete,
            {"ReplyReport(0)", "Note(order_mix)"}},
        Row{"SubscribeResets", In(State::kWaitReportStopComplete, Phase::kWaitReport),
            Subscribed{9}, State::kInit, kReset},
        Row{"DeletionForgets",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            JobDeleted{},
            State::kInit,
            {"Note(reset)", "EndStreams", "ForgetJob"}},
        Row{"NicSwitchRefusedOutsideInit",
            In(State::kWaitReportStopComplete, Phase::kWaitReport),
            SwitchNicRequested{{{1}, {true}}, 1},
            State::kWaitReportStopComplete,
            {"ReplyReport(411)"}},
        Row{"NicSwitchPausesInInit",
            In(State::kInit, Phase::kNone),
            SwitchNicRequested{{{1}, {true}}, 1},
            State::kNotifyPauseTrain,
            {"ReplyReport(0)", "SendSignal(stopTrain)"}}),
    [](const ::testing::TestParamInfo<Row>& info) { return info.param.name; });

}  // namespace advance_table_test
}  // namespace clusterd::recovery
