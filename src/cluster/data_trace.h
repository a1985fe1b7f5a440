#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "cluster/job_registry.h"
#include "model/job_profiling_switch.h"
#include "model/pod_info.h"
#include "store/object_store.h"

namespace clusterd::cluster {

// Profiling (data-trace) switches of jobs-ranktable-diagnosis.md §5: the TrainingDataTrace
// service's decisions and the `data-trace-<job>` ConfigMap.

inline constexpr std::string_view kDataTracePrefix = "data-trace-";
inline constexpr std::string_view kProfilingSwitchKey = "profilingSwitch";
inline constexpr std::string_view kLabelReset = "reset";

inline constexpr int32_t kDataTraceOk = 200;
inline constexpr int32_t kDataTraceInvalidParameter = 300;
inline constexpr int32_t kDataTraceNotFound = 404;
inline constexpr int32_t kDataTraceServerFault = 500;

// Texts of §5.1, spelled once (the "comfigmap" typos are the original's).
inline constexpr std::string_view kBadJobNsName =
    "the format of jobNsName is not namespace/jobName";
inline constexpr std::string_view kSwitchChanged =
    "successfully changed profiling marker enable status";
inline constexpr std::string_view kNotifyFailed = "notify subscribe failed";
inline constexpr std::string_view kNoSwitchField =
    "data trace configmap does not contain the 'profilingSwitch' field";
inline constexpr std::string_view kUpdateProfilingSwitch = "update profiling switch";

// The answer of a TrainingDataTrace RPC: the response body, and whether the original also
// fails the call (the client then sees only the error).
struct DataTraceResult {
  int32_t code = kDataTraceOk;
  std::string message;
  bool rpc_error = false;
  model::ProfilingSwitch profiling_switch;  // Get only
};

// "namespace/jobName": exactly two parts split on '/', empty parts accepted (§5.1).
std::optional<std::pair<std::string, std::string>> ParseJobNsName(std::string_view job_ns_name);

// The ConfigMap of §5.2 (labels reset=true; ownerReferences = [owner] when known).
store::Object DataTraceConfigMap(std::string_view ns, std::string_view job_name,
                                 const model::OwnerReference* owner,
                                 const model::ProfilingSwitch& profiling_switch);

class DataTraceSwitches {
 public:
  // Queues a switch change for the subscriber of `job_id`; fails when there is none.
  using Notifier =
      std::function<absl::Status(const std::string& job_id, const model::ProfilingSwitch&)>;

  DataTraceSwitches(store::ObjectStore& store, const JobRegistry& registry);

  void SetNotifier(Notifier notifier);

  // ModifyTrainingDataTraceSwitch (§5.2): pods mounting the switch directory get the ConfigMap
  // (created or updated); the job's subscriber is notified either way. Without the mount only
  // the notification is made, and its failure fails the call.
  DataTraceResult Modify(std::string_view job_ns_name, const model::ProfilingSwitch& value);
  // GetTrainingDataTraceSwitch: the switch as stored in the ConfigMap.
  DataTraceResult Get(std::string_view job_ns_name) const;
  // §5.4: may a new publisher be created for `job_id` (a job with that id, or a MindIE instance
  // whose PodGroup has jobID=job_id and app=role)?
  bool SubscriptionAllowed(std::string_view job_id, std::string_view role) const;

 private:
  store::ObjectStore& store_;
  const JobRegistry& registry_;
  Notifier notifier_;
};

}  // namespace clusterd::cluster
