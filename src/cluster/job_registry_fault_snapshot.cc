// JobRegistry::FaultSnapshot, the query the fault centre reads jobs through (kept apart from
// job_registry.cc so that the registry's own file is not edited by the fault-centre work).
#include "cluster/job_registry.h"

namespace clusterd::cluster {

std::vector<JobRegistry::FaultSnapshotEntry> JobRegistry::FaultSnapshot() const {
  std::vector<FaultSnapshotEntry> out;
  absl::MutexLock lock(&mu_);
  out.reserve(records_.size());
  for (const auto& [id, record] : records_) {
    FaultSnapshotEntry entry;
    entry.record = record;
    if (auto key = pod_group_of_job_.find(id); key != pod_group_of_job_.end()) {
      if (auto pg = pod_groups_.find(key->second); pg != pod_groups_.end()) {
        entry.pod_group = pg->second;
      }
    }
    if (auto pods = pods_of_job_.find(id); pods != pods_of_job_.end()) {
      entry.pods.reserve(pods->second.size());
      for (const auto& [name, pod] : pods->second) entry.pods.push_back(pod);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace clusterd::cluster
