#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "model/job_status.h"
#include "model/pod_info.h"
#include "model/rank_table.h"

namespace clusterd::cluster {

// What the registry keeps per job (jobs-ranktable-diagnosis.md §1.5-§1.7). Keyed by job id, the
// UID of the PodGroup's controller owner.
struct JobRecord {
  std::string job_id;
  std::string name;  // owner name
  std::string ns;    // PodGroup namespace
  std::string pod_group_name;
  std::string kind;             // owner kind: AscendJob, Job (Volcano), Pod, ...
  model::OwnerReference owner;  // the PodGroup's controller ownerReference
  std::string framework;
  std::string resource_type;
  std::string sid;
  std::string custom_job_id;
  std::string multi_instance_job_id;  // PodGroup label jobID (MindIE)
  std::string app_type;               // PodGroup label app (MindIE)
  int64_t replicas = 0;

  model::JobStatus status = model::JobStatus::kPending;
  bool pre_deleted = false;
  absl::Time create_time = absl::UnixEpoch();
  absl::Time delete_time = absl::UnixEpoch();
  absl::Time last_cm_write = absl::UnixEpoch();

  // The last rank table built (server_list null until the first build) and the number of
  // job-summary ConfigMap slices it was written as.
  model::RankTable rank_table;
  int64_t total_cm_num = 1;
  // pytorch only; computed once, when the table first reaches complete (§3.3).
  std::string shared_tor_ip;
  std::string master_addr;
  // The server list when the table last reached complete (used for fault mapping), and the
  // node of each pod then.
  std::vector<model::RankTableServer> previous_servers;
  std::map<std::string, std::string> node_names;  // pod UID -> node name

  int64_t pod_count = 0;  // pods seen at the last reconcile (for operators)
  // Rebuilt from a job-summary ConfigMap at start-up: the rank table is not known yet and is
  // rebuilt at the first reconcile whatever the status.
  bool recovered = false;
};

}  // namespace clusterd::cluster
