#pragma once

#include <cstdint>
#include <string_view>

namespace clusterd::model {

// Fault codes that carry behaviour of their own, spelled once for every room: the node-side
// engines (src/faults, numeric codes), the fault centre (src/cluster) and the recovery
// controller (src/recovery), which hold codes as the upper-case hex strings device-info carries.

// HBM multi-bit ECC error, the UCE (uncorrectable error): the job may retry in place
// (fault-pipeline.md §3.3, §5.6; recovery-protocol.md §5.5, fault type 0).
inline constexpr std::string_view kFaultCodeUce = "80E01801";
// The AIC and AIV bus errors that accompany a UCE: absorbed by it within the accompany window
// (fault-pipeline.md §5.6 node side, §7.3 cluster side).
inline constexpr std::string_view kFaultCodeAicBus = "80C98009";
inline constexpr std::string_view kFaultCodeAivBus = "80CB8009";
// HCCL step retry: the network retry class (recovery-protocol.md §5.5, fault type 2).
inline constexpr std::string_view kFaultCodeHcclRetry = "8C1F860B";
// RoCE link down on the parameter plane (fault-pipeline.md §3.3).
inline constexpr std::string_view kFaultCodeRoceLinkDown = "81078603";

// The numeric value of an upper-case hex code such as those above, at compile time.
constexpr uint64_t FaultCodeValue(std::string_view hex) {
  uint64_t value = 0;
  for (char c : hex) {
    value = value * 16 + static_cast<uint64_t>(c >= 'A' ? c - 'A' + 10 : c - '0');
  }
  return value;
}
static_assert(FaultCodeValue(kFaultCodeUce) == 0x80E01801);

}  // namespace clusterd::model
