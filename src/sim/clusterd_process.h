#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/subprocess.h"

namespace clusterd::sim {

// A real clusterd process on loopback with ports chosen by the kernel, as the simulator and
// the integration tests run it.
class ClusterdProcess {
 public:
  struct Options {
    std::string binary;  // path to clusterd
    std::string store = "memory";
    std::string work_dir;  // listen-info and log files go here
    std::vector<std::string> extra_args;
    // --http-store-mirror: the simulator and the tests read the store through /api/v1.
    bool store_mirror = true;
    absl::Duration start_timeout = absl::Seconds(20);
  };
  static absl::StatusOr<std::unique_ptr<ClusterdProcess>> Start(const Options& options);

  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& http_address() const { return http_address_; }
  const std::string& log_path() const { return log_path_; }
  Subprocess& process() { return process_; }

  // SIGTERM, then the exit code (0 means a clean stop).
  absl::StatusOr<int> Stop(absl::Duration timeout = absl::Seconds(15));

 private:
  ClusterdProcess(Subprocess process) : process_(std::move(process)) {}
  Subprocess process_;
  std::string grpc_address_;
  std::string http_address_;
  std::string log_path_;
};

// Where clusterd lives next to the calling binary (build tree: ../clusterd/clusterd; installed:
// ./clusterd). Empty if not found.
std::string FindSiblingBinary(const std::string& name);

}  // namespace clusterd::sim
