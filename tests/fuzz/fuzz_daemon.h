#pragma once

// One clusterd inside the fuzzing process, as apps/clusterd assembles it: a memory store holding
// the worked example job (AscendJob default/pt-2x8, two pods of 8 NPUs, process recovery on),
// the cluster brain, the six gRPC services and the HTTP server, both on loopback. Started on
// first use and kept for the life of the process (every input reaches the same daemon, as every
// request reaches the real one); nothing is torn down, the process exits.
#include <string>

namespace clusterd::fuzz {

struct DaemonAddresses {
  std::string grpc;  // host:port
  int http_port = 0;
};

const DaemonAddresses& Daemon();

}  // namespace clusterd::fuzz
