// The executor against the memory store, a ManualClock and a recording SignalSink.

#include "recovery/executor.h"

#include "absl/synchronization/notification.h"
#include "common/check_code.h"
#include "common/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/record.h"
#include "store/memory/memory_store.h"
#include "unit/forwarding_store.h"
#include "unit/recovery/harness.h"

namespace clusterd::recovery {
namespace executor_test {

using ::testing::ElementsAre;
using testing::MakeConfig;

class RecordingSink : public SignalSink {
 public:
  explicit RecordingSink(store::ObjectStore& store) : store_(store) {}

  bool WriteSignal(const std::string& job_id, const Signal& signal) override {
    // The durable record must already describe the cycle that sends this signal.
    auto cm = store_.Get({"configmaps", "ns", RecordConfigMapName(job_id)});
    if (signal.signal_type != "preExitProcess" && signal.signal_type != "keep-alive") {
      records_before_signal.push_back(cm.ok() ? RecordFromConfigMap(*cm)->uuid : "<none>");
    }
    signals.push_back(signal);
    if (on_signal) on_signal();
    return stream_open;
  }
  bool PushSwitchRankList(const std::string&, const NicSwitchParams&) override { return true; }
  bool PushStressTestParams(const std::string&,
                            const std::map<int64_t, std::vector<int64_t>>&) override {
    return true;
  }
  void QueueOmMessage(const std::string&, OmKind, const std::string& text) override {
    om.push_back(text);
  }
  void EndStreams(const std::string&, uint64_t keep) override { ended.push_back(keep); }
  void Reply(uint64_t ticket, int32_t code, const std::string& info) override {
    replies[ticket] = {code, info};
    if (on_reply) on_reply();
  }

  std::vector<std::string> Types() const {
    std::vector<std::string> out;
    for (const Signal& s : signals) {
      out.push_back(s.change_strategy.empty() ? s.signal_type
                                              : s.signal_type + ":" + s.change_strategy);
    }
    return out;
  }

  store::ObjectStore& store_;
  bool stream_open = true;
  std::vector<Signal> signals;
  std::vector<std::string> records_before_signal;
  std::vector<std::string> om;
  std::vector<uint64_t> ended;
  std::map<uint64_t, std::pair<int32_t, std::string>> replies;
  std::function<void()> on_signal;
  std::function<void()> on_reply;
};

// Counts the successful writes (create, update, patch) of each object, passing everything
// through.
class CountingStore : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::Object> Create(std::string_view resource, store::Object object) override {
    const std::string name = store::NameOf(object);
    return Count(name, ForwardingStore::Create(resource, std::move(object)));
  }
  absl::StatusOr<store::Object> Update(std::string_view resource, store::Object object) override {
    const std::string name = store::NameOf(object);
    return Count(name, ForwardingStore::Update(resource, std::move(object)));
  }
  absl::StatusOr<store::Object> Patch(const store::ObjectKey& key,
                                      const store::Object& patch) override {
    return Count(key.name, ForwardingStore::Patch(key, patch));
  }

  std::map<std::string, int> writes;

 private:
  absl::StatusOr<store::Object> Count(const std::string& name,
                                      absl::StatusOr<store::Object> result) {
    if (result.ok()) ++writes[name];
    return result;
  }
};

// Refuses the writes of the recovery records (create and update of clusterd-recovery-*) while
// `failures` is above zero, counting it down, as a full disk or a read-only volume would.
class FailingRecordStore : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::Object> Create(std::string_view resource, store::Object object) override {
    if (absl::Status s = Refuse(object); !s.ok()) return s;
    return ForwardingStore::Create(resource, std::move(object));
  }
  absl::StatusOr<store::Object> Update(std::string_view resource, store::Object object) override {
    if (absl::Status s = Refuse(object); !s.ok()) return s;
    return ForwardingStore::Update(resource, std::move(object));
  }

  int failures = 0;
  int refused = 0;

