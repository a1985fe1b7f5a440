#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clusterd::faults {

// A chip fault code: a 32-bit (some 36-bit) DCMI event id.
using FaultCode = uint64_t;

// Parses a hex code as configuration files and scripts spell it: 1-16 hex digits, either
// case, optional 0x prefix. nullopt for anything else.
std::optional<FaultCode> ParseHexCode(std::string_view text);

// Minimal lower-case hex, no prefix ("80e01801").
std::string MinimalHex(FaultCode code);

std::string AsciiUpper(std::string_view s);
std::string AsciiLower(std::string_view s);

}  // namespace clusterd::faults
