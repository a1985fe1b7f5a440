#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/job_status.h"
#include "model/pod_info.h"

namespace clusterd::cluster {

// M of jobs-ranktable-diagnosis.md §1.6: max(PodGroup minMember, the largest
// huawei.com/schedule_minAvailable annotation among the pods). Also the rank-table replicas R.
int64_t JobReplicas(int64_t pod_group_min_member, const std::vector<const model::PodInfo*>& pods);

// Rule 6: the status a job falls back to when the pods decide nothing.
model::JobStatus StatusFromPrevious(std::optional<model::JobStatus> previous);

struct DerivedJobStatus {
  bool pre_deleted = false;  // rule 1: no PodGroup and no pods
  model::JobStatus status = model::JobStatus::kPending;
  bool operator==(const DerivedJobStatus&) const = default;
};

// §1.6, computed from the cached PodGroup (present or not, its minMember) and all cached pods
// of the job, hot-switch backup pods included. `previous` is the record's status, if any.
DerivedJobStatus DeriveJobStatus(bool pod_group_present, int64_t pod_group_min_member,
                                 const std::vector<const model::PodInfo*>& pods,
                                 std::optional<model::JobStatus> previous);

}  // namespace clusterd::cluster