 private:
  absl::Status Refuse(const store::Object& object) {
    if (!store::NameOf(object).starts_with("clusterd-recovery-") || failures <= 0) {
      return absl::OkStatus();
    }
    --failures;
    ++refused;
    return absl::ResourceExhaustedError("no space left on device");
  }
};

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() : sink_(store_) { Seed(/*reset_config=*/true); }

  void Seed(bool reset_config) {
    store::Object pg = {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                        {"kind", "PodGroup"},
                        {"metadata",
                         {{"name", "demo-j"},
                          {"namespace", "ns"},
                          {"labels", {{"process-recover-enable", "on"}}},
                          {"annotations", {{"recover-strategy", "recover"}}}}},
                        {"status", {{"phase", "Running"}}}};
    ASSERT_TRUE(store_.Create("podgroups", pg).ok());
    for (int r = 0; r < 2; ++r) {
      store::Object pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "demo-" + std::to_string(r)},
            {"namespace", "ns"},
            {"annotations",
             {{"hccl/rankIndex", std::to_string(r)},
              {"scheduling.k8s.io/group-name", "demo-j"},
              {"huawei.com/AscendReal", "Ascend910-0"}}}}},
          {"spec",
           {{"containers",
             {{{"name", "c"}, {"resources", {{"limits", {{"huawei.com/Ascend910", 8}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
      ASSERT_TRUE(store_.Create("pods", pod).ok());
    }
    if (reset_config) {
      store::Object cm = {
          {"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "reset-config-demo"}, {"namespace", "ns"}}},
          {"data", {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}}};
      ASSERT_TRUE(store_.Create("configmaps", cm).ok());
    }
  }

  JobIdentity Id() const { return JobIdentity{"J", "ns", "demo-j", "demo"}; }

  std::string ResetJson() {
    auto cm = store_.Get({"configmaps", "ns", "reset-config-demo"});
    return cm.ok() ? (*cm)["data"]["reset.json"].get<std::string>() : "<missing>";
  }

  void Post(RecoveryExecutor& ex, Event e) { ASSERT_TRUE(ex.Post("J", std::move(e)).ok()); }

  ManualClock clock_{testing::T0()};
  store::MemoryStore store_;
  RecordingSink sink_;
};

TEST_F(ExecutorTest, DrivesACycleThroughTheStoreAndTheSink) {
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(ResetJson(), ::testing::HasSubstr("\"FaultFlushing\":false"));
  auto cm = store_.Get({"configmaps", "ns", "reset-config-demo"});
  EXPECT_EQ((*cm)["data"]["checkCode"], Sha256Hex((*cm)["data"]["reset.json"].get<std::string>()));
  EXPECT_THAT(sink_.ended, ElementsAre(1u));

  Post(ex, ProcessFaultReported{{{10, 1}}, 7});
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(sink_.replies.at(7).second, "receive ReportProcessFault");
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain"));
  EXPECT_THAT(ResetJson(), ::testing::HasSubstr("\"FaultFlushing\":true"));
  // Written before the signal, with the signal's uuid.
  EXPECT_THAT(sink_.records_before_signal, ElementsAre(sink_.signals[0].uuid));
  // The pod got its fault-type label.
  auto pod = store_.Get({"pods", "ns", "demo-1"});
  EXPECT_EQ((*pod)["metadata"]["labels"]["fault-type"], "software");

  Post(ex, StopCompleteReported{0, 8});
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(sink_.replies.at(8).second,
            "jobId=J, uuid=" + sink_.signals[0].uuid + ", receive ReportStopComplete");
  clock_.Advance(absl::Seconds(1));
  ex.controller().RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(10));
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain", "globalFault"));
  EXPECT_THAT(ResetJson(), ::testing::HasSubstr("\"RankId\":15"));

  Post(ex, RecoverStrategyReported{{"recover", "exit"}, 9});
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain", "globalFault", "changeStrategy:recover"));
  Post(ex, RecoverStatusReported{0, "recover", {}, 10});
  ex.controller().RunUntilIdleForTest();
  auto pg = store_.Get({"podgroups", "ns", "demo-j"});
  EXPECT_EQ((*pg)["metadata"]["annotations"]["ProcessRecoverStatus"], "recover-success");
  EXPECT_EQ(ex.Snapshot("J")->state, State::kInit);
  auto record = RecordFromConfigMap(*store_.Get({"configmaps", "ns", "clusterd-recovery-j"}));
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->state, State::kInit);
}

TEST_F(ExecutorTest, ARecordWrittenBehindTheExecutorsBackIsOverwritten) {
  // The executor found no record at Register, so its first write creates one; if a record
  // appeared meanwhile (another clusterd before a hand-over, an operator), it is updated.
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  ASSERT_TRUE(
      store_.Create("configmaps", RecordConfigMap(NewJobRecovery("J", MakeConfig("recover")), "ns"))
          .ok());
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 7});
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain"));
  EXPECT_THAT(sink_.records_before_signal, ElementsAre(sink_.signals[0].uuid));
}

TEST_F(ExecutorTest, TheFirstSignalOfAReportIsTimed) {
  auto observed = [](const char* name) {
    return MetricsRegistry::Default().GetHistogram(name, "", {}).Read().count;
  };
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  ex.controller().RunUntilIdleForTest();
  const uint64_t signals = observed("clusterd_recovery_first_signal_seconds");
  const uint64_t waits = observed("clusterd_recovery_queue_wait_seconds");
  Post(ex, ProcessFaultReported{{{10, 1}}, 7});
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(observed("clusterd_recovery_first_signal_seconds"), signals + 1);
  EXPECT_EQ(observed("clusterd_recovery_queue_wait_seconds"), waits + 1);
  // An answer without a signal is not a signal's latency.
  Post(ex, StopCompleteReported{0, 8});
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(observed("clusterd_recovery_first_signal_seconds"), signals + 1);
}

TEST_F(ExecutorTest, RestartMidCycleResumesFromTheRecord) {
  std::string uuid;
  {
    RecoveryExecutor ex(store_, clock_, sink_);
    ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
    Post(ex, Subscribed{1});
    Post(ex, ProcessFaultReported{{{10, 1}}, 1});
    ex.controller().RunUntilIdleForTest();
    uuid = ex.CurrentUuid("J");
    ASSERT_FALSE(uuid.empty());
  }  // clusterd dies here (SIGKILL: nothing more is written)
  sink_.signals.clear();
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_EQ(*ex.RestoreAll(), 1);
  EXPECT_EQ(ex.Snapshot("J")->state, State::kWaitReportStopComplete);
  EXPECT_TRUE(ex.Snapshot("J")->resumed);
  // The client re-registers (no-op) and re-subscribes: the cycle continues.
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{2});
  Post(ex, StopCompleteReported{0, 2});
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(ex.Snapshot("J")->state, State::kWaitFaultFlushFinished);
  EXPECT_EQ(ex.CurrentUuid("J"), uuid);
  // stopTrain was written before the crash and its report had not come: asked once more, with
  // the recorded uuid (the record keeps the signal the wait answers).
  ASSERT_EQ(sink_.signals.size(), 1u);
  EXPECT_EQ(sink_.signals[0].signal_type, "stopTrain");
  EXPECT_EQ(sink_.signals[0].uuid, uuid);
}

TEST_F(ExecutorTest, RestartWhileTheStopSignalWasUnconfirmedSendsItAgain) {
  sink_.stream_open = true;
  {
    RecoveryExecutor ex(store_, clock_, sink_);
    ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
    Post(ex, Subscribed{1});
    ex.controller().RunUntilIdleForTest();
    // Die inside the signal write: the record is written, the write result never arrives.
    sink_.on_signal = [] { throw std::runtime_error("killed"); };
    Post(ex, ProcessFaultReported{{{10, 1}}, 1});
    EXPECT_THROW(ex.controller().RunUntilIdleForTest(), std::runtime_error);
  }
  sink_.on_signal = nullptr;
  const Signal first = sink_.signals.back();
  sink_.signals.clear();
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(ex.Snapshot("J")->state, State::kNotifyStopTrain);
  EXPECT_TRUE(sink_.signals.empty());  // nothing before the client is back
  Post(ex, Subscribed{2});
  ex.controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.signals.size(), 1u);
  EXPECT_EQ(sink_.signals[0], first);
  EXPECT_EQ(ex.Snapshot("J")->state, State::kWaitReportStopComplete);
}

TEST_F(ExecutorTest, MissingResetConfigMapKillsTheJob) {
  store_.Delete({"configmaps", "ns", "reset-config-demo"}).IgnoreError();
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(sink_.Types(), ElementsAre("killMaster"));
  EXPECT_EQ(ex.Snapshot("J")->state, State::kInit);
}

TEST_F(ExecutorTest, HotResetModeRefusesTheWrite) {
  auto cm = *store_.Get({"configmaps", "ns", "reset-config-demo"});
  cm["data"]["reset.json"] = R"({"RankList":[{"RankId":1,"Policy":"reset"}],"RetryTime":0})";
  ASSERT_TRUE(store_.Update("configmaps", cm).ok());
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(sink_.Types(), ElementsAre("killMaster"));
  EXPECT_THAT(ResetJson(), ::testing::HasSubstr("\"Policy\":\"reset\""));
}

TEST_F(ExecutorTest, NoStreamMeansTheSignalFails) {
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  sink_.stream_open = false;
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ex.controller().RunUntilIdleForTest();
  // stop not written -> FaultClear -> FaultRetry (label pause).
  EXPECT_EQ(ex.Snapshot("J")->state, State::kFaultRetry);
  auto pg = store_.Get({"podgroups", "ns", "demo-j"});
  EXPECT_EQ((*pg)["metadata"]["labels"]["process-recover-enable"], "pause");
  clock_.Advance(absl::Seconds(5));
  ex.controller().RunUntilIdleForTest();
  pg = store_.Get({"podgroups", "ns", "demo-j"});
  EXPECT_EQ((*pg)["metadata"]["labels"]["process-recover-enable"], "on");
  EXPECT_EQ(ex.Snapshot("J")->state, State::kInit);
}

TEST_F(ExecutorTest, JobDeletionDropsTheControllerAndItsRecord) {
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ex.controller().RunUntilIdleForTest();
  ASSERT_TRUE(store_.Get({"configmaps", "ns", "clusterd-recovery-j"}).ok());
  Post(ex, JobDeleted{});
  ex.controller().RunUntilIdleForTest();
  EXPECT_FALSE(ex.HasJob("J"));
  EXPECT_FALSE(store_.Get({"configmaps", "ns", "clusterd-recovery-j"}).ok());
  EXPECT_FALSE(ex.Post("J", Subscribed{3}).ok());
}

TEST_F(ExecutorTest, FaultJobInfoEntryRemovedTenSecondsAfterRecoverSuccess) {
  store::Object info = {{"apiVersion", "v1"},
                        {"kind", "ConfigMap"},
                        {"metadata", {{"name", "fault-job-info"}, {"namespace", "cluster-system"}}},
                        {"data", {{"J", "{}"}, {"K", "{}"}}}};
  ASSERT_TRUE(store_.Create("configmaps", info).ok());
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ex.controller().RunUntilIdleForTest();  // stopTrain is out: the report answers it
  Post(ex, StopCompleteReported{0, 2});
  ex.controller().RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(1));
  ex.controller().RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(10));
  ex.controller().RunUntilIdleForTest();
  Post(ex, RecoverStrategyReported{{"recover"}, 3});
  Post(ex, RecoverStatusReported{0, "recover", {}, 4});
  ex.controller().RunUntilIdleForTest();
  EXPECT_TRUE(
      (*store_.Get({"configmaps", "cluster-system", "fault-job-info"}))["data"].contains("J"));
  ASSERT_EQ(ex.Snapshot("J")->state, State::kInit);
  ASSERT_EQ(ex.Snapshot("J")->history.back().event, "recoverSuccess");
  clock_.Advance(absl::Seconds(10));
  ex.controller().RunUntilIdleForTest();
  const auto data = (*store_.Get({"configmaps", "cluster-system", "fault-job-info"}))["data"];
  EXPECT_FALSE(data.contains("J"));
  EXPECT_TRUE(data.contains("K"));
}

