#pragma once

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace clusterd {

// Canonical JSON ("CJ", docs: fault-pipeline.md, Conventions): the bytes Go's encoding/json
// marshaller produces. ConfigMap values and checkCode hashes are defined over these bytes, so
// nlohmann's dump() cannot be used: it writes \b and \f, leaves < > & raw and differs on
// invalid UTF-8.
//
// Rules: no whitespace; strings as QuoteGoString; integers in decimal (int64 and uint64);
// true/false/null; arrays and objects recursively. Floats are not part of any wire format
// here; they come out in Go's shortest form ("1.5", "1e+21", "1e-7"), NaN and infinities
// (which Go refuses to marshal) as null. Binary values come out as base64 strings like Go's
// []byte.

// Objects are emitted in insertion order: build records with their fields in schema order,
// and pass map-typed fields through SortedObject (or build them sorted).
std::string CanonicalJson(const nlohmann::ordered_json& value);

// std::map-backed objects: every object's keys come out sorted by byte value, as Go does for
// maps. Use only when no object in the value is a record with a declared field order.
std::string CanonicalJson(const nlohmann::json& value);

// A copy of `map_like` with its top-level keys sorted by byte value; nested values are left
// as they are. Non-objects are returned unchanged.
nlohmann::ordered_json SortedObject(const nlohmann::ordered_json& map_like);

// `s` as a Go JSON string literal, quotes included: `"` and `\` escaped with a backslash;
// \n \r \t as such; other bytes below 0x20 as \u00xx; < > & as \u003c \u003e \u0026;
// U+2028 and U+2029 as \u2028 and \u2029; every byte that does not start a valid UTF-8
// sequence as \ufffd; all other text raw.
std::string QuoteGoString(std::string_view s);

}  // namespace clusterd
