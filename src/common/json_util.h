#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd {

// Deepest array/object nesting ParseJson accepts; the same limit as Go's encoding/json.
// Everything that walks parsed values (CanonicalJson among them) recurses, so the bound keeps
// hostile input from exhausting the stack.
inline constexpr int kMaxJsonDepth = 10000;

// Parses `text`, naming it `what` in errors (e.g. "configmap kube-system/mindx-dl-deviceinfo-n1
// DeviceInfoCfg"). Never throws: malformed text, nesting deeper than kMaxJsonDepth and input
// longer than `max_bytes` are InvalidArgument errors; the malformed case names the parser's
// byte position. Object key order is kept as written.
absl::StatusOr<nlohmann::ordered_json> ParseJson(std::string_view text, std::string_view what,
                                                 size_t max_bytes = 1 << 20);

// Typed field access that never throws. A missing key is NotFound; `obj` not being an object,
// or the field having another JSON type, is InvalidArgument. Messages name the key; callers
// add the object with Annotate.
absl::StatusOr<std::string> GetString(const nlohmann::ordered_json& obj, std::string_view key);
// Accepts JSON integers in the int64 range only: like Go, 1.0 and 1e3 are not integers.
absl::StatusOr<int64_t> GetInt64(const nlohmann::ordered_json& obj, std::string_view key);
absl::StatusOr<bool> GetBool(const nlohmann::ordered_json& obj, std::string_view key);

// The string at `key`, or `fallback` when `obj` is not an object or the field is missing or
// not a string.
std::string StringOr(const nlohmann::ordered_json& obj, std::string_view key,
                     std::string_view fallback);

}  // namespace clusterd
