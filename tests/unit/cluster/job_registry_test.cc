// The job registry over a memory store with a manual clock (jobs-ranktable-diagnosis.md §1.6,
// §1.7, §3.2-§3.5). Events are fed through the intake methods the watch handlers call, and
// reconciles run on the test thread (controller().RunUntilIdleForTest()), so nothing sleeps.
#include "cluster/job_registry.h"

#include <algorithm>
#include <atomic>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "rank_table_golden.h"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"
#include "store/memory/memory_store.h"
#include "unit/forwarding_store.h"

namespace clusterd::cluster {
namespace job_registry_test {

using model::JobStatus;
using model::JobSummarySignal;
using store::WatchEvent;
using store::WatchEventType;
using testing::ExamplePod;
using ::testing::HasSubstr;
using testing::Json;
using testing::kJobUid;
using testing::NodeObject;
using testing::PodGroupObject;
using testing::PodGroupSpec;
using testing::PodObject;
using testing::PodSpec;

// Forwards to a memory store; writes other than patches fail while `fail_writes` is set.
// Counts the creates and updates the store refused as AlreadyExists / NotFound: on the kube
// store each is a request to the API server that wrote nothing.
class FlakyStore final : public clusterd::testing::ForwardingStore {
 public:
  FlakyStore() : ForwardingStore(memory_) {}
  std::atomic<bool> fail_writes{false};
  std::atomic<int> refused_writes{0};
  std::atomic<int> writes{0};  // creates and updates asked of the store

  absl::StatusOr<store::Object> Create(std::string_view r, store::Object o) override {
    ++writes;
    if (fail_writes) return absl::UnavailableError("disk full");
    auto created = ForwardingStore::Create(r, std::move(o));
    if (absl::IsAlreadyExists(created.status())) ++refused_writes;
    return created;
  }
  absl::StatusOr<store::Object> Update(std::string_view r, store::Object o) override {
    ++writes;
    if (fail_writes) return absl::UnavailableError("disk full");
    auto updated = ForwardingStore::Update(r, std::move(o));
    if (absl::IsNotFound(updated.status())) ++refused_writes;
    return updated;
  }
  absl::Status Delete(const store::ObjectKey& k, std::string_view rv) override {
    if (fail_writes) return absl::UnavailableError("disk full");
    return ForwardingStore::Delete(k, rv);
  }

 private:
  store::MemoryStore memory_;  // bound by the base before it is built; used only afterwards
};

uint64_t Rejected(const std::string& reason) {
  return MetricsRegistry::Default()
      .GetCounter("clusterd_job_registry_rejected_total", "", {{"reason", reason}})
      .Value();
}

class JobRegistryTest : public ::testing::Test {
 protected:
  JobRegistryTest() { MakeRegistry(); }

  void MakeRegistry(JobRegistry::Options options = Fast()) {
    registry_ = std::make_unique<JobRegistry>(store_, clock_, options);
    registry_->AddSignalListener([this](const JobSummarySignal& s) {
      absl::MutexLock lock(&mu_);
      signals_.push_back(s);
    });
  }

  static JobRegistry::Options Fast() {
    JobRegistry::Options o;
    o.reconcile_rate = 1e6;
    o.reconcile_burst = 1000000;
    return o;
  }

  void AddPodGroup(const PodGroupSpec& spec = {}) {
    registry_->OnPodGroupEvent(WatchEvent{WatchEventType::kAdded, PodGroupObject(spec)});
  }
  // PodGroup pg-<i> of its own job job-<i>.
  static PodGroupSpec NumberedPodGroup(int i) {
    PodGroupSpec pg;
    pg.name = absl::StrCat("pg-", i);
    pg.uid = absl::StrCat("pg-uid-", i);
    pg.owner_uid = absl::StrCat("job-", i);
    pg.owner_name = absl::StrCat("job-", i);
    return pg;
  }
  // PodGroups pg-0 .. pg-<count - 1>, each of its own job (job-0 ...).
  void AddNumberedPodGroups(int count) {
    for (int i = 0; i < count; ++i) AddPodGroup(NumberedPodGroup(i));
  }
  void DeletePodGroup(const PodGroupSpec& spec = {}) {
    registry_->OnPodGroupEvent(WatchEvent{WatchEventType::kDeleted, PodGroupObject(spec)});
  }
  void PutPod(const PodSpec& spec, WatchEventType type = WatchEventType::kModified) {
    registry_->OnPodEvent(WatchEvent{type, PodObject(spec)});
  }
  void DeletePod(const PodSpec& spec) {
    registry_->OnPodEvent(WatchEvent{WatchEventType::kDeleted, PodObject(spec)});
  }
  void AddExampleNodes() {
    registry_->OnNodeEvent(WatchEvent{
        WatchEventType::kAdded, NodeObject("node-a", "192.168.0.11", "2102313LNR10P5100001")});
    registry_->OnNodeEvent(WatchEvent{
        WatchEventType::kAdded, NodeObject("node-b", "192.168.0.12", "2102313LNR10P5100002")});
  }
  // The §2.2 job, running.
  void RunExampleJob() {
    AddExampleNodes();
    AddPodGroup();
    registry_->controller().RunUntilIdleForTest();
    PodSpec a = ExamplePod(0), b = ExamplePod(1);
    a.master_addr_env = b.master_addr_env = "192.168.0.11";
    PutPod(a, WatchEventType::kAdded);
    PutPod(b, WatchEventType::kAdded);
    registry_->controller().RunUntilIdleForTest();
  }

