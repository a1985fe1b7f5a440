#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "cluster/job_record.h"
#include "cluster/job_summary.h"
#include "cluster/rank_table_builder.h"
#include "model/job_summary_signal.h"
#include "model/pod_group_info.h"
#include "model/pod_info.h"

namespace clusterd::cluster {

// The job-record lifecycle of jobs-ranktable-diagnosis.md §1.7 as pure functions: (record,
// operation, observed objects, now) -> (record', ConfigMap writes, signal). The registry
// executes the step; nothing here touches the store, a thread or the clock.

// Operations queued per job, "latest operation wins".
enum class JobOperation { kAdd, kUpdate, kPreDelete };
std::string_view ToString(JobOperation op);

// What the registry's caches hold for one job at reconcile time.
struct JobObservation {
  std::optional<model::PodGroupInfo> pod_group;
  std::vector<const model::PodInfo*> pods;  // every cached pod of the job, backup pods included
  NodeSerials serials;
  // Ids of pre-deleted records with the namespace/name this PodGroup's job would have.
  std::vector<std::string> stale_same_name;
};

struct JobStep {
  std::string transition;  // "ignored", "unchanged", "init", "update", "pre-delete"
  // init, update and pre-delete replace the record with `record`; otherwise it stays as it was.
  bool changes_record = false;
  std::optional<JobRecord> record;
  std::vector<ConfigMapWrite> writes;             // in the record's namespace
  std::optional<model::JobSummarySignal> signal;  // uuid left for the executor
  std::vector<std::string> drop_records;          // other job ids to forget (§1.7 add)
  std::vector<RankTableProblem> problems;         // from the rank-table build
};

// One operation for job `job_id`. `current` is its record (nullptr: none).
JobStep DecideJob(std::string_view job_id, const JobRecord* current, JobOperation op,
                  const JobObservation& observed, absl::Time now);

// A new record for the job of `pod_group` (status pending, rank table never built).
JobRecord NewJobRecord(const model::PodGroupInfo& pod_group,
                       const std::vector<const model::PodInfo*>& pods, absl::Time now);

// §3.3/§1.5 helpers.
std::string JobSid(const model::PodGroupInfo& pod_group,
                   const std::vector<const model::PodInfo*>& pods, std::string_view job_id);
std::string JobFramework(const model::PodGroupInfo* pod_group,
                         const std::vector<const model::PodInfo*>& pods);

// The deletion of a pre-deleted record once the grace period has passed (§1.7 "every minute").
struct JobExpiry {
  bool due = false;
  absl::Duration remaining = absl::ZeroDuration();  // when not due
  std::vector<std::string> config_maps_to_delete;   // job-summary-<name>[-i], i < total_cm_num
};
JobExpiry DecideExpiry(const JobRecord& record, absl::Time now, absl::Duration grace,
                       bool live_record_with_same_name);

}  // namespace clusterd::cluster
