#pragma once

#include <string>

#include "absl/status/status.h"

namespace clusterd::sim {

// The demo of the foundation: starts clusterd on a fresh embedded `dir` store, shows that it
// serves every service and the HTTP endpoints, drops an object into the store directory as
// another process would and reads it back through clusterd, then stops it cleanly.
// Prints its progress to stdout. OK when every step worked.
absl::Status RunSmokeDemo(const std::string& clusterd_binary, const std::string& state_dir);

}  // namespace clusterd::sim