  // The objects a previous clusterd and the scheduler left: two nodes, the PodGroup and the two
  // pods of the example job.
  void SeedRunningJob() {
    for (const Json& node : {NodeObject("node-a", "192.168.0.11", "2102313LNR10P5100001"),
                             NodeObject("node-b", "192.168.0.12", "2102313LNR10P5100002")}) {
      ASSERT_TRUE(store_.Create("nodes", node).ok());
    }
    ASSERT_TRUE(store_.Create("podgroups", PodGroupObject({})).ok());
    ASSERT_TRUE(store_.Create("pods", PodObject(ExamplePod(0))).ok());
    ASSERT_TRUE(store_.Create("pods", PodObject(ExamplePod(1))).ok());
  }

  std::vector<JobSummarySignal> TakeSignals() {
    absl::MutexLock lock(&mu_);
    return std::exchange(signals_, {});
  }

  absl::StatusOr<store::Object> ConfigMap(const std::string& name,
                                          const std::string& ns = "default") {
    return store_.Get(store::ObjectKey{"configmaps", ns, name});
  }

  ManualClock clock_{absl::FromUnixSeconds(1735689600)};
  FlakyStore flaky_;
  store::ObjectStore& store_ = flaky_;
  std::unique_ptr<JobRegistry> registry_;
  absl::Mutex mu_;
  std::vector<JobSummarySignal> signals_;
};

TEST_F(JobRegistryTest, PodGroupAddCreatesAPendingRecordAnInitConfigMapAndASignal) {
  AddPodGroup();
  EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 1u);
  auto job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->name, "pt-2x8");
  EXPECT_EQ(job->ns, "default");
  EXPECT_EQ(job->status, JobStatus::kPending);
  EXPECT_EQ(job->framework, "pytorch");
  auto cm = ConfigMap("job-summary-pt-2x8");
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ((*cm)["data"]["job_status"], "pending");
  EXPECT_EQ((*cm)["data"]["hccl.json"], R"({"status":"initializing"})");
  EXPECT_EQ((*cm)["data"]["time"], "1735689600");
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].op, "add");
  EXPECT_EQ(signals[0].job_status, "pending");
  EXPECT_EQ(signals[0].hccl_json, R"({"status":"initializing"})");
  EXPECT_EQ(signals[0].job_id, kJobUid);
  EXPECT_EQ(signals[0].uuid.size(), 36u);
}

TEST_F(JobRegistryTest, WorkedExampleRunsWithTheExactRankTable) {
  RunExampleJob();
  auto job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->status, JobStatus::kRunning);
  EXPECT_EQ(job->pod_count, 2);
  auto cm = ConfigMap("job-summary-pt-2x8");
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["data"]["hccl.json"], testing::kRankTableExample22);
  EXPECT_EQ((*cm)["data"]["job_status"], "running");
  EXPECT_EQ((*cm)["data"]["masterAddr"], "192.168.0.11");
  EXPECT_EQ((*cm)["data"]["sharedTorIp"], "");
  EXPECT_EQ((*cm)["metadata"]["labels"]["ring-controller.atlas"], "ascend-910");
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 2u);  // init, then running
  EXPECT_EQ(signals[1].op, "add");
  EXPECT_EQ(signals[1].job_status, "running");
  EXPECT_EQ(signals[1].hccl_json, testing::kRankTableExample22);
  EXPECT_EQ(signals[1].master_addr, "192.168.0.11");
  EXPECT_EQ(signals[1].delete_time, "");
  EXPECT_EQ(signals[1].total, "1");
}

TEST_F(JobRegistryTest, EventsOfOneJobAreCoalescedIntoOneReconcile) {
  AddExampleNodes();
  AddPodGroup();
  for (int i = 0; i < 10; ++i) {
    PutPod(ExamplePod(0));
    PutPod(ExamplePod(1));
  }
  EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 1u);
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);  // straight to running: no record existed yet
  EXPECT_EQ(signals[0].job_status, "running");
}

TEST_F(JobRegistryTest, ReschedulingGoesRunningFailedRunning) {
  RunExampleJob();
  TakeSignals();
  DeletePod(ExamplePod(1));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FindJob(kJobUid)->status, JobStatus::kFailed);
  PutPod(ExamplePod(1), WatchEventType::kAdded);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FindJob(kJobUid)->status, JobStatus::kRunning);
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].job_status, "failed");
  EXPECT_EQ(signals[0].delete_time, "1735689600");
  EXPECT_EQ(signals[1].job_status, "running");
}

TEST_F(JobRegistryTest, UnchangedStatusWritesAndEmitsNothing) {
  RunExampleJob();
  TakeSignals();
  auto before = ConfigMap("job-summary-pt-2x8");
  PodSpec a = ExamplePod(0);
  a.extra_annotations = {{"unrelated", "change"}};
  PutPod(a);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(TakeSignals().empty());
  EXPECT_EQ(store::ResourceVersionOf(*ConfigMap("job-summary-pt-2x8")),
            store::ResourceVersionOf(*before));
}

