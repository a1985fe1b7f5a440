#pragma once

// What the fault centre needs to know about jobs (fault-pipeline.md §7.3, §7.5): which job's pod
// uses which NPU of which node, each job's last complete rank table (node -> devices and ranks),
// its pods, and the PodGroup settings the processors read (retry, recover-in-place, custom
// filters, sub-health strategy). Built from the job registry's snapshot, and kept up to date job
// by job.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/job_record.h"
#include "cluster/rank_table_global_builder.h"  // kAppMindIeServer
#include "model/pod_group_info.h"
#include "model/pod_info.h"

namespace clusterd::cluster {

// PodGroup keys read by the fault centre (jobs-ranktable-diagnosis.md §1.3).
inline constexpr std::string_view kLabelProcessRecoverEnable = "process-recover-enable";
inline constexpr std::string_view kAnnotationRecoverStrategy = "recover-strategy";
inline constexpr std::string_view kLabelSubHealthyStrategy = "subHealthyStrategy";
inline constexpr std::string_view kAnnotationFilterFaultCode = "huawei.com/schedule.filter.faultCode";
inline constexpr std::string_view kAnnotationFilterFaultLevel =
    "huawei.com/schedule.filter.faultLevel";

// One `key[:seconds]` item of a custom-filter annotation (§7.3 step 2).
struct CustomFilterRule {
  std::string key;  // a code (upper-cased) or a level name
  int64_t seconds = 60;
  bool operator==(const CustomFilterRule&) const = default;
};
inline constexpr int64_t kCustomFilterDefaultSeconds = 60;
inline constexpr int64_t kCustomFilterMaxSeconds = 86400;

// Parses `key[:seconds],key[:seconds]`: commas inside [...] belong to a switch code, full-width
// `，` and `：` are accepted, a missing, non-integer or out-of-range (0..86400) time is 60 s.
// Blank items are skipped. Codes are compared case-insensitively, so `upper_case_keys` upper-cases.
std::vector<CustomFilterRule> ParseCustomFilter(std::string_view text, bool upper_case_keys);

struct FaultJobPolicy {
  bool retry = false;             // process-recover-enable=on and recover-strategy has `retry`
  bool recover_in_place = false;  // recover-strategy has `recover-in-place`
  std::string sub_healthy_strategy = "ignore";
  std::vector<CustomFilterRule> code_rules;
  std::vector<CustomFilterRule> level_rules;
  bool mindie_server = false;  // PodGroup label app=mindie-ms-server
  bool operator==(const FaultJobPolicy&) const = default;
};

struct FaultJobDevice {
  int64_t device_id = 0;  // physical id
  int64_t rank_id = 0;    // global rank
  bool operator==(const FaultJobDevice&) const = default;
};

// A server of the job's last complete rank table.
struct FaultJobServer {
  std::string node;       // server_name
  std::string server_id;  // pod UID (or node IP)
  std::string host_ip;
  std::string server_sn;
  std::string pod_uid;
  std::vector<FaultJobDevice> devices;
  bool operator==(const FaultJobServer&) const = default;
};

struct FaultJobPod {
  std::string uid;
  std::string ns;
  std::string name;
  std::string node;  // "" while unscheduled
  std::string host_ip;
  std::optional<int64_t> rank;     // hccl/rankIndex
  std::vector<int64_t> npus;       // physical ids of its allocation
  bool holds_npus = false;         // scheduled and not terminated: its NPUs are in use
  bool operator==(const FaultJobPod&) const = default;
};

struct FaultJob {
  std::string job_id;
  std::string ns;
  std::string name;
  std::string multi_instance_job_id;  // PodGroup label jobID (MindIE)
  std::string app_type;               // PodGroup label app
  bool pod_group_exists = false;
  FaultJobPolicy policy;
  std::vector<FaultJobServer> servers;  // empty: no complete rank table yet
  int64_t devices_per_pod = 0;          // 0: unknown (no pod with an allocation)
  std::map<int64_t, std::string> pod_uid_by_rank;
  std::vector<FaultJobPod> pods;
  bool operator==(const FaultJob&) const = default;

  const FaultJobServer* ServerOn(std::string_view node) const;
  // PodRank of a global rank, or nullopt when devices_per_pod is unknown.
  std::optional<int64_t> PodRankOf(int64_t rank_id) const;
};

// The pod (and its job) using an NPU.
struct NpuUse {
  std::string job_id;
  std::string pod_uid;
  std::optional<int64_t> pod_rank;
  bool operator==(const NpuUse&) const = default;
};

struct FaultJobIndex {
  std::map<std::string, FaultJob> jobs;
  // node -> physical id -> the pod using it. Pods of every job, scheduled and not terminated.
  std::map<std::string, std::map<int64_t, NpuUse>> npus_by_node;
  // node -> jobs with a server or a pod on it.
  std::map<std::string, std::set<std::string>> jobs_by_node;

  const NpuUse* Use(const std::string& node, int64_t physical_id) const;
  const FaultJob* Job(const std::string& job_id) const;
  // Jobs touching `node` (empty set when none).
  const std::set<std::string>& JobsOn(const std::string& node) const;
  // Nodes of a job (rank-table servers and pod nodes).
  std::set<std::string> NodesOf(const FaultJob& job) const;

  // Adds or replaces one job with its NPU claims and node links, leaving the other jobs as they
  // are (the fault centre updates the index job by job, not rebuilt from every job).
  void Put(FaultJob job);
  void Erase(const std::string& job_id);

 private:
  void Unlink(const FaultJob& job, std::set<std::pair<std::string, int64_t>>* freed);
  void Link(const FaultJob& job);
  void Reclaim(const std::set<std::pair<std::string, int64_t>>& freed);
};

// One job as the registry holds it.
struct FaultJobSource {
  const JobRecord* record = nullptr;
  const model::PodGroupInfo* pod_group = nullptr;  // null when the PodGroup is gone
  std::vector<const model::PodInfo*> pods;         // by pod name
};

FaultJobPolicy PolicyOf(const model::PodGroupInfo& pod_group);
// One job's entry; `source.record` must not be null.
FaultJob BuildFaultJob(const FaultJobSource& source);
// Every job with a record, put one after another.
FaultJobIndex BuildFaultJobIndex(const std::vector<FaultJobSource>& jobs);


}  // namespace clusterd::cluster
