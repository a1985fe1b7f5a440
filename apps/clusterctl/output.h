#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace clusterctl {

// table (and wide), json, yaml, name (kind/name per object, as kubectl), jsonpath=TEMPLATE.
enum class Format { kTable, kJson, kYaml, kName, kJsonPath };
absl::StatusOr<Format> ParseFormat(const std::string& text);
// The TEMPLATE of "jsonpath=TEMPLATE" (one pair of surrounding quotes removed).
std::string JsonPathTemplate(const std::string& text);
// -o name: "kind/name" of every object of a list (its items) or of one object.
std::string RenderNames(const nlohmann::ordered_json& value);

// YAML rendering of a JSON value (block style, keys in their JSON order).
std::string ToYaml(const nlohmann::ordered_json& value);

// A column-aligned table like kubectl's: upper-case headers, two spaces between columns.
std::string RenderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows);

// kubectl-style age ("45s", "3m", "5h", "2d") of an RFC 3339 timestamp; "<unknown>" if unparsable.
std::string Age(const std::string& rfc3339, absl::Time now);

}  // namespace clusterctl
