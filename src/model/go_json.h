#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace clusterd::model::go_json {

// Decoding into a fixed schema the way Go's encoding/json does it, which is how the original
// readers (and the checkCode verification of §2) see a ConfigMap value: a missing or null
// field keeps its zero value, unknown fields are ignored, a field of the wrong JSON type (or a
// number that does not fit) is an error naming the field. Go also matches field names
// case-insensitively; these helpers do not (no writer relies on it).
using Json = nlohmann::ordered_json;

// `value` must be an object (null is accepted as "all fields zero" when allow_null).
absl::Status ExpectObject(const Json& value, std::string_view what, bool allow_null = false);

absl::Status ReadString(const Json& obj, std::string_view key, std::string* out);
absl::Status ReadBool(const Json& obj, std::string_view key, bool* out);
absl::Status ReadInt64(const Json& obj, std::string_view key, int64_t* out);
absl::Status ReadInt32(const Json& obj, std::string_view key, int32_t* out);
absl::Status ReadUint32(const Json& obj, std::string_view key, uint32_t* out);
// `*was_null` (optional) reports a null or missing field, which Go keeps as a nil map/slice
// and re-serialises as `null`.
absl::Status ReadStringMap(const Json& obj, std::string_view key,
                           std::map<std::string, std::string>* out, bool* was_null = nullptr);
absl::Status ReadStringArray(const Json& obj, std::string_view key, std::vector<std::string>* out,
                             bool* was_null = nullptr);
absl::Status ReadInt64Array(const Json& obj, std::string_view key, std::vector<int64_t>* out,
                            bool* was_null = nullptr);

// Integer conversion of a JSON value with Go's rules (no floats, range-checked).
absl::Status ToInt64(const Json& value, std::string_view what, int64_t* out);

}  // namespace clusterd::model::go_json
