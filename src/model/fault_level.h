#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace clusterd::model {

// Chip and network handling levels (fault-pipeline.md §3.1), declared most severe first: a
// smaller value is more severe, so "most serious wins" is std::min. ClusterD uses the same
// order. NormalNPU / NormalNetwork mean "no fault" and are internal.
enum class FaultLevel : uint8_t {
  kManuallySeparateNPU,
  kSeparateNPU,
  kPreSeparateNPU,
  kRestartNPU,
  kFreeRestartNPU,
  kRestartBusiness,
  kRestartRequest,
  kSubHealthFault,
  kNotHandleFault,
  kNormalNPU,
  kNormalNetwork,
};

inline constexpr int kNumFaultLevels = 11;

// The wire spelling of each level, for the records that carry levels as text (device-info,
// cluster-info, job fault ranks): the one place these names are written.
inline constexpr std::string_view kLevelManuallySeparateNPU = "ManuallySeparateNPU";
inline constexpr std::string_view kLevelSeparateNPU = "SeparateNPU";
inline constexpr std::string_view kLevelPreSeparateNPU = "PreSeparateNPU";
inline constexpr std::string_view kLevelRestartNPU = "RestartNPU";
inline constexpr std::string_view kLevelFreeRestartNPU = "FreeRestartNPU";
inline constexpr std::string_view kLevelRestartBusiness = "RestartBusiness";
inline constexpr std::string_view kLevelRestartRequest = "RestartRequest";
inline constexpr std::string_view kLevelSubHealthFault = "SubHealthFault";
inline constexpr std::string_view kLevelNotHandleFault = "NotHandleFault";
inline constexpr std::string_view kLevelNormalNPU = "NormalNPU";
inline constexpr std::string_view kLevelNormalNetwork = "NormalNetwork";

// Exact wire spelling ("SeparateNPU", ...).
std::string_view FaultLevelName(FaultLevel level);
// Inverse of FaultLevelName; exact, case-sensitive match.
std::optional<FaultLevel> ParseFaultLevel(std::string_view name);

// The more severe of the two.
constexpr FaultLevel MostSevere(FaultLevel a, FaultLevel b) { return a < b ? a : b; }
constexpr bool IsMoreSevere(FaultLevel a, FaultLevel b) { return a < b; }
// False for NormalNPU and NormalNetwork.
constexpr bool IsFault(FaultLevel level) { return level < FaultLevel::kNormalNPU; }
// Whether `name` spells `level`.
inline bool IsLevel(std::string_view name, FaultLevel level) {
  return ParseFaultLevel(name) == level;
}

}  // namespace clusterd::model
