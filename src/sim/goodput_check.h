#pragma once

// The `goodput:` checks of a scenario (docs/clustersim.md): the repeat-offender policy written
// before the faults, then, at the end, clusterd's goodput account of each job held against what
// the simulator saw its job do, and the nodes that must be repeat offenders.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "sim/scenario.h"
#include "store/object_store.h"

namespace clusterd::sim {

// Writes `policy_json` as key repeat-offender-policy.json of cluster-system/clusterd-config-cm.
absl::Status WriteOffenderPolicy(store::ObjectStore& store, const std::string& policy_json);

// The training share of clusterd's timeline (GET /api/clusterd/v1/goodput/<job>) within
// [from, to]: training over counted time. nullopt when nothing counted in the span.
std::optional<double> TimelineTrainingShare(const nlohmann::json& job, absl::Time from,
                                            absl::Time to);

struct SimJobTraining {
  std::string ns, name;
  absl::Time from, to;
  double share = 0;  // the simulator's
};

// Runs the checks against clusterd's HTTP API; prints a table; returns the failures.
std::vector<std::string> CheckGoodput(const GoodputCheck& check, const std::string& http_address,
                                      const std::vector<SimJobTraining>& jobs);

}  // namespace clusterd::sim
