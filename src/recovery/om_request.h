#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "recovery/job_recovery.h"

namespace clusterd::recovery {

// What the request checks of §12/§13 need to know about the job's servers: its rank table plus
// the device fault centre's view of each node.
struct NodeTopology {
  int64_t super_pod_id = -1;
  bool known_to_fault_centre = false;
  std::map<std::string, int64_t> device_ranks;  // device ID -> global rank (rank table order)
};
struct JobTopology {
  bool job_known = false;
  bool registered = false;
  bool running = false;                       // job status "running"
  std::map<std::string, NodeTopology> nodes;  // by node name
};

// SwitchNicTrack nicOps entry: device IDs and switch ops, aligned.
struct NicOps {
  std::vector<std::string> devices;
  std::vector<bool> ops;
};

// §12 request check. On failure the status message is the 413 reason. On success: ranks and ops
// concatenated node by node (nodes in name order), aligned.
absl::StatusOr<NicSwitchParams> CheckSwitchNicRequest(const std::map<std::string, NicOps>& nic_ops,
                                                      const JobTopology& topology);

// §13 request check (413 on failure). `all_nodes_ops`, when non-empty, applies to every node of
// the rank table; otherwise `stress_param` (node -> ops) must be non-empty and name only nodes
// of the rank table, each with a non-empty op list. Ops come from {0 = AIC, 1 = P2P}, no
// duplicates. Result: node -> every rank of the node -> its ops.
absl::StatusOr<StressParams> CheckStressTestRequest(
    const std::map<std::string, std::vector<int64_t>>& stress_param,
    const std::vector<int64_t>& all_nodes_ops, const JobTopology& topology);

}  // namespace clusterd::recovery
