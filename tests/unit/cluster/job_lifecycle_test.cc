// The job-record lifecycle of jobs-ranktable-diagnosis.md §1.7 as a table of
// (record, operation, observation) -> (transition, record', signal).
#include "cluster/job_lifecycle.h"

#include <deque>

#include "gtest/gtest.h"
#include "job_test_objects.h"

namespace clusterd::cluster {
namespace job_lifecycle_test {

using model::JobStatus;
using model::PodInfo;
using testing::ExamplePod;
using testing::PodGroupObject;
using testing::PodObject;

const absl::Time kNow = absl::FromUnixSeconds(1735689600);

const PodInfo* Pod(testing::PodSpec spec) {
  static auto* pods = new std::deque<PodInfo>();
  pods->push_back(*model::PodInfoFromObject(PodObject(spec)));
  return &pods->back();
}

JobObservation Observation(bool pg, std::vector<const PodInfo*> pods) {
  JobObservation o;
  if (pg) o.pod_group = *model::PodGroupInfoFromObject(PodGroupObject({}));
  o.pods = std::move(pods);
  return o;
}

JobRecord Record(JobStatus status, bool pre_deleted = false) {
  JobRecord r = NewJobRecord(*model::PodGroupInfoFromObject(PodGroupObject({})), {}, kNow);
  r.status = status;
  r.pre_deleted = pre_deleted;
  return r;
}

JobStep DecideWith(const JobRecord& current, JobOperation op, const JobObservation& o,
                   absl::Time now) {
  return DecideJob(testing::kJobUid, &current, op, o, now);
}

TEST(JobLifecycle, AddWithoutRecordInitialises) {
  JobStep s = DecideJob(testing::kJobUid, nullptr, JobOperation::kAdd, Observation(true, {}), kNow);
  EXPECT_EQ(s.transition, "init");
  ASSERT_TRUE(s.signal.has_value());
  EXPECT_EQ(s.signal->hccl_json, R"({"status":"initializing"})");
  ASSERT_EQ(s.writes.size(), 1u);
  EXPECT_EQ(s.writes[0].mode, WriteMode::kCreateFirst);
}

TEST(JobLifecycle, AddOfAPendingRecordDoesNothing) {
  JobStep s =
      DecideWith(Record(JobStatus::kPending), JobOperation::kAdd, Observation(true, {}), kNow);
  EXPECT_EQ(s.transition, "unchanged");
  EXPECT_FALSE(s.signal.has_value());
}

TEST(JobLifecycle, AddWithPodsIsAnUpdate) {
  JobStep s = DecideJob(testing::kJobUid, nullptr, JobOperation::kAdd,
                        Observation(true, {Pod(ExamplePod(0)), Pod(ExamplePod(1))}), kNow);
  EXPECT_EQ(s.transition, "update");
  EXPECT_EQ(s.record->status, JobStatus::kRunning);
}

TEST(JobLifecycle, AddDropsPreDeletedRecordsOfTheSameName) {
  JobObservation o = Observation(true, {});
  o.stale_same_name = {"old-job"};
  JobStep s = DecideJob(testing::kJobUid, nullptr, JobOperation::kAdd, o, kNow);
  EXPECT_EQ(s.drop_records, std::vector<std::string>{"old-job"});
}

TEST(JobLifecycle, UpdateWithoutRecordOrPodGroupIsIgnored) {
  JobStep s = DecideJob(testing::kJobUid, nullptr, JobOperation::kUpdate,
                        Observation(false, {Pod(ExamplePod(0))}), kNow);
  EXPECT_EQ(s.transition, "ignored");
  EXPECT_FALSE(s.record.has_value());
}

TEST(JobLifecycle, FailedJobBackToPendingIsReinitialised) {
  testing::PodSpec pending = ExamplePod(0);
  pending.phase = "Pending";
  // A failed record whose pods are pending again: the status rule keeps it failed...
  JobStep s = DecideWith(Record(JobStatus::kFailed), JobOperation::kUpdate,
                         Observation(true, {Pod(pending)}), kNow);
  EXPECT_EQ(s.transition, "unchanged");
  // ...while a running record that lost its pods fails.
  s = DecideWith(Record(JobStatus::kRunning), JobOperation::kUpdate, Observation(true, {}), kNow);
  EXPECT_EQ(s.transition, "update");
  EXPECT_EQ(s.record->status, JobStatus::kFailed);
  EXPECT_EQ(s.signal->delete_time, "1735689600");
}

TEST(JobLifecycle, PreDeleteWithPodsLeftIsAnUpdate) {
  JobStep s = DecideWith(Record(JobStatus::kRunning), JobOperation::kPreDelete,
                         Observation(false, {Pod(ExamplePod(0))}), kNow);
  EXPECT_NE(s.transition, "pre-delete");
  EXPECT_FALSE(s.record->pre_deleted);
}

TEST(JobLifecycle, PreDeleteMarksFailedUnlessComplete) {
  JobStep s = DecideWith(Record(JobStatus::kRunning), JobOperation::kPreDelete,
                         Observation(false, {}), kNow);
  EXPECT_EQ(s.transition, "pre-delete");
  EXPECT_TRUE(s.record->pre_deleted);
  EXPECT_EQ(s.record->status, JobStatus::kFailed);
  EXPECT_EQ(s.record->delete_time, kNow);
  EXPECT_EQ(s.signal->op, "delete");
  s = DecideWith(Record(JobStatus::kComplete), JobOperation::kPreDelete, Observation(false, {}),
                 kNow);
  EXPECT_EQ(s.record->status, JobStatus::kComplete);
  s = DecideWith(Record(JobStatus::kFailed, true), JobOperation::kPreDelete, Observation(false, {}),
                 kNow);
  EXPECT_EQ(s.transition, "unchanged");
}

// §3.5: pre-delete recomputes the ConfigMap slices from the last rank table, and a table with no
// server gives none, so the ConfigMap says {"status":"initializing"}; the signal carries that
// last table itself, empty server list included.
TEST(JobLifecycle, PreDeleteOfATableWithoutServersWritesInitializingButSignalsTheTable) {
  JobStep lost_pods =
      DecideWith(Record(JobStatus::kRunning), JobOperation::kUpdate, Observation(true, {}), kNow);
  ASSERT_TRUE(lost_pods.record.has_value());
  JobStep s = DecideWith(*lost_pods.record, JobOperation::kPreDelete, Observation(false, {}), kNow);
  EXPECT_EQ(s.transition, "pre-delete");
  ASSERT_EQ(s.writes.size(), 1u);
  EXPECT_EQ(s.writes[0].config_map["data"]["hccl.json"], R"({"status":"initializing"})");
  ASSERT_TRUE(s.signal.has_value());
  EXPECT_EQ(s.signal->hccl_json,
            R"({"status":"initializing","server_list":[],"server_count":"0","total":1})");
}

TEST(JobLifecycle, ExpiryAfterTheGraceDeletesEverySlice) {
  JobRecord r = Record(JobStatus::kFailed, true);
  r.delete_time = kNow;
  r.total_cm_num = 3;
  JobExpiry early = DecideExpiry(r, kNow + absl::Seconds(59), absl::Seconds(60), false);
  EXPECT_FALSE(early.due);
  EXPECT_EQ(early.remaining, absl::Seconds(1));
  JobExpiry due = DecideExpiry(r, kNow + absl::Seconds(60), absl::Seconds(60), false);
  EXPECT_TRUE(due.due);
  EXPECT_EQ(due.config_maps_to_delete,
            (std::vector<std::string>{"job-summary-pt-2x8", "job-summary-pt-2x8-1",
                                      "job-summary-pt-2x8-2"}));
  JobExpiry shared = DecideExpiry(r, kNow + absl::Seconds(60), absl::Seconds(60), true);
  EXPECT_TRUE(shared.due);
  EXPECT_TRUE(shared.config_maps_to_delete.empty());
}

TEST(JobLifecycle, SidPrefersTheCustomKeyLabel) {
  auto pg = *model::PodGroupInfoFromObject(PodGroupObject({}));
  EXPECT_EQ(JobSid(pg, {}, "uid"), "uid");
  pg.labels["custom-job-id"] = "from-label";
  EXPECT_EQ(JobSid(pg, {}, "uid"), "from-label");
  pg.labels["customJobKey"] = "team-job";
  pg.labels["team-job"] = "from-key";
  EXPECT_EQ(JobSid(pg, {}, "uid"), "from-key");
  pg.labels["team-job"] = "  ";
  EXPECT_EQ(JobSid(pg, {}, "uid"), "from-label");
  auto bare = *model::PodGroupInfoFromObject(PodGroupObject({}));
  testing::PodSpec p = ExamplePod(0);
  p.labels = {{"custom-job-id", "from-pod"}};
  EXPECT_EQ(JobSid(bare, {Pod(p)}, "uid"), "from-pod");
}

TEST(JobLifecycle, FrameworkFallsBackToThePodAppLabel) {
  testing::PodGroupSpec spec;
  spec.labels = {};
  auto pg = *model::PodGroupInfoFromObject(PodGroupObject(spec));
  testing::PodSpec p = ExamplePod(0);
  p.labels = {{"app", "mindspore"}};
  EXPECT_EQ(JobFramework(&pg, {Pod(p)}), "mindspore");
}

TEST(JobLifecycle, SharedTorIpsAreCollectedOnceForPytorch) {
  testing::PodSpec a = ExamplePod(0), b = ExamplePod(1);
  a.extra_annotations = {{"isSharedTor", "1"}, {"sharedTorIp", "10.3.0.1"}};
  b.extra_annotations = {{"isSharedTor", "1"}, {"sharedTorIp", "10.3.0.1"}};
  JobStep s = DecideWith(Record(JobStatus::kPending), JobOperation::kUpdate,
                         Observation(true, {Pod(a), Pod(b)}), kNow);
  EXPECT_EQ(s.record->shared_tor_ip, R"(["10.3.0.1"])");
  EXPECT_EQ(s.signal->shared_tor_ip, R"(["10.3.0.1"])");
}

// A pod replaced faster than the registry reconciles (its deletion and its successor's creation
// coalesce into one update) leaves the status `running`: the rank table must still follow the
// pods, or the job's fault mapping keeps the old node's NPUs (issue: a fault charged to the wrong
// job after pod churn).
TEST(JobLifecycle, APodReplacedWithoutAStatusChangeRebuildsTheRankTable) {
  JobStep first = DecideWith(Record(JobStatus::kPending), JobOperation::kUpdate,
                             Observation(true, {Pod(ExamplePod(0)), Pod(ExamplePod(1))}), kNow);
  ASSERT_EQ(first.record->status, JobStatus::kRunning);
  ASSERT_EQ(first.record->previous_servers.size(), 2u);

  testing::PodSpec moved = ExamplePod(1);
  moved.uid = "9c2e7d4f-0000-4000-8000-0000000000ff";
  moved.node = "node-c";
  moved.host_ip = "192.168.0.13";
  JobStep s = DecideWith(*first.record, JobOperation::kUpdate,
                         Observation(true, {Pod(ExamplePod(0)), Pod(moved)}), kNow);
  EXPECT_EQ(s.transition, "update");
  ASSERT_TRUE(s.record.has_value());
  ASSERT_TRUE(s.record->rank_table.server_list.has_value());
  std::vector<std::string> nodes;
  for (const auto& server : s.record->previous_servers) nodes.push_back(server.server_name);
  EXPECT_EQ(nodes, (std::vector<std::string>{"node-a", "node-c"}));
  EXPECT_EQ(s.record->previous_servers.back().pod_uid, moved.uid);
  EXPECT_TRUE(s.signal.has_value());
}

TEST(JobLifecycle, APodUpdateThatChangesNoRankTablePodRebuildsNothing) {
  JobStep first = DecideWith(Record(JobStatus::kPending), JobOperation::kUpdate,
                             Observation(true, {Pod(ExamplePod(0)), Pod(ExamplePod(1))}), kNow);
  testing::PodSpec labelled = ExamplePod(1);
  labelled.labels = {{"fault-type", "normal"}};
  JobStep s = DecideWith(*first.record, JobOperation::kUpdate,
                         Observation(true, {Pod(ExamplePod(0)), Pod(labelled)}), kNow);
  EXPECT_EQ(s.transition, "unchanged");
}

// Two pods claiming one rank: the second is left out of the table; that must not make every
// later update look like a changed table.
TEST(JobLifecycle, APodLeftOutOfTheTableDoesNotRebuildItOnEveryUpdate) {
  testing::PodSpec extra = ExamplePod(1);
  extra.name = "pt-2x8-worker-1";
  extra.uid = "9c2e7d4f-0000-4000-8000-000000000003";
  extra.node = "node-c";
  JobObservation o = Observation(true, {Pod(ExamplePod(0)), Pod(ExamplePod(1)), Pod(extra)});
  JobStep first = DecideWith(Record(JobStatus::kPending), JobOperation::kUpdate, o, kNow);
  ASSERT_EQ(first.record->status, JobStatus::kRunning);
  JobStep s = DecideWith(*first.record, JobOperation::kUpdate, o, kNow);
  EXPECT_EQ(s.transition, "unchanged");
}

}  // namespace job_lifecycle_test
}  // namespace clusterd::cluster
