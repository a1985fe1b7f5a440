#pragma once

// The JSONPath templates of `kubectl -o jsonpath=...`, the part people use (clusterctl
// -o jsonpath): literal text with {expressions}; a path of .field, ['field'], [N] (negative from
// the end) and [*] from the current object (or $ for the root, @ for the current one); quoted
// literals {"\n"} ({"\t"}, {"\\"}); {range PATH}...{end} repeating its body for every value.
// Several values of one path are joined by a space; strings print as they are, other values as
// compact JSON. A path that matches nothing prints nothing, as kubectl with
// --allow-missing-template-keys (its default).
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::client {

// InvalidArgument, with the position, for a template that does not parse.
absl::StatusOr<std::string> RenderJsonPath(std::string_view templ,
                                           const nlohmann::ordered_json& root);

}  // namespace clusterd::client
