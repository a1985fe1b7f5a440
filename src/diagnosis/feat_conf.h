#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::diagnosis {

// The `ras-feature-slownode-<jobName>` ConfigMap of jobs-ranktable-diagnosis.md §6.1.
inline constexpr std::string_view kSlowNodeConfigMapPrefix = "ras-feature-slownode";
inline constexpr std::string_view kSlowNodeLabel = "fd-ol-slow-node";
inline constexpr std::string_view kFeatConfKey = "FeatConf";

// One server of the job as the engine fills it in (`servers:[{Sn,Ip,RankIds}]`).
struct ServerRanks {
  std::string sn;
  std::string ip;
  std::vector<int64_t> rank_ids;
  bool operator==(const ServerRanks&) const = default;
};

// FeatConf (§6.1). Field names are the wire's; JSON key matching is case-insensitive.
struct FeatConf {
  std::string job_name;
  std::string job_namespace;
  int64_t normal_number = 0;          // N
  int64_t n_sigma = 0;                // kept and validated; see docs/compatibility.md
  double degradation_percentage = 0;  // p
  int64_t n_consec_anomalies = 0;     // K
  int64_t n_seconds_do_one_detection = 0;  // T
  double cluster_mean_distance = 0;        // D
  int64_t card_one_node = 0;
  int64_t slow_node = 0;  // 1 enable, anything else disable
  std::vector<int64_t> rank_ids;
  std::string job_id;
  std::vector<ServerRanks> servers;

  bool Enabled() const { return slow_node == 1; }
  // True when the detection thresholds (everything but slowNode, rankIds, jobId, servers)
  // are the same.
  bool SameThresholds(const FeatConf& other) const;
  bool operator==(const FeatConf&) const = default;
};

// Decodes the FeatConf JSON (Go encoding/json rules: keys matched case-insensitively, unknown
// keys ignored, a value of the wrong type is an error naming the field). `what` names the
// source in errors. Does not validate ranges: see ValidateFeatConf.
absl::StatusOr<FeatConf> ParseFeatConf(std::string_view text, std::string_view what);

// The §6.1 rules. InvalidArgument naming the first offending field and its value, e.g.
// "clusterMeanDistance must be > 1, got 1". An empty jobName is rejected too (the CM is
// ignored).
absl::Status ValidateFeatConf(const FeatConf& conf);

// Parse + validate.
absl::StatusOr<FeatConf> ParseAndValidateFeatConf(std::string_view text, std::string_view what);

// The job JSON of the `slow-node-job-<jobId>` ConfigMap field order (§6.2 step 2; zero
// thresholds omitted); used for the view.
nlohmann::ordered_json FeatConfToJson(const FeatConf& conf);

}  // namespace clusterd::diagnosis
