#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/pod_info.h"
#include "model/rank_table.h"

namespace clusterd::cluster {

// Node serial numbers (`product-serial-number` annotation), by node name and by node IP.
struct NodeSerials {
  absl::flat_hash_map<std::string, std::string> by_node_name;
  absl::flat_hash_map<std::string, std::string> by_host_ip;
};

// A pod left out of the rank table, and why (for the log line and the metric).
struct RankTableProblem {
  std::string pod;     // namespace/name
  std::string reason;  // metric label: missing_rank_index, invalid_rank_index, rank_out_of_range,
                       // duplicate_rank_index, malformed_allocation
  std::string detail;  // message naming the pod and the problem
};

struct RankTableBuild {
  model::RankTable table;  // status, server_list, server_count (+ v2.0 fields); total left 0
  int64_t completed_pods = 0;
  std::vector<RankTableProblem> problems;
};

// The pods of a job that take part in its rank table: every pod except hot-switch backup pods
// (podType=backup) whose source pod (backupSourcePodName) is still among `pods`.
std::vector<const model::PodInfo*> RankTablePods(const std::vector<const model::PodInfo*>& pods);

// The per-job rank table of jobs-ranktable-diagnosis.md §2.1, a pure function of the job's pods
// (any order; the result does not depend on it), its replicas R (§1.6 M), the node serial
// numbers, the job's resource type and its PodGroup label `scaleout-type`.
//
// Pods whose rank index is missing, not an integer, or >= R are skipped (jobs-ranktable-diagnosis.md §2). Where
// the spec is silent: of several pods claiming the same rank index only the first by pod name
// is used (the others are skipped and reported), so two servers never carry the same rank ids.
RankTableBuild BuildJobRankTable(const std::vector<const model::PodInfo*>& pods, int64_t replicas,
                                 const NodeSerials& serials, std::string_view resource_type,
                                 std::string_view scale_out_type_label);

}  // namespace clusterd::cluster
