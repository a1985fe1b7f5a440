#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace clusterd::faults {

// A chip fault code: a 32-bit (some 36-bit) DCMI event id.
using FaultCode = uint64_t;

// Parses a hex code as configuration files and scripts spell it: 1-16 hex digits, either
// case, optional 0x prefix. nullopt for anything else.
std::optional<FaultCode> ParseHexCode(std::string_view text);

// Minimal lower-case hex, no prefix ("80e01801").
std::string MinimalHex(FaultCode code);

// Debian's Abseil has its own string_view: wrap std::string_view before absl::StrCat.
inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string AsciiUpper(std::string_view s);
std::string AsciiLower(std::string_view s);

}  // namespace clusterd::faults