TEST_F(ExecutorTest, FaultJobInfoRecordsTheSuperPodNodeSetsBeforeTheGlobalFault) {
  // §11.5: the two pods sit on super pod 3 (their allocation's super_pod_id), pod 1 is faulty.
  for (int r = 0; r < 2; ++r) {
    store::Object patch;
    patch["spec"]["nodeName"] = r == 0 ? "node-a" : "node-b";
    patch["metadata"]["annotations"]["ascend.kubectl.kubernetes.io/ascend-910-configuration"] =
        R"({"pod_name":"demo","server_id":"uid","super_pod_id":3,"devices":[]})";
    ASSERT_TRUE(store_.Patch({"pods", "ns", "demo-" + std::to_string(r)}, patch).ok());
  }
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ex.controller().RunUntilIdleForTest();  // stopTrain is out: the report answers it
  Post(ex, StopCompleteReported{0, 2});
  ex.controller().RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(1));
  ex.controller()
      .RunUntilIdleForTest();  // into the force-release pause: fault-job-info is written first
  auto info = store_.Get({"configmaps", "cluster-system", "fault-job-info"});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ((*info)["data"]["J"], R"({"3":{"faultNodes":["node-b"],"healthyNodes":["node-a"]}})");
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain"));
  clock_.Advance(absl::Seconds(10));
  ex.controller().RunUntilIdleForTest();
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain", "globalFault"));
}

