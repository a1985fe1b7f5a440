// JobRegistry::FaultSnapshot and FaultViewChangesSince, the queries the fault centre reads jobs
// through, and the change log behind the second (kept apart from job_registry.cc so that the
// registry's own file is not edited by the fault-centre work).
#include <algorithm>

#include "cluster/job_registry.h"

namespace clusterd::cluster {

std::shared_ptr<const JobRecord> JobRegistry::ViewRecordLocked(const std::string& job_id) const {
  // A decided record not yet written stands in for the committed one (see the header); a
  // decision that drops the record takes the job out of the view.
  if (auto ahead = provisional_.find(job_id); ahead != provisional_.end()) {
    return ahead->second.record;
  }
  auto it = records_.find(job_id);
  return it != records_.end() ? it->second : nullptr;
}

std::optional<JobRegistry::FaultSnapshotEntry> JobRegistry::FaultEntryLocked(
    const std::string& job_id) const {
  std::shared_ptr<const JobRecord> record = ViewRecordLocked(job_id);
  if (record == nullptr) return std::nullopt;
  FaultSnapshotEntry entry;
  entry.record = std::move(record);
  if (auto key = pod_group_of_job_.find(job_id); key != pod_group_of_job_.end()) {
    if (auto pg = pod_groups_.find(key->second); pg != pod_groups_.end()) {
      entry.pod_group = pg->second;
    }
  }
  if (auto pods = pods_of_job_.find(job_id); pods != pods_of_job_.end()) {
    entry.pods.reserve(pods->second.size());
    for (const auto& [name, pod] : pods->second) entry.pods.push_back(pod);
  }
  return entry;
}

std::vector<JobRegistry::FaultSnapshotEntry> JobRegistry::FaultSnapshot() const {
  absl::MutexLock lock(&mu_);
  return FaultSnapshotLocked();
}

std::vector<JobRegistry::FaultSnapshotEntry> JobRegistry::FaultSnapshotLocked() const {
  std::vector<FaultSnapshotEntry> out;
  out.reserve(records_.size() + provisional_.size());
  for (const auto& [id, record] : records_) {
    if (std::optional<FaultSnapshotEntry> entry = FaultEntryLocked(id)) {
      out.push_back(*std::move(entry));
    }
  }
  for (const auto& [id, ahead] : provisional_) {
    if (records_.contains(id)) continue;
    if (std::optional<FaultSnapshotEntry> entry = FaultEntryLocked(id)) {
      out.push_back(*std::move(entry));
    }
  }
  return out;
}

void JobRegistry::MarkViewLocked(const std::string& job_id) {
  const uint64_t seq = ++view_seq_;
  auto [it, added] = view_seq_of_.try_emplace(job_id, seq);
  if (!added) {
    view_log_.erase(it->second);
    it->second = seq;
  }
  view_log_.emplace(seq, job_id);
  // Jobs that left the view stay in the log until a reader saw them go. A reader that has not
  // read for so long that they outnumber the jobs in view (a churn of short jobs) reads the
  // whole view instead: the log is at most twice the view, plus a margin.
  const size_t in_view = records_.size() + provisional_.size();
  constexpr size_t kForgetMargin = 1024;
  if (view_log_.size() <= 2 * in_view + kForgetMargin) return;
  for (auto entry = view_log_.begin(); entry != view_log_.end();) {
    if (ViewRecordLocked(entry->second) != nullptr) {
      ++entry;
      continue;
    }
    view_floor_ = std::max(view_floor_, entry->first);
    view_seq_of_.erase(entry->second);
    entry = view_log_.erase(entry);
  }
}

JobRegistry::FaultViewChanges JobRegistry::FaultViewChangesSince(uint64_t cursor) const {
  FaultViewChanges out;
  absl::MutexLock lock(&mu_);
  out.cursor = view_seq_;
  if (cursor == 0 || cursor < view_floor_ || cursor > view_seq_) {
    out.everything = true;
    out.jobs = FaultSnapshotLocked();
    return out;
  }
  for (auto it = view_log_.upper_bound(cursor); it != view_log_.end(); ++it) {
    if (std::optional<FaultSnapshotEntry> entry = FaultEntryLocked(it->second)) {
      out.jobs.push_back(*std::move(entry));
    } else {
      out.gone.push_back(it->second);
    }
  }
  return out;
}

}  // namespace clusterd::cluster
