// JobRegistry::FaultSnapshot, the query the fault centre reads jobs through (kept apart from
// job_registry.cc so that the registry's own file is not edited by the fault-centre work).
#include "cluster/job_registry.h"

namespace clusterd::cluster {

std::vector<JobRegistry::FaultSnapshotEntry> JobRegistry::FaultSnapshot() const {
  std::vector<FaultSnapshotEntry> out;
  absl::MutexLock lock(&mu_);
  out.reserve(records_.size() + provisional_.size());
  auto add = [&](const std::string& id, const std::shared_ptr<const JobRecord>& record) {
    mu_.AssertHeld();
    if (record == nullptr) return;
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
  };
  // A decided record not yet written stands in for the committed one (see the header).
  for (const auto& [id, record] : records_) {
    auto ahead = provisional_.find(id);
    add(id, ahead != provisional_.end() ? ahead->second.record : record);
  }
  for (const auto& [id, ahead] : provisional_) {
    if (!records_.contains(id)) add(id, ahead.record);
  }
  return out;
}

}  // namespace clusterd::cluster
