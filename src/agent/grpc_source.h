#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/agent_runner.h"
#include "agent/fault_sources.h"

namespace clusterd::agent {

// The `grpc:HOST:PORT` source: serves clusterd.agent.FaultInjection (proto/npu_agent.proto)
// and queues valid events on the runner. Port 0 picks a free port; Describe() names the bound
// address ("grpc:127.0.0.1:40123"). Inject needs the `inject` permission: loopback callers
// have it, and so does the holder of a token of `token_file` ("" = none) sent as
// `authorization: Bearer <token>`; anyone else is refused UNAUTHENTICATED (no or a bad token).
absl::StatusOr<std::unique_ptr<FaultSourceHandle>> StartGrpcSource(
    const std::string& listen, int num_npus, AgentRunner& runner,
    const std::string& token_file = "");

}  // namespace clusterd::agent
