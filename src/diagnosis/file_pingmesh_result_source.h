#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "diagnosis/pingmesh_result_source.h"

namespace clusterd::diagnosis {

// The shared-storage layout of §7: <root>/cluster/super-pod-<id>/{cathelper.conf,
// super-pod-<id>.json, *.csv, *.csv-bak}. A ping-result file larger than `max_file_bytes` is
// refused (the file rotates every 45 s, so it stays small); cathelper.conf is read up to 1 MiB.
class FilePingmeshResultSource final : public PingmeshResultSource {
 public:
  FilePingmeshResultSource(std::string root, size_t max_file_bytes);

  absl::StatusOr<std::string> Cathelper(const std::string& super_pod_id) override;
  bool HasTopology(const std::string& super_pod_id) override;
  absl::StatusOr<std::vector<PingResultFile>> PingResults(const std::string& super_pod_id) override;

  // <root>/cluster/super-pod-<id>: where the controller also writes the pod's files.
  std::string PodDir(const std::string& super_pod_id) const;

 private:
  const std::string root_;
  const size_t max_file_bytes_;
};

}  // namespace clusterd::diagnosis
