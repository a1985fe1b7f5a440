#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "faults/hex_code.h"
#include "faults/policy_issue.h"
#include "model/fault_codes.h"
#include "model/fault_level.h"

namespace clusterd::faults {

using model::FaultLevel;

// Parameter-plane network codes (fault-pipeline.md §3.3): exactly these four.
inline constexpr FaultCode kRoceLinkDown = model::FaultCodeValue(model::kFaultCodeRoceLinkDown);
inline constexpr FaultCode kUboePortDown = 0x81078607;
inline constexpr FaultCode kUboeSubHealth = 0x110000002;
inline constexpr FaultCode kUboePreSeparate = 0x110001024;
// "Reset finished": marks the NPU for resynchronisation, never a fault (§4, §5.4).
inline constexpr FaultCode kResetFinished = 0x8C2FA009;
// Card drop (§4).
inline constexpr FaultCode kCardDrop = 0x40F84E00;
// HBM multi-bit / UCE and the bus errors that accompany it (§5.6 special rule).
inline constexpr FaultCode kHbmMultiBit = model::FaultCodeValue(model::kFaultCodeUce);
inline constexpr FaultCode kAicBus = model::FaultCodeValue(model::kFaultCodeAicBus);
inline constexpr FaultCode kAivBus = model::FaultCodeValue(model::kFaultCodeAivBus);

bool IsNetworkCode(FaultCode code);

// Driver severity of an event: 0 info, 1 minor, 2 major, 3 critical; unknown when the source
// did not say.
using Severity = std::optional<uint32_t>;

// faultCode.json (§4): codes per handling level, with the precedence of §3.2 applied once at
// load so a lookup is one hash probe. Immutable after Parse; share it by const pointer.
class FaultCodeCatalog {
 public:
  // Format errors (not a JSON object, a category that is not an array of strings) fail the
  // whole document: the caller falls back to the shipped file. Entries that are not hex are
  // skipped and reported in `issues`.
  static absl::StatusOr<FaultCodeCatalog> Parse(std::string_view text, PolicyIssues* issues);

  // The level of a single chip code (§3.2 on {code}): its category, else SeparateNPU when the
  // driver severity is unknown or > 1, else NotHandleFault.
  FaultLevel ChipCodeLevel(FaultCode code, Severity severity) const;
  // The level of a single network code (§3.3): its network category, else PreSeparateNPU.
  FaultLevel NetworkCodeLevel(FaultCode code) const;
  // The configured category of a chip code, if any.
  std::optional<FaultLevel> KnownChipLevel(FaultCode code) const;

  // Every chip code with a category, for the simulator and the benchmark.
  const absl::flat_hash_map<FaultCode, FaultLevel>& chip_levels() const { return chip_levels_; }

  // The spelling of `code` in this file (lower-case, leading zeros kept), if listed.
  const std::string* Spelling(FaultCode code) const;

 private:
  absl::flat_hash_map<FaultCode, FaultLevel> chip_levels_;
  absl::flat_hash_map<FaultCode, FaultLevel> network_levels_;
  absl::flat_hash_map<FaultCode, std::string> spellings_;
};

}  // namespace clusterd::faults