TEST_F(JobRegistryTest, DeletionPreDeletesAndRemovesTheConfigMapsAfterTheGrace) {
  RunExampleJob();
  TakeSignals();
  DeletePod(ExamplePod(0));
  DeletePod(ExamplePod(1));
  DeletePodGroup();
  registry_->controller().RunUntilIdleForTest();
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].op, "delete");
  EXPECT_EQ(signals[0].job_status, "failed");
  EXPECT_EQ(signals[0].hccl_json, testing::kRankTableExample22);  // the last rank table
  auto cm = ConfigMap("job-summary-pt-2x8");
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["data"]["operator"], "delete");
  EXPECT_EQ((*cm)["data"]["deleteTime"], "1735689600");
  EXPECT_TRUE(registry_->FindJob(kJobUid)->pre_deleted);

  clock_.Advance(absl::Seconds(59));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(ConfigMap("job-summary-pt-2x8").ok());
  clock_.Advance(absl::Seconds(1));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(absl::IsNotFound(ConfigMap("job-summary-pt-2x8").status()));
  EXPECT_FALSE(registry_->FindJob(kJobUid).has_value());
  EXPECT_TRUE(TakeSignals().empty());  // final deletion has no signal
}

TEST_F(JobRegistryTest, CompletedJobStaysCompleteWhenPreDeleted) {
  RunExampleJob();
  PodSpec a = ExamplePod(0), b = ExamplePod(1);
  a.phase = b.phase = "Succeeded";
  PutPod(a);
  PutPod(b);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FindJob(kJobUid)->status, JobStatus::kComplete);
  DeletePod(a);
  DeletePod(b);
  DeletePodGroup();
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FindJob(kJobUid)->status, JobStatus::kComplete);
  EXPECT_EQ((*ConfigMap("job-summary-pt-2x8"))["data"]["job_status"], "complete");
}

TEST_F(JobRegistryTest, PodGroupBackBeforeTheGraceRevivesTheJob) {
  AddPodGroup();
  registry_->controller().RunUntilIdleForTest();
  DeletePodGroup();
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(registry_->FindJob(kJobUid)->pre_deleted);
  AddPodGroup();
  registry_->controller().RunUntilIdleForTest();
  auto job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_FALSE(job->pre_deleted);
  clock_.Advance(absl::Minutes(2));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(registry_->FindJob(kJobUid).has_value());
  EXPECT_TRUE(ConfigMap("job-summary-pt-2x8").ok());
}

TEST_F(JobRegistryTest, ANewJobWithTheSameNameDropsThePreDeletedRecord) {
  AddPodGroup();
  registry_->controller().RunUntilIdleForTest();
  DeletePodGroup();
  registry_->controller().RunUntilIdleForTest();
  PodGroupSpec second;
  second.uid = "pg-uid-2";
  second.owner_uid = "second-job-uid";
  AddPodGroup(second);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_FALSE(registry_->FindJob(kJobUid).has_value());
  EXPECT_TRUE(registry_->FindJob("second-job-uid").has_value());
  EXPECT_EQ((*ConfigMap("job-summary-pt-2x8"))["data"]["job_id"], "second-job-uid");
}

TEST_F(JobRegistryTest, HourlyConsistencyRecheckRequeuesEveryJob) {
  ASSERT_TRUE(registry_->Start().ok());
  RunExampleJob();
  TakeSignals();
  clock_.Advance(absl::Hours(1));
  // The consistency key, then the job it queued.
  EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 2u);
  EXPECT_TRUE(TakeSignals().empty());  // state unchanged: nothing rewritten
  registry_->Stop();
}

TEST_F(JobRegistryTest, PodsWithoutControllerOwnerAreRejectedAndCounted) {
  const uint64_t before = Rejected("pod_without_owner");
  PodSpec orphan = ExamplePod(0);
  orphan.owner_uid = "";
  PutPod(orphan, WatchEventType::kAdded);
  PodSpec not_controller = ExamplePod(1);
  not_controller.owner_controller = false;
  PutPod(not_controller, WatchEventType::kAdded);
  EXPECT_EQ(Rejected("pod_without_owner"), before + 2);
  EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 0u);
  EXPECT_TRUE(registry_->Jobs().empty());
}

TEST_F(JobRegistryTest, PodGroupWithoutOwnerDefinesNoJob) {
  const uint64_t before = Rejected("podgroup_without_owner");
  PodGroupSpec spec;
  spec.owner_uid = "";
  AddPodGroup(spec);
  EXPECT_EQ(Rejected("podgroup_without_owner"), before + 1);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(registry_->Jobs().empty());
}

TEST_F(JobRegistryTest, PodsWhoseOwnerHasNoPodGroupMakeNoJob) {
  PutPod(ExamplePod(0), WatchEventType::kAdded);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(registry_->Jobs().empty());
  EXPECT_EQ(registry_->PodsOfJob(kJobUid).size(), 1u);
  AddPodGroup();  // the PodGroup shows up late
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->Jobs().size(), 1u);
}

