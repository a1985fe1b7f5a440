#pragma once

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace clusterd {

// Lower-case hex SHA-256 of `bytes`, 64 characters, no prefix.
std::string Sha256Hex(std::string_view bytes);

// The checkCode of a ConfigMap record (fault-pipeline.md §2): Sha256Hex(CanonicalJson(record)).
// `record` must be in canonical shape (schema field order, map keys sorted, null vs []/{} as
// the writer means them): the hash covers the canonical bytes, not any stored text.
std::string CheckCode(const nlohmann::ordered_json& record);

}  // namespace clusterd
