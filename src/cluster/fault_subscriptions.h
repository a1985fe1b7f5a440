#pragma once

// The Fault service's publishers (jobs-ranktable-diagnosis.md §4.1, §4.2) without the transport:
// who is registered for which job id and role, the current fault entries of every job, and which
// message each publisher has to be sent when a job's faults change. The server owns the streams
// and pushes what Update/Register return. Thread-safe.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "cluster/fault_job_faults.h"
#include "cluster/fault_signal.h"

namespace clusterd::cluster {

class FaultSubscriptions {
 public:
  static constexpr size_t kMaxServedJobs = 10000;

  struct Delivery {
    std::string publisher;  // PublisherKey(job id, role)
    FaultMsgSignal signal;  // uuid empty: the caller stamps it
  };
  struct Registration {
    int32_t code = 0;  // 0, 402, 500
    std::string info;
    bool rpc_error = false;
    std::string publisher;          // on success
    std::vector<Delivery> initial;  // the job's current message, when it has faults
  };
  // Does a job record with this id exist, or a MindIE record with MultiInstanceJobId = id and
  // AppType = role?
  using JobKnownFn = std::function<bool(const std::string& job_id, const std::string& role)>;
  // Does a job record with this id still exist?
  using JobExistsFn = std::function<bool(const std::string& job_id)>;

  static std::string PublisherKey(const std::string& job_id, const std::string& role);
  // "" -> "-1".
  static std::string NormaliseJobId(const std::string& job_id);

  // §4.1 Register (role already checked non-empty by the caller).
  Registration Register(const std::string& job_id, const std::string& role,
                        const JobKnownFn& known);
  bool IsRegistered(const std::string& job_id, const std::string& role) const;
  // Whether any publisher serves `job_id` (used for the MindIE implicit custom filter, §7.3).
  bool Serves(const std::string& job_id) const;

  // A job's fault snapshot changed (an empty one when its faults cleared). Returns the
  // messages to send (§4.2), de-duplicated against each publisher's last message.
  std::vector<Delivery> Update(const JobFaultRanks& faults, const JobExistsFn& exists);
  // The job record is gone: cluster publishers forget it, per-job publishers get `normal`.
  std::vector<Delivery> JobGone(const std::string& job_id, const std::string& multi_instance_id);

  size_t ServedJobs() const;

 private:
  struct Publisher {
    std::string job_id;
    std::string role;
    std::map<std::string, FaultMsgSignal> last_sent;  // target job id -> last message
  };
  std::vector<Delivery> OfferLocked(Publisher& p, const std::string& publisher_key,
                                    FaultMsgSignal signal) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<FaultDevice> EntriesLocked(const std::string& id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Delivery> RefreshLocked(const std::string& id, const JobExistsFn& exists)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Publisher> publishers_ ABSL_GUARDED_BY(mu_);  // by PublisherKey
  std::map<std::string, std::set<std::string>> roles_by_job_ ABSL_GUARDED_BY(mu_);
  // job id -> its entries (non-empty only), for jobs of the job cache.
  std::map<std::string, std::vector<FaultDevice>> entries_ ABSL_GUARDED_BY(mu_);
  // MindIE multi-instance id -> member job ids with entries.
  std::map<std::string, std::set<std::string>> instance_members_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> instance_of_ ABSL_GUARDED_BY(mu_);  // job -> instance id
};

}  // namespace clusterd::cluster
