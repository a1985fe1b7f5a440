#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/profiling_data.h"
#include "diagnosis/temporal_detector.h"
#include "nlohmann/json.hpp"

namespace clusterd::diagnosis {

// Node-level (§6.5) and cluster-level (§6.7) slow-node algorithms. Pure functions of their
// inputs; the per-series detector state is threaded through explicitly.

// One rank's profiling data as read this round.
struct RankProfile {
  int64_t rank = 0;
  Series step_time;                // valid steptime.csv samples, file order
  std::optional<CommSeries> comm;  // nullopt: comm.csv missing or unreadable
};

// One node's ranks (those with a readable parallel_group.json), ascending by rank.
struct NodeInput {
  std::string node_ip;  // the result's nodeRank
  std::vector<RankProfile> ranks;
  ParallelGroups groups;  // merged parallel_group.json of the local ranks
};

struct NodeResult {
  std::string node_ip;
  bool is_slow = false;
  double degradation = 0;  // max d over slow ranks
  std::vector<int64_t> slow_calculate_ranks;
  std::vector<std::vector<int64_t>> slow_communication_domains;
  std::vector<int64_t> slow_send_ranks;
  std::vector<std::string> slow_host_nodes;
  std::vector<int64_t> slow_io_ranks;
  bool operator==(const NodeResult&) const = default;
  // {"slownode_<jobId>": {"<ip>": {...}}} in the field order of §6.5.
  nlohmann::ordered_json ToJson(const std::string& job_id) const;
};

// Detector state of one node's ranks: rank -> series -> state.
using RankSeriesState = std::map<int64_t, std::map<SeriesKind, SeriesState>>;

enum class NodeRoundOutcome {
  kRan,
  kNoRanks,      // no rank with a parallel_group.json
  kUnsupported,  // a cp or exp group: the node does not run detection
  kNoNewSteps,   // the lowest rank's steptime.csv has no new step
};
std::string_view ToString(NodeRoundOutcome outcome);

struct NodeRound {
  NodeRoundOutcome outcome = NodeRoundOutcome::kRan;
  RankSeriesState next;
  NodeResult result;
  // This round's stepTime detection per rank (for the view and the accuracy harness).
  std::map<int64_t, Detection> step_detections;
};

// One round of §6.5: perception on stepTime, localization on comm.csv when slow.
NodeRound RunNodeRound(const RankSeriesState& state, const NodeInput& input,
                       const DetectorParams& params, double cluster_mean_distance);

struct ClusterResult {
  bool is_slow = false;
  double degradation = 0;
  std::vector<int64_t> slow_calculate_ranks;
  std::vector<std::vector<int64_t>> slow_communication_domains;
  std::vector<std::string> slow_host_nodes;
  std::vector<int64_t> slow_io_ranks;
  std::vector<int64_t> slow_communication_ranks;
  bool operator==(const ClusterResult&) const = default;
  nlohmann::ordered_json ToJson(const std::string& job_id, const std::string& reporter_ip) const;
};

// §6.7: merges the node results of this round with the global parallel groups (TP domains
// confirmed across nodes, PP analysis on the slow send ranks).
ClusterResult MergeNodeResults(const std::vector<NodeResult>& nodes, const ParallelGroups& global);

// §6.7 PP analysis, exposed for tests: the [r, next] domains, and the slow-network ranks.
std::vector<std::vector<int64_t>> SlowPpDomains(const std::vector<int64_t>& slow_send,
                                                const std::vector<std::vector<int64_t>>& pp_groups);
std::vector<int64_t> SlowNetworkRanks(const std::vector<int64_t>& slow_send,
                                      const std::vector<std::vector<int64_t>>& pp_groups);

}  // namespace clusterd::diagnosis
