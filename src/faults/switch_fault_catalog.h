#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "faults/policy_issue.h"

namespace clusterd::faults {

// UnifiedBus switch levels, least severe first (numeric 0..4 of §3.5).
enum class SwitchLevel : uint8_t {
  kNotHandle,
  kSubHealth,
  kRestartRequest,
  kPreSeparate,
  kSeparate
};

std::string_view SwitchLevelName(SwitchLevel level);   // NotHandle, SubHealthFault, ...
std::string_view SwitchNodeStatus(SwitchLevel level);  // Healthy, SubHealthy, UnHealthy, ...

// The parts of an assembled switch code "[0x<8 hex>,<id or na>,<cpu|npu|L2|na>,<na>]".
struct AssembledCode {
  uint32_t event_type = 0;
  uint32_t peer_port_device = 0;  // model::kPeerCpu / kPeerNpu / kPeerL2 / kPeerNa
};
// nullopt unless `code` starts with '[', ends with ']', has exactly 4 comma-separated parts and
// at most 50 characters (§4); the first part must be hex.
std::optional<AssembledCode> ParseAssembledCode(std::string_view code);

// SwitchFaultCode.json (§4). Immutable after Parse.
class SwitchFaultCatalog {
 public:
  // Format errors fail the document (caller falls back to the shipped file); invalid assembled
  // codes are skipped and reported.
  static absl::StatusOr<SwitchFaultCatalog> Parse(std::string_view text, PolicyIssues* issues);

  // nullopt for an unregistered code (not reported, counts as NotHandle).
  std::optional<SwitchLevel> Level(std::string_view assembled_code) const;
  const absl::flat_hash_map<std::string, SwitchLevel>& levels() const { return levels_; }

 private:
  absl::flat_hash_map<std::string, SwitchLevel> levels_;
};

}  // namespace clusterd::faults