TEST_F(ExecutorTest, WorkersProcessEventsByThemselves) {
  RecoveryExecutor ex(store_, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  absl::Notification stopped;
  sink_.on_signal = [&stopped] {
    if (!stopped.HasBeenNotified()) stopped.Notify();
  };
  ex.Start(2);
  Post(ex, Subscribed{1});
  Post(ex, ProcessFaultReported{{{10, 1}}, 1});
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ex.Stop();
  EXPECT_EQ(sink_.signals[0].signal_type, "stopTrain");
}

// The way from a report to its first signal carries one record write: the answer to the report
// leaves once the fault is in the record, the signal once its uuid is, and the pod's fault-type
// label (information for the scheduler) after the signal.
TEST_F(ExecutorTest, AReportCostsOneRecordWriteBeforeItsFirstSignal) {
  CountingStore counting(store_);
  RecoveryExecutor ex(counting, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  ex.controller().RunUntilIdleForTest();
  counting.writes.clear();

  const std::string record = RecordConfigMapName("J");
  std::vector<int64_t> ranks_at_reply;
  int record_writes_at_reply = -1;
  sink_.on_reply = [&] {
    record_writes_at_reply = counting.writes[record];
    auto cm = store_.Get({"configmaps", "ns", record});
    ASSERT_TRUE(cm.ok());
    for (const FaultRank& f : RecordFromConfigMap(*cm)->caches.All()) {
      ranks_at_reply.push_back(f.rank);
    }
  };
  int record_writes_at_signal = -1;
  bool labelled_at_signal = true;
  sink_.on_signal = [&] {
    record_writes_at_signal = counting.writes[record];
    auto pod = store_.Get({"pods", "ns", "demo-1"});
    labelled_at_signal = (*pod)["metadata"].contains("labels");
  };
  Post(ex, ProcessFaultReported{{{10, 1}}, 7});
  ex.controller().RunUntilIdleForTest();

  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain"));
  EXPECT_EQ(record_writes_at_signal, 1);
  EXPECT_EQ(record_writes_at_reply, 1);
  EXPECT_THAT(ranks_at_reply, ElementsAre(10));
  EXPECT_FALSE(labelled_at_signal);
  auto pod = store_.Get({"pods", "ns", "demo-1"});
  EXPECT_EQ((*pod)["metadata"]["labels"]["fault-type"], "software");
  EXPECT_THAT(sink_.records_before_signal, ElementsAre(sink_.signals[0].uuid));
}

// Item 6 of issue 16: the record before the signal, always. While the record cannot be
// written, the stopTrain and the answer to the report that caused it wait and the job shows not
// durable; the write is retried with back-off on the executor's clock (no flood in between), and
// both leave the moment it succeeds.
TEST_F(ExecutorTest, NoSignalLeavesBeforeItsRecordIsWritten) {
  Counter& record_errors = MetricsRegistry::Default().GetCounter(
      "clusterd_recovery_io_errors_total", "", {{"what", "record"}});
  const uint64_t errors_before = record_errors.Value();
  FailingRecordStore failing(store_);
  RecoveryExecutor ex(failing, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  ex.controller().RunUntilIdleForTest();
  EXPECT_TRUE(ex.RecordDurability("J")->durable);
  failing.failures = 3;
  Post(ex, ProcessFaultReported{{{10, 1}}, 7});
  ex.controller().RunUntilIdleForTest();
  EXPECT_TRUE(sink_.signals.empty());
  EXPECT_FALSE(sink_.replies.contains(7));
  EXPECT_EQ(failing.refused, 1);
  std::optional<RecoveryExecutor::Durability> d = ex.RecordDurability("J");
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->durable);
  EXPECT_EQ(d->failures, 1);
  EXPECT_THAT(d->error, ::testing::HasSubstr("no space left on device"));
  EXPECT_EQ(d->since, clock_.Now());
  EXPECT_EQ(d->next_retry, clock_.Now() + RecoveryExecutor::kRecordRetryFirst);
  // The keep-alives keep announcing the cycle the store knows (none).
  EXPECT_EQ(ex.CurrentUuid("J"), "");

  // Nothing before the back-off is over, however often the job is looked at.
  clock_.Advance(RecoveryExecutor::kRecordRetryFirst - absl::Milliseconds(1));
  EXPECT_EQ(ex.controller().RunUntilIdleForTest(), 0u);
  EXPECT_EQ(ex.controller().RunUntilIdleForTest(), 0u);
  EXPECT_EQ(failing.refused, 1);
  clock_.Advance(absl::Milliseconds(1));
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(failing.refused, 2);
  EXPECT_EQ(ex.RecordDurability("J")->next_retry,
            clock_.Now() + 2 * RecoveryExecutor::kRecordRetryFirst);
  clock_.Advance(2 * RecoveryExecutor::kRecordRetryFirst);
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(failing.refused, 3);
  EXPECT_TRUE(sink_.signals.empty());
  EXPECT_EQ(record_errors.Value(), errors_before + 3);

  // The store takes the record again: the held answer, then the signal, with the record first.
  clock_.Advance(4 * RecoveryExecutor::kRecordRetryFirst);
  ex.controller().RunUntilIdleForTest();
  ASSERT_THAT(sink_.Types(), ElementsAre("stopTrain"));
  EXPECT_THAT(sink_.records_before_signal, ElementsAre(sink_.signals[0].uuid));
  ASSERT_TRUE(sink_.replies.contains(7));
  EXPECT_EQ(sink_.replies.at(7).second, "receive ReportProcessFault");
  EXPECT_TRUE(ex.RecordDurability("J")->durable);
  EXPECT_EQ(ex.CurrentUuid("J"), sink_.signals[0].uuid);
  EXPECT_EQ(ex.Snapshot("J")->state, State::kWaitReportStopComplete);
  EXPECT_EQ(record_errors.Value(), errors_before + 3);
}

// Events that arrive while the record cannot be written wait behind it, in order: the machine
// does not move on from a state the store does not hold.
TEST_F(ExecutorTest, EventsWaitWhileTheRecordCannotBeWritten) {
  FailingRecordStore failing(store_);
  RecoveryExecutor ex(failing, clock_, sink_);
  ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
  Post(ex, Subscribed{1});
  ex.controller().RunUntilIdleForTest();
  failing.failures = 1;
  Post(ex, ProcessFaultReported{{{10, 1}}, 7});
  ex.controller().RunUntilIdleForTest();
  ASSERT_FALSE(ex.RecordDurability("J")->durable);
  const State held_in = ex.Snapshot("J")->state;
  Post(ex, StreamClosed{1});  // would reset the controller
  ex.controller().RunUntilIdleForTest();
  EXPECT_EQ(ex.QueuedEvents("J"), 1u);  // not taken up
  EXPECT_EQ(ex.Snapshot("J")->state, held_in);
  EXPECT_EQ(sink_.ended.size(), 1u);  // only the Subscribe's
  clock_.Advance(RecoveryExecutor::kRecordRetryFirst);
  ex.controller().RunUntilIdleForTest();
  // Released in order: the stopTrain, then the disconnect's reset ends the streams.
  EXPECT_THAT(sink_.Types(), ElementsAre("stopTrain"));
  EXPECT_EQ(sink_.ended.size(), 2u);
  EXPECT_EQ(ex.Snapshot("J")->state, State::kInit);
}

// A SIGKILL while the record cannot be written: the cycle is lost with the process, but the
// client never saw a signal of it, so nothing it acted on is unknown to the store.
TEST_F(ExecutorTest, AKillWhileTheRecordCannotBeWrittenLeavesNoSignalBehind) {
  FailingRecordStore failing(store_);
  {
    RecoveryExecutor ex(failing, clock_, sink_);
    ASSERT_TRUE(ex.AddJob(Id(), MakeConfig("recover")).ok());
    Post(ex, Subscribed{1});
    ex.controller().RunUntilIdleForTest();
    failing.failures = 1000;
    Post(ex, ProcessFaultReported{{{10, 1}}, 7});
    ex.controller().RunUntilIdleForTest();
    for (int i = 0; i < 10; ++i) {
      clock_.Advance(absl::Seconds(1));
      ex.controller().RunUntilIdleForTest();
    }
  }  // killed
  EXPECT_TRUE(sink_.signals.empty());
  EXPECT_FALSE(sink_.replies.contains(7));
  EXPECT_FALSE(store_.Get({"configmaps", "ns", RecordConfigMapName("J")}).ok());
  RecoveryExecutor ex(store_, clock_, sink_);
  EXPECT_EQ(*ex.RestoreAll(), 0);
}

TEST_F(ExecutorTest, AJobIdThatCannotNameItsRecordGetsNoController) {
  RecoveryExecutor ex(store_, clock_, sink_);
  const absl::Status added =
      ex.AddJob(JobIdentity{"job_7", "ns", "demo-j", "demo"}, MakeConfig("recover"));
  EXPECT_EQ(added.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(added.message(), ::testing::HasSubstr("DNS-1123"));
  EXPECT_FALSE(ex.HasJob("job_7"));
}

}  // namespace executor_test
}  // namespace clusterd::recovery
