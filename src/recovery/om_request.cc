#include "recovery/om_request.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::Status CheckJob(const JobTopology& topology, bool need_running) {
  if (!topology.job_known) return Invalid("job is not known");
  if (!topology.registered) return Invalid("job is not registered");
  if (need_running && !topology.running) return Invalid("job is not running");
  return absl::OkStatus();
}

absl::Status CheckOps(const std::string& node, const std::vector<int64_t>& ops) {
  if (ops.empty()) return Invalid(absl::StrCat("node ", node, ": no stress test op"));
  std::set<int64_t> seen;
  for (int64_t op : ops) {
    if (op != kStressOpAic && op != kStressOpP2p) {
      return Invalid(absl::StrCat("node ", node, ": unknown stress test op ", op));
    }
    if (!seen.insert(op).second) {
      return Invalid(absl::StrCat("node ", node, ": duplicated stress test op ", op));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NicSwitchParams> CheckSwitchNicRequest(const std::map<std::string, NicOps>& nic_ops,
                                                      const JobTopology& topology) {
  if (absl::Status s = CheckJob(topology, /*need_running=*/true); !s.ok()) return s;
  if (nic_ops.empty()) return Invalid("nicOps is empty");
  NicSwitchParams params;
  for (const auto& [node, ops] : nic_ops) {
    const auto it = topology.nodes.find(node);
    if (it == topology.nodes.end()) {
      return Invalid(absl::StrCat("node ", node, " is not in the job's rank table"));
    }
    if (!it->second.known_to_fault_centre) {
      return Invalid(absl::StrCat("node ", node, " is not known to the device fault centre"));
    }
    if (it->second.super_pod_id < 0) {
      return Invalid(absl::StrCat("node ", node, ": should operate in superPodID"));
    }
    if (ops.devices.empty() || ops.devices.size() != ops.ops.size()) {
      return Invalid(
          absl::StrCat("node ", node, ": dev and op must have the same, non-zero length"));
    }
    for (size_t i = 0; i < ops.devices.size(); ++i) {
      const auto rank = it->second.device_ranks.find(ops.devices[i]);
      if (rank == it->second.device_ranks.end()) {
        return Invalid(absl::StrCat("node ", node, ": device ", ops.devices[i],
                                    " is not in the job's rank table"));
      }
      params.ranks.push_back(rank->second);
      params.ops.push_back(ops.ops[i]);
    }
  }
  return params;
}

absl::StatusOr<StressParams> CheckStressTestRequest(
    const std::map<std::string, std::vector<int64_t>>& stress_param,
    const std::vector<int64_t>& all_nodes_ops, const JobTopology& topology) {
  if (absl::Status s = CheckJob(topology, /*need_running=*/false); !s.ok()) return s;
  std::map<std::string, std::vector<int64_t>> per_node;
  if (!all_nodes_ops.empty()) {
    for (const auto& [node, _] : topology.nodes) per_node[node] = all_nodes_ops;
    if (per_node.empty()) return Invalid("the job's rank table has no node");
  } else {
    if (stress_param.empty()) return Invalid("stressParam and allNodesOps are both empty");
    for (const auto& [node, ops] : stress_param) {
      if (topology.nodes.count(node) == 0) {
        return Invalid(absl::StrCat("node ", node, " is not in the job's rank table"));
      }
      per_node[node] = ops;
    }
  }
  StressParams params;
  for (const auto& [node, ops] : per_node) {
    if (absl::Status s = CheckOps(node, ops); !s.ok()) return s;
    auto& ranks = params[node];
    for (const auto& [device, rank] : topology.nodes.at(node).device_ranks) ranks[rank] = ops;
  }
  return params;
}

}  // namespace clusterd::recovery
