#include "model/fault_level.h"

#include <array>

namespace clusterd::model {
namespace {

constexpr std::array<std::string_view, kNumFaultLevels> kNames = {
    kLevelManuallySeparateNPU, kLevelSeparateNPU,     kLevelPreSeparateNPU, kLevelRestartNPU,
    kLevelFreeRestartNPU,      kLevelRestartBusiness, kLevelRestartRequest, kLevelSubHealthFault,
    kLevelNotHandleFault,      kLevelNormalNPU,       kLevelNormalNetwork,
};

}  // namespace

std::string_view FaultLevelName(FaultLevel level) { return kNames[static_cast<size_t>(level)]; }

std::optional<FaultLevel> ParseFaultLevel(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<FaultLevel>(i);
  }
  return std::nullopt;
}

}  // namespace clusterd::model
