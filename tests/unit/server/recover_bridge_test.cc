// RecoveryBridge over the memory store with a ManualClock and no threads: the §2.3 Init and
// Register answers, the controller fed through the sink's streams and tickets, fault-centre
// snapshots, PodGroup deletion and the operator's JSON view.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recovery/vocabulary.h"
#include "server/recovery_bridge.h"
#include "store/memory/memory_store.h"
#include "unit/forwarding_store.h"

namespace clusterd::server {
namespace recover_bridge_test {

using ::testing::HasSubstr;

constexpr char kJob[] = "job-uid-1";

store::Object PodGroup(bool recover_on, bool platform = false) {
  store::Object labels = store::Object::object();
  if (recover_on) labels["process-recover-enable"] = "on";
  store::Object annotations = {{"recover-strategy", "recover"}};
  if (platform) annotations["ProcessRecoverStrategy"] = "";
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", "pt-pg"},
            {"namespace", "default"},
            {"labels", labels},
            {"annotations", annotations},
            {"ownerReferences",
             {{{"apiVersion", "mindxdl.gitee.com/v1"},
               {"kind", "AscendJob"},
               {"name", "pt"},
               {"uid", kJob},
               {"controller", true}}}}}},
          {"status", {{"phase", "Running"}}}};
}

store::Object Pod(int rank) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "pt-" + std::to_string(rank)},
            {"namespace", "default"},
            {"uid", "pod-uid-" + std::to_string(rank)},
            {"annotations",
             {{"hccl/rankIndex", std::to_string(rank)},
              {"scheduling.k8s.io/group-name", "pt-pg"},
              {"huawei.com/AscendReal", "Ascend910-0"}}}}},
          {"spec",
           {{"containers",
             {{{"name", "c"}, {"resources", {{"limits", {{"huawei.com/Ascend910", 8}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

class RecoveryBridgeTest : public ::testing::Test {
 protected:
  void Seed(bool recover_on, bool platform = false) {
    ASSERT_TRUE(store_.Create(store::kPodGroups, PodGroup(recover_on, platform)).ok());
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(store_.Create(store::kPods, Pod(r)).ok());
    store::Object cm = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "reset-config-pt"}, {"namespace", "default"}}},
        {"data", {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}}};
    ASSERT_TRUE(store_.Create(store::kConfigMaps, cm).ok());
  }

  void StartRegistered(bool platform = false) {
    Seed(true, platform);
    ASSERT_TRUE(bridge_.Start(/*run_threads=*/false).ok());
    ASSERT_EQ(bridge_.Init(kJob).code, 0);
    ASSERT_EQ(bridge_.Register(kJob).code, 0);
  }

  // What a reply to `ticket` carried.
  struct Reply {
    int32_t code = -1;
    std::string info;
  };
  uint64_t Ticket(Reply* out) {
    return bridge_.sink().AddTicket([out](int32_t c, const std::string& i) {
      out->code = c;
      out->info = i;
    });
  }

  ManualClock clock_;
  store::MemoryStore store_;
  RecoveryBridge bridge_{store_, clock_, nullptr, nullptr};
};

TEST_F(RecoveryBridgeTest, InitOfAnUnknownJobIs502) {
  ASSERT_TRUE(bridge_.Start(false).ok());
  RecoveryBridge::Answer a = bridge_.Init("nope");
  EXPECT_EQ(a.code, recovery::kCodeOperatePodGroupError);
  EXPECT_THAT(a.info, HasSubstr("nope"));
}

TEST_F(RecoveryBridgeTest, InitWithRecoveryOffIs403WithTheReferenceText) {
  Seed(false);
  ASSERT_TRUE(bridge_.Start(false).ok());
  RecoveryBridge::Answer a = bridge_.Init(kJob);
  EXPECT_EQ(a.code, 403);
  EXPECT_EQ(a.info, std::string("job(uid=") + kJob +
                        ") process-recover-enable and subhealthy hotswtich not open:<nil>");
}

TEST_F(RecoveryBridgeTest, RegisterBeforeInitIs408ThenInitAndRegisterSucceed) {
  Seed(true);
  ASSERT_TRUE(bridge_.Start(false).ok());
  RecoveryBridge::Answer early = bridge_.Register(kJob);
  EXPECT_EQ(early.code, 408);
  EXPECT_EQ(early.info, std::string("jobId=") + kJob + " not inited");

  RecoveryBridge::Answer init = bridge_.Init(kJob);
  EXPECT_EQ(init.code, 0);
  EXPECT_EQ(init.info, std::string("job(uid=") + kJob + ") init success");
  EXPECT_EQ(bridge_.Init(kJob).code, 0);  // already initialised

  RecoveryBridge::Answer reg = bridge_.Register(kJob);
  EXPECT_EQ(reg.code, 0);
  EXPECT_EQ(reg.info, "register success");
  EXPECT_TRUE(bridge_.executor().HasJob(kJob));
  EXPECT_EQ(bridge_.Register(kJob).info, "register success");
}

TEST_F(RecoveryBridgeTest, RegisterPatchesTheRecoveryLabelOn) {
  // Admitted through hotSwitch only: Register turns process recovery on for the scheduler.
  Seed(false);
  ASSERT_TRUE(store_
                  .Patch({std::string(store::kPodGroups), "default", "pt-pg"},
                         {{"metadata", {{"labels", {{"subHealthyStrategy", "hotSwitch"}}}}}})
                  .ok());
  ASSERT_TRUE(bridge_.Start(false).ok());
  ASSERT_EQ(bridge_.Init(kJob).code, 0);
  ASSERT_EQ(bridge_.Register(kJob).code, 0);
  auto pg = store_.Get({std::string(store::kPodGroups), "default", "pt-pg"});
  EXPECT_EQ((*pg)["metadata"]["labels"]["process-recover-enable"], "on");
}

TEST_F(RecoveryBridgeTest, RegisterAfterThePodGroupWentIs402) {
  Seed(true);
  ASSERT_TRUE(bridge_.Start(false).ok());
  ASSERT_EQ(bridge_.Init(kJob).code, 0);
  ASSERT_TRUE(store_.Delete({std::string(store::kPodGroups), "default", "pt-pg"}).ok());
  RecoveryBridge::Answer a = bridge_.Register(kJob);
  EXPECT_EQ(a.code, 402);
  EXPECT_EQ(a.info, std::string("jobId=") + kJob + " not exist, reuse registry");
}

TEST_F(RecoveryBridgeTest, ASoftwareFaultSendsStopTrainOnTheSubscribedStream) {
  StartRegistered();
  RecoverySink::OpenedStream s = bridge_.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::Subscribed{s.stream_id}).ok());
  bridge_.RunUntilIdleForTest();

  Reply reply;
  ASSERT_TRUE(
      bridge_.executor().Post(kJob, recovery::ProcessFaultReported{{{9, 1}}, Ticket(&reply)}).ok());
  bridge_.RunUntilIdleForTest();
  EXPECT_EQ(reply.code, 0);
  EXPECT_EQ(reply.info, "receive ReportProcessFault");
  auto queued = s.channel->TakeQueuedForTest();
  ASSERT_EQ(queued.size(), 1u);
  const ::ProcessManageSignal& stop = queued.front();
  EXPECT_EQ(stop.signaltype(), "stopTrain");
  EXPECT_THAT(stop.actions(), ::testing::ElementsAre("stop_train"));
  EXPECT_EQ(stop.jobid(), kJob);
  EXPECT_FALSE(stop.uuid().empty());
  ASSERT_EQ(stop.faultranks_size(), 1);
  EXPECT_EQ(stop.faultranks(0).rankid(), "9");

  // The keep-alive carries the cycle's uuid.
  clock_.Advance(absl::Seconds(5));
  bridge_.TickForTest();
  auto keep = s.channel->TakeQueuedForTest();
  ASSERT_EQ(keep.size(), 1u);
  EXPECT_EQ(keep.front().signaltype(), "keep-alive");
  EXPECT_EQ(keep.front().uuid(), stop.uuid());

  // The operator's view.
  auto view = bridge_.RecoveryOf("pt", "default");
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ((*view)["jobId"], kJob);
  EXPECT_EQ((*view)["state"], "WaitReportStopCompleteState");
  EXPECT_EQ((*view)["uuid"], stop.uuid());
  EXPECT_GE((*view)["history"].size(), 2u);
  EXPECT_EQ(bridge_.RecoveryList("default")["items"].size(), 1u);
  EXPECT_EQ(bridge_.RecoveryList("other")["items"].size(), 0u);
}

// The tick wakes when the next keep-alive is due, so keep-alives go out as their streams opened,
// not in bursts of every one due since a fixed tick (at 20,000 streams a 100 ms tick sent 400 at
// once): at least every 100 ms (OM waiters expire then), at most every 5 ms.
TEST_F(RecoveryBridgeTest, TheTickAsksToRunWhenTheNextKeepAliveIsDue) {
  StartRegistered();
  EXPECT_EQ(bridge_.TickForTest(), absl::Milliseconds(100)) << "no stream";
  RecoverySink::OpenedStream first = bridge_.sink().OpenSignalStream(kJob);
  EXPECT_EQ(bridge_.TickForTest(), absl::Milliseconds(100)) << "the keep-alive is 5 s away";
  clock_.Advance(absl::Milliseconds(2));
  RecoverySink::OpenedStream second = bridge_.sink().OpenSignalStream(kJob);
  clock_.Advance(absl::Milliseconds(4968));
  EXPECT_EQ(bridge_.TickForTest(), absl::Milliseconds(30));
  EXPECT_TRUE(first.channel->TakeQueuedForTest().empty());
  clock_.Advance(absl::Milliseconds(30));
  EXPECT_EQ(bridge_.TickForTest(), absl::Milliseconds(5)) << "the second is due 2 ms later";
  EXPECT_EQ(first.channel->TakeQueuedForTest().size(), 1u);
  EXPECT_TRUE(second.channel->TakeQueuedForTest().empty());
  clock_.Advance(absl::Milliseconds(5));
  EXPECT_EQ(bridge_.TickForTest(), absl::Milliseconds(100));
  EXPECT_EQ(second.channel->TakeQueuedForTest().size(), 1u);
}

TEST_F(RecoveryBridgeTest, AClientDisconnectResetsTheController) {
  StartRegistered();
  RecoverySink::OpenedStream s = bridge_.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::Subscribed{s.stream_id}).ok());
  Reply reply;
  ASSERT_TRUE(
      bridge_.executor().Post(kJob, recovery::ProcessFaultReported{{{9, 1}}, Ticket(&reply)}).ok());
  bridge_.RunUntilIdleForTest();
  ASSERT_NE(bridge_.executor().Snapshot(kJob)->state, recovery::State::kInit);
  // What the stream's on_done does when the client goes away.
  ASSERT_TRUE(bridge_.sink().SignalStreamDone(kJob, s.stream_id));
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::StreamClosed{s.stream_id}).ok());
  bridge_.RunUntilIdleForTest();
  EXPECT_EQ(bridge_.executor().Snapshot(kJob)->state, recovery::State::kInit);
  EXPECT_TRUE(bridge_.executor().CurrentUuid(kJob).empty());
}

