#pragma once

#include <string>

namespace clusterd::cluster {

// A random (version 4) UUID in the canonical 8-4-4-4-12 lower-case form: signal uuids and
// Job-service client ids.
std::string NewJobUuid();

}  // namespace clusterd::cluster
