#pragma once

// Runs a scenario end to end: a real clusterd (started from the same build, on free ports and a
// `dir` store in the state directory), the simulated nodes' npu-agents, the mini scheduler and
// the training jobs with their recovery clients; injects the scenario's faults on time; prints a
// live progress line and, at the end, one row per fault: injected, detected (in clusterd's
// fault view), first signal on the job's stream, strategy decided, training resumed.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/scenario.h"

namespace clusterd::sim {

struct RunOptions {
  std::string clusterd_binary;
  std::string state_dir;  // store in <state_dir>/store, clusterd's log in <state_dir>/run
  std::string data_dir;   // faultCode.json and friends
  bool live = true;       // redraw the progress line in place (a terminal)
  bool verbose = false;   // print every simulator event
  std::vector<std::string> clusterd_args;  // extra flags for clusterd
};

// OK when every job trains again at the end; FailedPrecondition (with the jobs that do not)
// otherwise.
absl::Status RunScenario(const Scenario& scenario, const RunOptions& options);

}  // namespace clusterd::sim