TEST_F(RecoveryBridgeTest, ASecondSubscriptionEndsTheFirstStream) {
  StartRegistered();
  RecoverySink::OpenedStream first = bridge_.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::Subscribed{first.stream_id}).ok());
  bridge_.RunUntilIdleForTest();
  RecoverySink::OpenedStream second = bridge_.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::Subscribed{second.stream_id}).ok());
  bridge_.RunUntilIdleForTest();
  EXPECT_TRUE(first.channel->closing());
  EXPECT_FALSE(second.channel->closing());
  EXPECT_EQ(bridge_.sink().SignalStreams(kJob), 1u);
}

TEST_F(RecoveryBridgeTest, HardwareFaultsReachOnlyRegisteredJobs) {
  StartRegistered();
  RecoverySink::OpenedStream s = bridge_.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::Subscribed{s.stream_id}).ok());
  bridge_.RunUntilIdleForTest();

  cluster::JobFaultRanks other;
  other.job_id = "unregistered";
  other.ranks.push_back({});
  bridge_.OnJobFaults(other);  // ignored: no controller

  cluster::JobFaultRanks faults;
  faults.job_id = kJob;
  faults.health = "UnHealthy";
  cluster::FaultRankEntry e;
  e.rank_id = 9;
  e.pod_uid = "pod-uid-1";
  e.pod_rank = 1;
  e.code = "8C1F8608";
  e.level = "RestartNPU";
  e.device_id = "1";
  faults.ranks.push_back(e);
  bridge_.OnJobFaults(faults);
  bridge_.RunUntilIdleForTest();
  // §8.1 step 8 (no retry configured): INIT waits for the client's own report, then pre-exits.
  recovery::JobRecovery snap = *bridge_.executor().Snapshot(kJob);
  EXPECT_TRUE(snap.pre_exit.has_value() || snap.state != recovery::State::kInit);
  EXPECT_FALSE(bridge_.executor().HasJob("unregistered"));
}

