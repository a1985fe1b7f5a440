// Job status derivation, jobs-ranktable-diagnosis.md §1.6.
#include "cluster/job_status_derivation.h"

#include <deque>

#include "gtest/gtest.h"
#include "job_test_objects.h"

namespace clusterd::cluster {
namespace job_status_derivation_test {

using model::JobStatus;
using model::PodInfo;

// Pods live as long as the test binary: the derivation takes pointers.
const PodInfo* Pod(const std::string& phase, bool allocated = true,
                   const std::string& min_available = "") {
  testing::PodSpec spec = testing::ExamplePod(0);
  spec.phase = phase;
  spec.with_allocation = allocated;
  if (!min_available.empty()) {
    spec.extra_annotations = {{"huawei.com/schedule_minAvailable", min_available}};
  }
  static std::deque<PodInfo>* pods = new std::deque<PodInfo>();
  pods->push_back(*model::PodInfoFromObject(testing::PodObject(spec)));
  return &pods->back();
}

TEST(JobStatusDerivation, NoPodGroupAndNoPodsIsPreDeletedWithStatusFromThePrevious) {
  EXPECT_EQ(DeriveJobStatus(false, 2, {}, JobStatus::kRunning),
            (DerivedJobStatus{true, JobStatus::kFailed}));
  EXPECT_EQ(DeriveJobStatus(false, 2, {}, JobStatus::kComplete),
            (DerivedJobStatus{true, JobStatus::kComplete}));
}

TEST(JobStatusDerivation, NoPodsWithPodGroupKeepsThePreviousStatusRule) {
  EXPECT_EQ(DeriveJobStatus(true, 2, {}, std::nullopt),
            (DerivedJobStatus{false, JobStatus::kPending}));
  EXPECT_EQ(DeriveJobStatus(true, 2, {}, JobStatus::kRunning),
            (DerivedJobStatus{false, JobStatus::kFailed}));
  EXPECT_EQ(DeriveJobStatus(true, 2, {}, JobStatus::kPending),
            (DerivedJobStatus{false, JobStatus::kPending}));
}

TEST(JobStatusDerivation, AnyFailedPodFailsTheJob) {
  EXPECT_EQ(DeriveJobStatus(true, 2, {Pod("Running"), Pod("Failed")}, JobStatus::kRunning).status,
            JobStatus::kFailed);
}

TEST(JobStatusDerivation, AllSucceededAndEnoughPodsIsComplete) {
  EXPECT_EQ(
      DeriveJobStatus(true, 2, {Pod("Succeeded"), Pod("Succeeded")}, JobStatus::kRunning).status,
      JobStatus::kComplete);
  // Fewer than minMember: falls back (running -> failed).
  EXPECT_EQ(
      DeriveJobStatus(true, 3, {Pod("Succeeded"), Pod("Succeeded")}, JobStatus::kRunning).status,
      JobStatus::kFailed);
}

TEST(JobStatusDerivation, RunningNeedsAllocationAndEnoughPods) {
  EXPECT_EQ(DeriveJobStatus(true, 2, {Pod("Running"), Pod("Running")}, JobStatus::kPending).status,
            JobStatus::kRunning);
  EXPECT_EQ(
      DeriveJobStatus(true, 2, {Pod("Running"), Pod("Running", false)}, JobStatus::kPending).status,
      JobStatus::kPending);
  EXPECT_EQ(DeriveJobStatus(true, 3, {Pod("Running"), Pod("Running")}, JobStatus::kPending).status,
            JobStatus::kPending);
}

TEST(JobStatusDerivation, MinAvailableAnnotationRaisesTheRequiredPodCount) {
  EXPECT_EQ(
      DeriveJobStatus(true, 1, {Pod("Running", true, "3"), Pod("Running")}, std::nullopt).status,
      JobStatus::kPending);
  EXPECT_EQ(JobReplicas(1, {Pod("Running", true, "3")}), 3);
}

TEST(JobStatusDerivation, ZeroReplicasNeverRuns) {
  EXPECT_EQ(DeriveJobStatus(true, 0, {Pod("Running")}, std::nullopt).status, JobStatus::kPending);
}

TEST(JobStatusDerivation, ReschedulingGoesRunningFailedRunningNeverPending) {
  EXPECT_EQ(DeriveJobStatus(true, 2, {Pod("Running"), Pod("Pending")}, JobStatus::kRunning).status,
            JobStatus::kFailed);
  EXPECT_EQ(DeriveJobStatus(true, 2, {Pod("Running"), Pod("Pending")}, JobStatus::kFailed).status,
            JobStatus::kFailed);
  EXPECT_EQ(DeriveJobStatus(true, 2, {Pod("Running"), Pod("Running")}, JobStatus::kFailed).status,
            JobStatus::kRunning);
}

}  // namespace job_status_derivation_test
}  // namespace clusterd::cluster
