#pragma once

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace clusterd::auth {

// podIP -> the jobs whose pods have that IP, kept current from the pod watch (the job registry
// calls Set/Remove for every pod event), so that the identity check of a call is one hash
// lookup under a reader lock, not a scan of the jobs.
class PodIdentityIndex {
 public:
  // Pod `pod_key` ("ns/name") has `pod_ip` (may be empty: not running yet) and acts for
  // `job_ids` (its controller's uid, and a MindIE job id from its jobID label).
  void Set(const std::string& pod_key, absl::string_view pod_ip, std::vector<std::string> job_ids);
  void Set(const std::string& pod_key, absl::string_view pod_ip, const std::string& job_id) {
    Set(pod_key, pod_ip, std::vector<std::string>{job_id});
  }
  void Remove(const std::string& pod_key);

  bool IsPodOfJob(absl::string_view ip, absl::string_view job_id) const;
  size_t size() const;

 private:
  struct PodEntry {
    std::string ip;
    std::vector<std::string> job_ids;
  };
  void RemoveLocked(const std::string& pod_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, PodEntry> pods_ ABSL_GUARDED_BY(mu_);
  // ip -> job id -> number of pods of that job with that ip
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, int>> jobs_by_ip_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::auth