TEST_F(RecoveryBridgeTest, DeletingThePodGroupRemovesTheControllerAndTheInitRecord) {
  StartRegistered();
  auto pg = store_.Get({std::string(store::kPodGroups), "default", "pt-pg"});
  ASSERT_TRUE(store_.Delete({std::string(store::kPodGroups), "default", "pt-pg"}).ok());
  bridge_.OnPodGroupEvent({store::WatchEventType::kDeleted, *pg});
  bridge_.RunUntilIdleForTest();
  EXPECT_FALSE(bridge_.executor().HasJob(kJob));
  EXPECT_EQ(bridge_.Register(kJob).code, 408);  // Init forgotten (§6.1)
  EXPECT_FALSE(bridge_.RecoveryOf(kJob, "").ok());
}

TEST_F(RecoveryBridgeTest, PlatformAnnotationsReachTheControllerThroughThePodGroupWatch) {
  // §9.6: with ProcessRecoverStrategy present the controller waits for the platform to write
  // the strategy on the PodGroup; the watch hands the change to the controller.
  StartRegistered(/*platform=*/true);
  RecoverySink::OpenedStream s = bridge_.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge_.executor().Post(kJob, recovery::Subscribed{s.stream_id}).ok());
  Reply reply;
  ASSERT_TRUE(
      bridge_.executor().Post(kJob, recovery::ProcessFaultReported{{{9, 1}}, Ticket(&reply)}).ok());
  bridge_.RunUntilIdleForTest();
  ASSERT_EQ(bridge_.executor().Snapshot(kJob)->phase, recovery::Phase::kWaitPlatStrategy);
  EXPECT_EQ(s.channel->size(), 0u);

  const store::ObjectKey key{std::string(store::kPodGroups), "default", "pt-pg"};
  ASSERT_TRUE(
      store_.Patch(key, {{"metadata", {{"annotations", {{"ProcessRecoverStrategy", "recover"}}}}}})
          .ok());
  bridge_.OnPodGroupEvent({store::WatchEventType::kModified, *store_.Get(key)});
  bridge_.RunUntilIdleForTest();
  recovery::JobRecovery snap = *bridge_.executor().Snapshot(kJob);
  EXPECT_EQ(snap.plat_strategy, "recover");
  EXPECT_EQ(snap.state, recovery::State::kWaitReportStopComplete);
  auto queued = s.channel->TakeQueuedForTest();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued.front().signaltype(), "stopTrain");
}