TEST_F(JobRegistryTest, BadRankIndicesKeepTheJobInitializingAndLeaveOtherJobsAlone) {
  AddExampleNodes();
  AddPodGroup();
  PodSpec a = ExamplePod(0), b = ExamplePod(1);
  b.rank_index = "0";  // duplicate
  PutPod(a, WatchEventType::kAdded);
  PutPod(b, WatchEventType::kAdded);
  // A second, healthy job.
  PodGroupSpec other;
  other.name = "other-pg";
  other.uid = "pg-other";
  other.owner_uid = "other-job";
  other.owner_name = "other";
  other.min_member = 1;
  AddPodGroup(other);
  PodSpec c = ExamplePod(0);
  c.name = "other-0";
  c.uid = "other-pod";
  c.owner_uid = "other-job";
  c.owner_name = "other";
  PutPod(c, WatchEventType::kAdded);
  const uint64_t before = Rejected("duplicate_rank_index");
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(Rejected("duplicate_rank_index"), before + 1);
  auto cm = ConfigMap("job-summary-pt-2x8");
  ASSERT_TRUE(cm.ok());
  // The pods run, so the job is running, but its rank table is not complete.
  EXPECT_EQ((*cm)["data"]["job_status"], "running");
  EXPECT_THAT((*cm)["data"]["hccl.json"].get<std::string>(),
              HasSubstr(R"("status":"initializing")"));
  auto other_cm = ConfigMap("job-summary-other");
  ASSERT_TRUE(other_cm.ok());
  EXPECT_THAT((*other_cm)["data"]["hccl.json"].get<std::string>(),
              HasSubstr(R"("status":"complete")"));
}

TEST_F(JobRegistryTest, MalformedAllocationIsCountedAndTheJobKeepsGoing) {
  AddPodGroup();
  PodSpec a = ExamplePod(0), b = ExamplePod(1);
  b.allocation_override = "{\"devices\": 3}";
  PutPod(a, WatchEventType::kAdded);
  PutPod(b, WatchEventType::kAdded);
  const uint64_t before = Rejected("malformed_allocation");
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(Rejected("malformed_allocation"), before + 1);
  EXPECT_EQ(registry_->FindJob(kJobUid)->rank_table.status, "initializing");
}

TEST_F(JobRegistryTest, FailedWritesAreRetriedAndTheSignalWaitsForThem) {
  flaky_.fail_writes = true;
  AddPodGroup();
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(TakeSignals().empty());
  EXPECT_FALSE(registry_->FindJob(kJobUid).has_value());
  flaky_.fail_writes = false;
  clock_.Advance(absl::Seconds(1));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(TakeSignals().size(), 1u);
  EXPECT_TRUE(ConfigMap("job-summary-pt-2x8").ok());
}

TEST_F(JobRegistryTest, ReconcilesAreRateLimited) {
  JobRegistry::Options options;
  options.reconcile_rate = 5;  // the original's rate
  options.reconcile_burst = 20;
  MakeRegistry(options);
  AddNumberedPodGroups(25);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->Jobs().size(), 20u);
  clock_.Advance(absl::Seconds(1));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->Jobs().size(), 25u);
}

// A backlog waits for the bucket in turns: each waiting job reserves one token and is woken when
// it is paid for. Retrying every waiting job at every refill made a backlog of 20,000 jobs cost
// 20,000 wake-ups per token (half a core at 100 tokens a second).
TEST_F(JobRegistryTest, ABacklogOfJobsIsWokenOneJobPerToken) {
  JobRegistry::Options options;
  options.reconcile_rate = 1;
  options.reconcile_burst = 1;
  MakeRegistry(options);
  AddNumberedPodGroups(10);
  // One job takes the token; each of the nine others reserves its turn (and is decided ahead).
  EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 10u);
  EXPECT_EQ(registry_->Jobs().size(), 1u);
  EXPECT_EQ(registry_->FaultSnapshot().size(), 10u);
  for (size_t paid = 1; paid <= 9; ++paid) {
    clock_.Advance(absl::Seconds(1));
    EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 1u) << paid;
    EXPECT_EQ(registry_->Jobs().size(), 1u + paid);
  }
  // No job is left waiting.
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(registry_->controller().RunUntilIdleForTest(), 0u);
}

// Start decides every job of the store, on the given parallel runner: the fault view holds
// them all when Start returns, however few write tokens there are, and the worker does not
// decide them again while they wait for their tokens.
TEST_F(JobRegistryTest, StartDecidesEveryJobOfTheStoreForTheFaultView) {
  JobRegistry::Options options;
  options.reconcile_rate = 1;
  options.reconcile_burst = 1;
  std::vector<size_t> runs;
  options.parallel_for = [&runs](size_t n, const std::function<void(size_t)>& fn) {
    runs.push_back(n);
    for (size_t i = n; i > 0; --i) fn(i - 1);  // another order than the items'
  };
  MakeRegistry(options);
  int views = 0;
  registry_->AddViewListener([&views] { ++views; });
  ASSERT_NO_FATAL_FAILURE(SeedRunningJob());
  PodGroupSpec second;
  second.name = "second";
  second.uid = "pg-2";
  second.owner_uid = "job-2";
  second.owner_name = "second";
  ASSERT_TRUE(store_.Create("podgroups", PodGroupObject(second)).ok());
  ASSERT_TRUE(registry_->Start().ok());
  EXPECT_EQ(runs, (std::vector<size_t>{2, 2}));  // the two pods, then the two jobs
  std::vector<JobRegistry::FaultSnapshotEntry> view = registry_->FaultSnapshot();
  ASSERT_EQ(view.size(), 2u);
  const auto running = std::find_if(view.begin(), view.end(),
                                    [](const auto& e) { return e.record->job_id == kJobUid; });
  ASSERT_NE(running, view.end());
  EXPECT_EQ(running->record->status, JobStatus::kRunning);
  EXPECT_EQ(running->record->previous_servers.size(), 2u);
  EXPECT_EQ(views, 1);
  EXPECT_TRUE(registry_->Jobs().empty());  // nothing is committed before the worker runs
  // One job takes the only token; the other waits for its own, decided already.
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->Jobs().size(), 1u);
  EXPECT_EQ(views, 2) << "the committed job only";
  EXPECT_EQ(registry_->FaultSnapshot().size(), 2u);
  registry_->Stop();
}

