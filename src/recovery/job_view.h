#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "model/device_naming.h"
#include "recovery/job_config.h"
#include "store/object_store.h"

namespace clusterd::recovery {

// One pod of the job as the controller sees it (§11.6).
struct PodView {
  std::string name;
  std::string uid;
  std::string node;
  bool running = false;      // status.phase == Running
  bool ascend_real = false;  // annotation huawei.com/AscendReal non-empty
  bool backup = false;       // podType=backup (hot switch)
  bool in_hot_switch_flow = false;
  std::string backup_new_pod_name;  // annotation backupNewPodName
  absl::Time created = absl::UnixEpoch();
  int64_t super_pod_id = -2;  // from the allocation annotation; >= 0 on a super pod
  bool operator==(const PodView&) const = default;
};

// The live state of the job's objects, fed to the machine whenever it changes (level-triggered:
// the executor re-reads the PodGroup and pods and sends the whole view). The machine reads the
// values §9.1 says are read live from here, never from the Init snapshot.
struct JobView {
  bool exists = false;  // the PodGroup exists
  std::string ns;
  std::string pod_group_name;
  std::string job_name;
  bool pod_group_running = false;  // PodGroup status.phase == Running
  StringMap pod_group_labels;
  StringMap pod_group_annotations;
  std::map<int64_t, PodView> pods;  // by pod rank (hccl/rankIndex); backup pods excluded
  std::vector<PodView> backup_pods;
  int npus_per_pod = 1;     // D
  bool npu_server = false;  // "npu"-type servers (ra-block rule, §7.4)
  bool super_pod = false;   // a pod's allocation names a super pod (fault-job-info, §11.5)
  std::optional<int64_t> mindio_wait_seconds;  // env of the rank-0 pod, when an integer
  bool operator==(const JobView&) const = default;

  // The pod of `pod_rank`, or nullptr.
  const PodView* Pod(int64_t pod_rank) const;
  // UID of the pod of `pod_rank`, or "" when there is none.
  std::string PodUid(int64_t pod_rank) const;
  std::string Annotation(std::string_view key) const { return ValueOr(pod_group_annotations, key); }
  bool HasAnnotation(std::string_view key) const;
};

// Builds a view from the store objects (pure): the PodGroup (may be null when it is gone) and
// the job's pods. D is the largest number of NPUs (huawei.com/ resources, or a customised
// DevicePublicType of `naming`) any pod's containers request (limits), at least 1; the super
// pod comes from the first allocation annotation of `naming` a pod has. Pods without a decimal
// hccl/rankIndex are left out, except backups.
JobView BuildJobView(const store::Object* pod_group, const std::vector<store::Object>& pods,
                     const model::DeviceNaming& naming = model::DeviceNaming::Fixed());

}  // namespace clusterd::recovery
