#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/rank_table_global.h"

namespace clusterd::cluster {

// Inputs of the MindIE global rank table (jobs-ranktable-diagnosis.md §2.4).
inline constexpr std::string_view kRingsConfigPrefix = "rings-config-";
inline constexpr std::string_view kLabelGrtServerDeployServer = "grt-server/deploy-server";
inline constexpr std::string_view kLabelGrtGroupDeployServer = "grt-group/deploy-server";
inline constexpr std::string_view kAppMindIeController = "mindie-ms-controller";
inline constexpr std::string_view kAppMindIeCoordinator = "mindie-ms-coordinator";
inline constexpr std::string_view kAppMindIeServer = "mindie-ms-server";
inline constexpr std::string_view kRingsConfigHcclKey = "hccl.json";

// One `rings-config-*` ConfigMap of the deployment.
struct InstanceConfigMap {
  std::string ns;
  std::string name;
  std::map<std::string, std::string> labels;
  std::string hccl_json;  // data["hccl.json"]
};

// A coordinator or controller pod.
struct MindIePod {
  std::string ns;
  std::string name;
  std::string host_ip;  // status.hostIP
  std::string pod_ip;   // status.podIP
};

// §2.4 as a pure function. Instance tables are taken in ConfigMap name order (the original's
// listing order is unspecified), pods in name order. Errors name the job and the problem:
// an instance with both or neither deploy-server label or an unreadable hccl.json, no
// completed instance, no coordinator or controller pod, a pod without hostIP/podIP.
absl::StatusOr<model::GlobalRankTable> BuildGlobalRankTable(
    std::string_view job_id, std::vector<InstanceConfigMap> instances,
    std::vector<MindIePod> coordinators, std::vector<MindIePod> controllers);

}  // namespace clusterd::cluster