// The bucket paces the job-summary writes, not what the fault centre knows: a job whose
// reconcile waits for a token is in the fault view with the record it will write (its rank
// table, so its NPUs map to it), while its summary and signal wait for the write.
TEST_F(JobRegistryTest, AJobWaitingForAWriteTokenIsInTheFaultViewAtOnce) {
  JobRegistry::Options options;
  options.reconcile_rate = 1;
  options.reconcile_burst = 1;
  MakeRegistry(options);
  int views = 0;
  registry_->AddViewListener([&views] { ++views; });
  RunExampleJob();  // the PodGroup takes the only token; the pods' reconcile waits
  auto committed = registry_->FindJob(kJobUid);
  ASSERT_TRUE(committed.has_value());
  EXPECT_EQ(committed->status, JobStatus::kPending);
  EXPECT_EQ(TakeSignals().size(), 1u);  // the init signal only
  std::vector<JobRegistry::FaultSnapshotEntry> view = registry_->FaultSnapshot();
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0].record->status, JobStatus::kRunning);
  EXPECT_EQ(view[0].record->previous_servers.size(), 2u);
  EXPECT_EQ(view[0].pods.size(), 2u);
  EXPECT_GE(views, 2);
  // Decided once per change: another pass without a token decides nothing again.
  const auto decided = view[0].record;
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FaultSnapshot()[0].record, decided);

  clock_.Advance(absl::Seconds(1));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FindJob(kJobUid)->status, JobStatus::kRunning);
  EXPECT_EQ(TakeSignals().size(), 1u);  // the running signal, after its write
  view = registry_->FaultSnapshot();
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0].record->status, JobStatus::kRunning);
}

// A job whose only record so far is decided (the PodGroup's own reconcile waits) is in the view.
TEST_F(JobRegistryTest, ANewJobIsInTheFaultViewBeforeItsFirstWrite) {
  JobRegistry::Options options;
  options.reconcile_rate = 1;
  options.reconcile_burst = 1;
  MakeRegistry(options);
  PodGroupSpec first;
  first.name = "first";
  first.uid = "pg-first";
  first.owner_uid = "job-first";
  first.owner_name = "first";
  AddPodGroup(first);
  AddPodGroup();
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->Jobs().size(), 1u);
  EXPECT_EQ(registry_->FaultSnapshot().size(), 2u);
}

// A change of a job's pods that leaves its record as it was still reaches the fault view's
// readers: the pods are part of the view (which NPUs the job holds). Only a changed record used
// to call the view listeners, so the fault centre saw such a change only when another job moved.
TEST_F(JobRegistryTest, APodChangeThatLeavesTheRecordAsItWasMovesTheFaultView) {
  int views = 0;
  registry_->AddViewListener([&views] { ++views; });
  RunExampleJob();
  const JobRegistry::FaultViewChanges before = registry_->FaultViewChangesSince(0);
  ASSERT_TRUE(before.everything);
  ASSERT_EQ(before.jobs.size(), 1u);
  const int views_before = views;
  PodSpec a = ExamplePod(0);
  a.master_addr_env = "192.168.0.11";
  a.labels = {{"team", "search"}};
  PutPod(a);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(views, views_before + 1);
  const JobRegistry::FaultViewChanges after = registry_->FaultViewChangesSince(before.cursor);
  EXPECT_FALSE(after.everything);
  ASSERT_EQ(after.jobs.size(), 1u);
  EXPECT_EQ(after.jobs[0].record, before.jobs[0].record) << "the record is unchanged";
  ASSERT_EQ(after.jobs[0].pods.size(), 2u);
  EXPECT_NE(after.jobs[0].pods, before.jobs[0].pods);
  EXPECT_TRUE(after.gone.empty());
  // Nothing changed since: the next read is empty, and no listener is called for nothing.
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(views, views_before + 1);
  const JobRegistry::FaultViewChanges idle = registry_->FaultViewChangesSince(after.cursor);
  EXPECT_FALSE(idle.everything);
  EXPECT_TRUE(idle.jobs.empty());
  EXPECT_EQ(idle.cursor, after.cursor);
}

