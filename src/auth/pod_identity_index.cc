#include "auth/pod_identity_index.h"

#include "auth/peer_address.h"

namespace clusterd::auth {

void PodIdentityIndex::RemoveLocked(const std::string& pod_key) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return;
  if (auto j = jobs_by_ip_.find(it->second.ip); j != jobs_by_ip_.end()) {
    for (const std::string& job_id : it->second.job_ids) {
      if (auto c = j->second.find(job_id); c != j->second.end() && --c->second <= 0) {
        j->second.erase(c);
      }
    }
    if (j->second.empty()) jobs_by_ip_.erase(j);
  }
  pods_.erase(it);
}

void PodIdentityIndex::Set(const std::string& pod_key, absl::string_view pod_ip,
                           std::vector<std::string> job_ids) {
  absl::MutexLock lock(&mu_);
  RemoveLocked(pod_key);
  std::erase_if(job_ids, [](const std::string& id) { return id.empty(); });
  if (pod_ip.empty() || job_ids.empty()) return;
  PodEntry entry{NormaliseIp(pod_ip), std::move(job_ids)};
  for (const std::string& job_id : entry.job_ids) ++jobs_by_ip_[entry.ip][job_id];
  pods_.emplace(pod_key, std::move(entry));
}

void PodIdentityIndex::Remove(const std::string& pod_key) {
  absl::MutexLock lock(&mu_);
  RemoveLocked(pod_key);
}

bool PodIdentityIndex::IsPodOfJob(absl::string_view ip, absl::string_view job_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto j = jobs_by_ip_.find(ip);
  return j != jobs_by_ip_.end() && j->second.contains(job_id);
}

size_t PodIdentityIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return pods_.size();
}

}  // namespace clusterd::auth
