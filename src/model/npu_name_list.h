#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace clusterd::model {

// Comma-joined NPU name lists (`ManuallySeparateNPU`, the DeviceList health lists).
// Splitting trims blanks around names and drops empty ones.
std::vector<std::string> SplitNpuNames(std::string_view joined);
std::string JoinNpuNames(const std::vector<std::string>& names);

}  // namespace clusterd::model
