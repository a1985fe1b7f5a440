#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "nlohmann/json.hpp"

namespace clusterd {

// Texts longer than this are left to nlohmann: simdjson's working buffers are about 15 times
// the text, so a 100 MB API list would briefly cost more than a gigabyte.
inline constexpr size_t kMaxQuickParseBytes = 4 << 20;

// Reads `text` with simdjson, several times faster than nlohmann's own parser (a restart reads
// every object file of the store and every device-info document once), and builds the value
// nlohmann::ordered_json::parse gives for the same text: keys in the order written, a repeated
// key at its first place with its last value, non-negative integers unsigned, negative ones
// signed, the rest doubles.
//
// Returns nullopt wherever simdjson refuses the text, so that the caller asks nlohmann for the
// error message or the reading: malformed JSON, but also what nlohmann accepts and simdjson
// does not (integers beyond 64 bits, read by nlohmann as doubles; a leading byte-order mark),
// nesting deeper than 1024 and texts over kMaxQuickParseBytes.
//
// One difference, invisible to comparison and serialisation: "-0" reads as an unsigned 0
// here and a signed 0 in nlohmann (simdjson does not say whether the zero had a sign).
std::optional<nlohmann::ordered_json> ParseJsonQuickly(std::string_view text);

}  // namespace clusterd