// A reader of the fault view reads what changed since its cursor, not every job: the job whose
// PodGroup went, then that job again when its record expires and it leaves the view.
TEST_F(JobRegistryTest, TheFaultViewChangesHoldOnlyTheJobsChangedSinceTheCursor) {
  AddNumberedPodGroups(5);
  registry_->controller().RunUntilIdleForTest();
  const JobRegistry::FaultViewChanges all = registry_->FaultViewChangesSince(0);
  EXPECT_TRUE(all.everything);
  EXPECT_EQ(all.jobs.size(), 5u);

  DeletePodGroup(NumberedPodGroup(2));
  registry_->controller().RunUntilIdleForTest();
  const JobRegistry::FaultViewChanges deleted = registry_->FaultViewChangesSince(all.cursor);
  EXPECT_FALSE(deleted.everything);
  ASSERT_EQ(deleted.jobs.size(), 1u);
  EXPECT_EQ(deleted.jobs[0].record->job_id, "job-2");
  EXPECT_TRUE(deleted.jobs[0].record->pre_deleted);
  EXPECT_EQ(deleted.jobs[0].pod_group, nullptr);
  EXPECT_TRUE(deleted.gone.empty());

  clock_.Advance(absl::Seconds(61));  // past the pre-delete grace: the record expires
  registry_->controller().RunUntilIdleForTest();
  const JobRegistry::FaultViewChanges expired = registry_->FaultViewChangesSince(deleted.cursor);
  EXPECT_FALSE(expired.everything);
  EXPECT_TRUE(expired.jobs.empty());
  EXPECT_EQ(expired.gone, std::vector<std::string>{"job-2"});
  EXPECT_EQ(registry_->FaultSnapshot().size(), 4u);
  // A reader from before every change reads them all, in the order of their last change.
  const JobRegistry::FaultViewChanges late = registry_->FaultViewChangesSince(all.cursor);
  EXPECT_FALSE(late.everything);
  EXPECT_EQ(late.gone, std::vector<std::string>{"job-2"});
}

// Jobs that left the view are not remembered for ever (a churn of short jobs would grow the log
// without bound): once they outnumber the view, a reader from before they went reads the whole
// view, and a reader that kept up still reads only what changed.
TEST_F(JobRegistryTest, AReaderBehindForgottenDeparturesReadsTheWholeFaultView) {
  constexpr int kJobs = 1100;  // more than the log's margin of 1,024 departed jobs
  AddNumberedPodGroups(kJobs);
  registry_->controller().RunUntilIdleForTest();
  const uint64_t start = registry_->FaultViewChangesSince(0).cursor;
  for (int i = 0; i < kJobs; ++i) DeletePodGroup(NumberedPodGroup(i));
  registry_->controller().RunUntilIdleForTest();
  const uint64_t pre_deleted = registry_->FaultViewChangesSince(start).cursor;
  clock_.Advance(absl::Seconds(61));
  registry_->controller().RunUntilIdleForTest();
  ASSERT_TRUE(registry_->FaultSnapshot().empty());

  AddNumberedPodGroups(1);  // job-0 again, as a new job
  registry_->controller().RunUntilIdleForTest();
  const JobRegistry::FaultViewChanges behind = registry_->FaultViewChangesSince(pre_deleted);
  EXPECT_TRUE(behind.everything);
  ASSERT_EQ(behind.jobs.size(), 1u);
  EXPECT_EQ(behind.jobs[0].record->job_id, "job-0");
  EXPECT_TRUE(behind.gone.empty());
  const JobRegistry::FaultViewChanges kept_up = registry_->FaultViewChangesSince(behind.cursor);
  EXPECT_FALSE(kept_up.everything);
  EXPECT_TRUE(kept_up.jobs.empty());
}

// A cursor the registry never handed out (ahead of its log: another registry's, or one kept
// across a restart of clusterd) reads the whole view, not nothing.
TEST_F(JobRegistryTest, ACursorAheadOfTheLogReadsTheWholeFaultView) {
  AddNumberedPodGroups(3);
  registry_->controller().RunUntilIdleForTest();
  const uint64_t now = registry_->FaultViewChangesSince(0).cursor;
  const JobRegistry::FaultViewChanges ahead = registry_->FaultViewChangesSince(now + 1000);
  EXPECT_TRUE(ahead.everything);
  EXPECT_EQ(ahead.jobs.size(), 3u);
  EXPECT_EQ(ahead.cursor, now);
  const JobRegistry::FaultViewChanges current = registry_->FaultViewChangesSince(now);
  EXPECT_FALSE(current.everything);
  EXPECT_TRUE(current.jobs.empty());
}

TEST_F(JobRegistryTest, SoftSharePodGroupsAndPodsAreIgnored) {
  PodGroupSpec pg;
  pg.annotations = {{"huawei.com/schedule_policy", "chip1-softShareDev"}};
  AddPodGroup(pg);
  PodSpec a = ExamplePod(0);
  a.extra_annotations = {{"huawei.com/schedule_policy", "chip1-softShareDev"}};
  PutPod(a, WatchEventType::kAdded);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(registry_->Jobs().empty());
  EXPECT_TRUE(registry_->PodsOfJob(kJobUid).empty());
}

TEST_F(JobRegistryTest, HotSwitchBackupTakesOverOnceTheSourcePodIsGone) {
  RunExampleJob();
  TakeSignals();
  PodSpec backup = ExamplePod(1);
  backup.name = "pt-2x8-worker-0-backup";
  backup.uid = "backup-uid";
  backup.node = "node-c";
  backup.host_ip = "192.168.0.13";
  backup.extra_annotations = {{"podType", "backup"}, {"backupSourcePodName", "pt-2x8-worker-0"}};
  PutPod(backup, WatchEventType::kAdded);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(TakeSignals().empty());  // source still there: nothing changes
  DeletePod(ExamplePod(1));
  registry_->controller().RunUntilIdleForTest();
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].job_status, "running");
  EXPECT_THAT(signals[0].hccl_json, HasSubstr(R"("server_id":"192.168.0.13")"));
}