TEST_F(RecoveryBridgeTest, APodChangeRefreshesTheJobView) {
  StartRegistered();
  bridge_.RunUntilIdleForTest();
  ASSERT_TRUE(store_
                  .Patch({std::string(store::kPods), "default", "pt-1"},
                         {{"status", {{"phase", "Failed"}}}})
                  .ok());
  auto pod = store_.Get({std::string(store::kPods), "default", "pt-1"});
  bridge_.OnPodEvent({store::WatchEventType::kModified, *pod});
  bridge_.RunUntilIdleForTest();
  EXPECT_FALSE(bridge_.executor().Snapshot(kJob)->view.pods.at(1).running);
}

// Refuses every write of a recovery record while `refuse` is set (a full or read-only volume).
class RefusingRecordStore : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::Object> Create(std::string_view resource, store::Object object) override {
    if (Refused(object)) return absl::UnavailableError("read-only file system");
    return ForwardingStore::Create(resource, std::move(object));
  }
  absl::StatusOr<store::Object> Update(std::string_view resource, store::Object object) override {
    if (Refused(object)) return absl::UnavailableError("read-only file system");
    return ForwardingStore::Update(resource, std::move(object));
  }
  bool refuse = false;

 private:
  bool Refused(const store::Object& object) const {
    return refuse && store::NameOf(object).starts_with("clusterd-recovery-");
  }
};

