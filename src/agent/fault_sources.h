#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/agent_core.h"
#include "agent/agent_runner.h"

namespace clusterd::agent {

// Options of the sources that need more than their spec string.
struct FaultSourceOptions {
  int num_npus = 8;
  // sim: seed, mean faults per hour on the node, mean fault duration.
  uint64_t sim_seed = 1;
  double sim_faults_per_hour = 60;
  double sim_mean_duration_s = 30;
  // grpc: bearer tokens that may Inject (the token-file format of docs/security.md). Without
  // one only loopback callers may; with one, loopback callers and holders of a listed token.
  std::string inject_token_file;
};

// A running source; destroying it stops it (the gRPC server).
class FaultSourceHandle {
 public:
  virtual ~FaultSourceHandle() = default;
  // "script:FILE (12 events)", "grpc:127.0.0.1:40123", "sim(seed=1)".
  virtual std::string Describe() const = 0;
};

// Attaches the source named by `spec` (`script:FILE`, `grpc:ADDR`, `sim`) to the agent. Script
// lines that are malformed are logged with their line number, counted and skipped; an
// unreadable file, a bad address or an unknown spec fail. Call before runner.Start().
absl::StatusOr<std::unique_ptr<FaultSourceHandle>> AttachFaultSource(
    std::string_view spec, const FaultSourceOptions& options, AgentCore& core, AgentRunner& runner);

}  // namespace clusterd::agent