// At start-up the cached pods are decoded through the runner ClusterBrain passes (ParallelFor),
// and the replay that follows uses what it decoded.
TEST_F(JobRegistryTest, AtStartThePodsAreDecodedThroughTheGivenParallelRunner) {
  ASSERT_NO_FATAL_FAILURE(SeedRunningJob());
  JobRegistry::Options options = Fast();
  std::vector<size_t> runs;
  options.parallel_for = [&runs](size_t n, const std::function<void(size_t)>& fn) {
    runs.push_back(n);
    for (size_t i = n; i > 0; --i) fn(i - 1);  // another order than the items'
  };
  MakeRegistry(options);
  ASSERT_TRUE(registry_->Start().ok());
  registry_->controller().RunUntilIdleForTest();
  // The two pods, then the one job (StartDecidesEveryJobOfTheStoreForTheFaultView).
  EXPECT_EQ(runs, (std::vector<size_t>{2, 1}));
  auto job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->status, JobStatus::kRunning);
  EXPECT_EQ((*ConfigMap("job-summary-pt-2x8"))["data"]["hccl.json"], testing::kRankTableExample22);
  registry_->Stop();
}

TEST_F(JobRegistryTest, RestartRebuildsEveryRecordFromTheStore) {
  // Objects in the store, as a previous clusterd and the scheduler left them.
  ASSERT_NO_FATAL_FAILURE(SeedRunningJob());
  ASSERT_TRUE(registry_->Start().ok());
  registry_->controller().RunUntilIdleForTest();
  auto job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->status, JobStatus::kRunning);
  EXPECT_EQ((*ConfigMap("job-summary-pt-2x8"))["data"]["hccl.json"], testing::kRankTableExample22);
  registry_->Stop();

  // A second registry on the same store: same records, same ConfigMap, a fresh signal.
  MakeRegistry();
  TakeSignals();
  ASSERT_TRUE(registry_->Start().ok());
  registry_->controller().RunUntilIdleForTest();
  job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->status, JobStatus::kRunning);
  EXPECT_EQ(job->create_time, absl::FromUnixSeconds(1735689600));
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].hccl_json, testing::kRankTableExample22);
  registry_->Stop();
}

// A job found running at start-up is decided as an update (its add and its pods coalesce), yet
// it has no summary yet; a restart finds the summaries of its jobs. Either way each summary is
// written with one write, not an update the store refuses followed by a create (on the kube
// store at 1,000 jobs: 1,000 requests more at start-up, 20 s at the client's 50 QPS).
TEST_F(JobRegistryTest, EachSummaryWriteIsOneStoreWriteWhetherOrNotItExists) {
  ASSERT_NO_FATAL_FAILURE(SeedRunningJob());
  ASSERT_TRUE(registry_->Start().ok());
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(ConfigMap("job-summary-pt-2x8").ok());
  EXPECT_EQ(flaky_.refused_writes.load(), 0);
  registry_->Stop();

  MakeRegistry();
  ASSERT_TRUE(registry_->Start().ok());
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(flaky_.refused_writes.load(), 0);
  registry_->Stop();
}

// The process's log lines at info and above while it lives (spdlog's default logger, which
// clusterd's Log writes to).
class CapturedLog {
 public:
  CapturedLog()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(4096)),
        previous_(spdlog::default_logger()),
        previous_level_(spdlog::get_level()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
    spdlog::set_level(spdlog::level::info);
  }
  ~CapturedLog() {
    spdlog::set_default_logger(previous_);
    spdlog::set_level(previous_level_);
  }
  size_t Count(std::string_view text) const {
    size_t n = 0;
    for (const std::string& line : sink_->last_formatted()) n += line.find(text) != line.npos;
    return n;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
  spdlog::level::level_enum previous_level_;
};

TEST_F(JobRegistryTest, ARestartOnUnchangedJobsAsksTheStoreForNoWrite) {
  // A restart decides every job again. Its summaries already say what the decision would
  // write: at 5,000 jobs every restart rewrote 5,000 of them, one API request each on the kube
  // store. The jobs' signals still follow.
  ASSERT_NO_FATAL_FAILURE(SeedRunningJob());
  {
    CapturedLog log;  // the first decision writes the summary: news
    ASSERT_TRUE(registry_->Start().ok());
    registry_->controller().RunUntilIdleForTest();
    EXPECT_GE(log.Count("job reconciled"), 1u);
  }
  const absl::StatusOr<store::Object> before = ConfigMap("job-summary-pt-2x8");
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_GT(flaky_.writes.load(), 0);
  registry_->Stop();

  MakeRegistry();
  TakeSignals();
  flaky_.writes = 0;
  {
    // Nor does it log a line per job that says nothing changed (5,000 at 5,000 jobs).
    CapturedLog log;
    ASSERT_TRUE(registry_->Start().ok());
    registry_->controller().RunUntilIdleForTest();
    EXPECT_EQ(log.Count("job reconciled"), 0u);
  }
  EXPECT_EQ(flaky_.writes.load(), 0);
  EXPECT_EQ(*ConfigMap("job-summary-pt-2x8"), *before);
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].op, "add");
  ASSERT_TRUE(registry_->FindJob(kJobUid).has_value());
  EXPECT_EQ(registry_->FindJob(kJobUid)->status, JobStatus::kRunning);
  registry_->Stop();
}