// While the job's record cannot be written the operator's view shows it not durable, with the
// reason, and nothing of the cycle reaches the client: no stopTrain, no answer, keep-alives with
// the recorded uuid. The moment the store takes the record, the signal and the answer leave.
TEST_F(RecoveryBridgeTest, ARecordThatCannotBeWrittenShowsTheJobNotDurableAndHoldsItsSignal) {
  Seed(true);
  RefusingRecordStore refusing(store_);
  RecoveryBridge bridge(refusing, clock_, nullptr, nullptr);
  ASSERT_TRUE(bridge.Start(/*run_threads=*/false).ok());
  ASSERT_EQ(bridge.Init(kJob).code, 0);
  ASSERT_EQ(bridge.Register(kJob).code, 0);
  RecoverySink::OpenedStream s = bridge.sink().OpenSignalStream(kJob);
  ASSERT_TRUE(bridge.executor().Post(kJob, recovery::Subscribed{s.stream_id}).ok());
  bridge.RunUntilIdleForTest();
  EXPECT_EQ((*bridge.RecoveryOf(kJob, ""))["recordDurable"], true);

  refusing.refuse = true;
  Reply reply;
  uint64_t ticket = bridge.sink().AddTicket([&reply](int32_t c, const std::string& i) {
    reply.code = c;
    reply.info = i;
  });
  ASSERT_TRUE(bridge.executor().Post(kJob, recovery::ProcessFaultReported{{{9, 1}}, ticket}).ok());
  bridge.RunUntilIdleForTest();
  EXPECT_EQ(reply.code, -1);
  EXPECT_TRUE(s.channel->TakeQueuedForTest().empty());
  auto view = bridge.RecoveryOf(kJob, "");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ((*view)["ready"], false);
  EXPECT_EQ((*view)["recordDurable"], false);
  EXPECT_THAT((*view)["recordError"].get<std::string>(), HasSubstr("read-only file system"));
  EXPECT_EQ((*view)["recordFailedWrites"], 1);
  EXPECT_TRUE((*view).contains("recordHeldSince"));
  EXPECT_EQ(bridge.RecoveryList("")["items"][0]["recordDurable"], false);

  clock_.Advance(absl::Seconds(5));
  bridge.TickForTest();
  auto keep = s.channel->TakeQueuedForTest();
  ASSERT_EQ(keep.size(), 1u);
  EXPECT_EQ(keep.front().signaltype(), "keep-alive");
  EXPECT_EQ(keep.front().uuid(), "");

  refusing.refuse = false;
  bridge.executor().controller().RunUntilIdleForTest();
  auto queued = s.channel->TakeQueuedForTest();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued.front().signaltype(), "stopTrain");
  EXPECT_EQ(reply.code, 0);
  view = bridge.RecoveryOf(kJob, "");
  EXPECT_EQ((*view)["ready"], true);
  EXPECT_EQ((*view)["recordDurable"], true);
  EXPECT_FALSE((*view).contains("recordError"));
  bridge.Stop();
}

TEST_F(RecoveryBridgeTest, RegisterBeyondTheServedJobLimitIs500) {
  // --max-recovery-jobs: the original's 10000 by default; here 1, so that the first job fills it.
  Seed(true);
  RecoveryBridge::Options options;
  options.max_jobs = 1;
  RecoveryBridge bridge(store_, clock_, nullptr, nullptr, options);
  ASSERT_TRUE(bridge.Start(/*run_threads=*/false).ok());
  ASSERT_TRUE(store_
                  .Create(store::kPodGroups,
                          [] {
                            store::Object pg = PodGroup(true, false);
                            pg["metadata"]["name"] = "second-pg";
                            pg["metadata"]["ownerReferences"][0]["uid"] = "job-2";
                            return pg;
                          }())
                  .ok());
  ASSERT_EQ(bridge.Init(kJob).code, 0);
  ASSERT_EQ(bridge.Register(kJob).code, 0);
  ASSERT_EQ(bridge.Init("job-2").code, 0);
  RecoveryBridge::Answer second = bridge.Register("job-2");
  EXPECT_EQ(second.code, 500);
  EXPECT_EQ(second.info, "out of max serve jobs, reuse registry for jobId=job-2");
  // A job already served registers again.
  EXPECT_EQ(bridge.Register(kJob).code, 0);
}

TEST_F(RecoveryBridgeTest, InitAndRegisterRefuseAJobIdThatCannotNameItsRecord) {
  ASSERT_TRUE(bridge_.Start(false).ok());
  RecoveryBridge::Answer init = bridge_.Init("job_7");
  EXPECT_EQ(init.code, recovery::kCodeInvalidReqParam);
  EXPECT_THAT(init.info, HasSubstr("job(uid=job_7) init failed: jobId \"job_7\" cannot name"));
  RecoveryBridge::Answer reg = bridge_.Register("job_7");
  EXPECT_EQ(reg.code, recovery::kCodeInvalidReqParam);
  EXPECT_THAT(reg.info, HasSubstr("jobId=job_7 register err:"));
  EXPECT_THAT(reg.info, HasSubstr("DNS-1123"));
}

}  // namespace recover_bridge_test
}  // namespace clusterd::server
