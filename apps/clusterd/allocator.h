#pragma once

#include <string>

namespace clusterd {

// The memory allocator this clusterd was linked with, as the build-info metric and the start-up
// log name it: "mimalloc 2.0.9" (CLUSTERD_MIMALLOC, the default build), or "glibc".
std::string AllocatorName();

}  // namespace clusterd
