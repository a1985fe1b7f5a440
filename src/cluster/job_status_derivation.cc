#include "cluster/job_status_derivation.h"

#include <algorithm>

namespace clusterd::cluster {

using model::JobStatus;

int64_t JobReplicas(int64_t pod_group_min_member, const std::vector<const model::PodInfo*>& pods) {
  int64_t m = pod_group_min_member;
  for (const auto* p : pods) m = std::max(m, p->min_available);
  return m;
}

JobStatus StatusFromPrevious(std::optional<JobStatus> previous) {
  if (!previous.has_value()) return JobStatus::kPending;
  switch (*previous) {
    case JobStatus::kRunning:
      return JobStatus::kFailed;
    case JobStatus::kComplete:
      return JobStatus::kComplete;
    case JobStatus::kFailed:
      return JobStatus::kFailed;
    case JobStatus::kPending:
      return JobStatus::kPending;
  }
  return JobStatus::kPending;
}

DerivedJobStatus DeriveJobStatus(bool pod_group_present, int64_t pod_group_min_member,
                                 const std::vector<const model::PodInfo*>& pods,
                                 std::optional<JobStatus> previous) {
  if (pods.empty()) {
    return {!pod_group_present, StatusFromPrevious(previous)};
  }
  bool all_succeeded = true;
  bool all_running = true;
  for (const auto* p : pods) {
    if (p->phase == model::kPodPhaseFailed) return {false, JobStatus::kFailed};
    if (p->phase != model::kPodPhaseSucceeded) all_succeeded = false;
    if ((p->phase != model::kPodPhaseRunning && p->phase != model::kPodPhaseSucceeded) ||
        !model::DeviceAllocationComplete(*p)) {
      all_running = false;
    }
  }
  const int64_t m = JobReplicas(pod_group_present ? pod_group_min_member : 0, pods);
  const int64_t count = static_cast<int64_t>(pods.size());
  if (all_succeeded && count >= m) return {false, JobStatus::kComplete};
  if (all_running && count >= m && m > 0) return {false, JobStatus::kRunning};
  return {false, StatusFromPrevious(previous)};
}

}  // namespace clusterd::cluster