TEST_F(JobRegistryTest, RestartExpiresTheSummaryOfAJobThatVanishedMeanwhile) {
  RunExampleJob();
  ASSERT_TRUE(ConfigMap("job-summary-pt-2x8").ok());
  // clusterd is down while the job is deleted: only its ConfigMap is left.
  MakeRegistry();
  TakeSignals();
  ASSERT_TRUE(registry_->Start().ok());
  registry_->controller().RunUntilIdleForTest();
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].op, "delete");
  EXPECT_EQ(signals[0].job_status, "failed");
  clock_.Advance(absl::Seconds(60));
  registry_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(absl::IsNotFound(ConfigMap("job-summary-pt-2x8").status()));
  EXPECT_TRUE(registry_->Jobs().empty());
  registry_->Stop();
}

TEST_F(JobRegistryTest, QueriesByNameAndMindIeInstance) {
  PodGroupSpec pg;
  pg.labels = {{"jobID", "mindie-job-001"}, {"app", "mindie-ms-coordinator"}};
  AddPodGroup(pg);
  PodSpec coordinator = ExamplePod(0);
  coordinator.needs_npu = false;
  coordinator.with_allocation = false;
  coordinator.rank_index = "";
  PutPod(coordinator, WatchEventType::kAdded);
  registry_->controller().RunUntilIdleForTest();
  EXPECT_EQ(registry_->FindJobByName("default", "pt-2x8")->job_id, kJobUid);
  EXPECT_FALSE(registry_->FindJobByName("default", "pt-2x8", /*running_only=*/true).has_value());
  EXPECT_EQ(registry_->PodsOfInstance("default", "mindie-job-001", "mindie-ms-coordinator").size(),
            1u);
  EXPECT_EQ(registry_->PodsOfInstance("", "mindie-job-001", "mindie-ms-coordinator").size(), 1u);
  EXPECT_TRUE(
      registry_->PodsOfInstance("other", "mindie-job-001", "mindie-ms-coordinator").empty());
  EXPECT_EQ(registry_->NamespaceOfInstance("mindie-job-001", "mindie-ms-coordinator"), "default");
  EXPECT_EQ(registry_->FindJob(kJobUid)->multi_instance_job_id, "mindie-job-001");
}

TEST_F(JobRegistryTest, SnapshotHoldsEveryRecord) {
  RunExampleJob();
  PodGroupSpec second;
  second.name = "second";
  second.uid = "pg-2";
  second.owner_uid = "job-2";
  second.owner_name = "second";
  AddPodGroup(second);
  registry_->controller().RunUntilIdleForTest();
  auto batches = registry_->SnapshotSignals();
  ASSERT_EQ(batches.size(), 1u);
  ASSERT_EQ(batches[0].size(), 2u);
  EXPECT_EQ(batches[0][0].job_name, "pt-2x8");
  EXPECT_EQ(batches[0][0].hccl_json, testing::kRankTableExample22);
  EXPECT_EQ(batches[0][1].hccl_json,
            R"({"status":"","server_list":null,"server_count":"","total":0})");
  EXPECT_NE(batches[0][0].uuid, batches[0][1].uuid);
}

// A job over 40 000 ranks: its summary is sliced into several ConfigMaps, and its signal carries
// an empty HcclJson (§3.3).
TEST_F(JobRegistryTest, JobOverFortyThousandRanksIsSlicedAndSignalledWithoutTable) {
  constexpr int kPods = 2501;  // x 16 NPUs = 40 016 ranks
  PodGroupSpec pg;
  pg.min_member = kPods;
  pg.labels = {{"framework", "mindspore"}};
  AddPodGroup(pg);
  for (int i = 0; i < kPods; ++i) {
    PodSpec p = ExamplePod(0);
    p.name = absl::StrCat("big-", i);
    p.uid = absl::StrCat("uid-", i);
    p.node = absl::StrCat("node-", i);
    p.host_ip = absl::StrCat("10.", i / 250, ".", i % 250, ".1");
    p.rank_index = std::to_string(i);
    p.devices = 16;
    p.device_ip_prefix = absl::StrCat("29.", i / 250, ".", i % 250, ".");
    PutPod(p, WatchEventType::kAdded);
  }
  registry_->controller().RunUntilIdleForTest();
  auto job = registry_->FindJob(kJobUid);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->status, JobStatus::kRunning);
  EXPECT_EQ(job->rank_table.DeviceCount(), 40016u);
  ASSERT_GT(job->total_cm_num, 1);
  for (int64_t i = 0; i < job->total_cm_num; ++i) {
    auto cm = ConfigMap(JobSummaryConfigMapName("pt-2x8", i));
    ASSERT_TRUE(cm.ok()) << i;
    EXPECT_LE((*cm)["data"]["hccl.json"].get<std::string>().size(), kMaxSummarySliceBytes);
    EXPECT_EQ((*cm)["data"]["total"], std::to_string(job->total_cm_num));
  }
  std::vector<JobSummarySignal> signals = TakeSignals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].hccl_json, "");
  EXPECT_EQ(signals[0].total, std::to_string(job->total_cm_num));
}

}  // namespace job_registry_test
}  // namespace clusterd::cluster
