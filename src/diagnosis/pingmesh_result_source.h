#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::diagnosis {

// One ping_result file of a super pod (§7.4 step 2): its name (a path for files, so problems
// name it as before) and its text, or why it could not be read.
struct PingResultFile {
  std::string name;
  absl::StatusOr<std::string> text;
};

// Where NetDiagnosisController reads back what NodeD and the operator left for a super pod:
// the probe results of the current round and the cathelper.conf that says whether detection is
// on. The decision loop asks only this; the shared-storage layout
// (<RAS_NET_ROOT_PATH>/cluster/super-pod-<id>/...) is FilePingmeshResultSource's business.
class PingmeshResultSource {
 public:
  virtual ~PingmeshResultSource() = default;
  // The super pod's cathelper.conf text; an error (NotFound when absent) names the object.
  virtual absl::StatusOr<std::string> Cathelper(const std::string& super_pod_id) = 0;
  // Whether the super pod's topology (super-pod-<id>.json) is in place for NodeD.
  virtual bool HasTopology(const std::string& super_pod_id) = 0;
  // The latest ping results (ping_result_*.csv and the rotated *.csv-bak), ordered by name;
  // an error when they cannot be listed at all.
  virtual absl::StatusOr<std::vector<PingResultFile>> PingResults(
      const std::string& super_pod_id) = 0;
};

}  // namespace clusterd::diagnosis
