#include "common/json_util.h"

#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/json_quick_parse.h"
#include "common/sv.h"

namespace clusterd {
namespace {

using nlohmann::ordered_json;

// This Abseil's string_view is its own type, which StrCat accepts and std::string_view is not.

// Byte offset (1-based, like the parser's) of the first bracket that opens nesting level
// kMaxJsonDepth + 1, or 0. Brackets inside strings do not count.
size_t FindExcessiveNesting(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > kMaxJsonDepth) return i + 1;
        break;
      case ']':
      case '}':
        --depth;
        break;
      default:
        break;
    }
  }
  return 0;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the tag means nothing
// to an operator.
std::string_view WithoutExceptionTag(std::string_view message) {
  if (!message.empty() && message.front() == '[') {
    if (size_t end = message.find("] "); end != std::string_view::npos) {
      return message.substr(end + 2);
    }
  }
  return message;
}

// The field `key` of `obj`, or the error every typed getter reports when it is unreachable.
absl::StatusOr<const ordered_json*> FindField(const ordered_json& obj, std::string_view key) {
  if (!obj.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read field \"", Sv(key), "\": value is ",
                                                   obj.type_name(), ", not object"));
  }
  auto it = obj.find(key);
  if (it == obj.end())
    return absl::NotFoundError(absl::StrCat("field \"", Sv(key), "\" is missing"));
  return &*it;
}

absl::Status WrongType(std::string_view key, const ordered_json& value, std::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("field \"", Sv(key), "\" is ", value.type_name(), ", want ", Sv(want)));
}

}  // namespace

absl::StatusOr<ordered_json> ParseJson(std::string_view text, std::string_view what,
                                       size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), " is ", text.size(), " bytes, over the limit of ", max_bytes));
  }
  // simdjson reads well-formed text several times faster; nlohmann reads what it refuses and
  // words the error. Its nesting limit (1024) is below kMaxJsonDepth, so a text it accepts
  // needs no nesting check.
  if (std::optional<ordered_json> quick = ParseJsonQuickly(text); quick.has_value()) {
    return *std::move(quick);
  }
  if (size_t at = FindExcessiveNesting(text); at != 0) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": JSON nested deeper than ",
                                                   kMaxJsonDepth, " levels at byte ", at));
  }
  try {
    return ordered_json::parse(text.begin(), text.end());
  } catch (const ordered_json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": malformed JSON at byte ", e.byte,
                                                   ": ", Sv(WithoutExceptionTag(e.what()))));
  } catch (const ordered_json::exception& e) {
    // E.g. out_of_range for a number literal too large for a double.
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), ": malformed JSON: ", Sv(WithoutExceptionTag(e.what()))));
  }
}

absl::StatusOr<std::string> GetString(const ordered_json& obj, std::string_view key) {
  absl::StatusOr<const ordered_json*> field = FindField(obj, key);
  if (!field.ok()) return field.status();
  if (!(*field)->is_string()) return WrongType(key, **field, "string");
  return (*field)->get_ref<const std::string&>();
}

absl::StatusOr<int64_t> GetInt64(const ordered_json& obj, std::string_view key) {
  absl::StatusOr<const ordered_json*> field = FindField(obj, key);
  if (!field.ok()) return field.status();
  const ordered_json& value = **field;
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", Sv(key), "\" is ", v, ", out of the int64 range"));
    }
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) return WrongType(key, value, "integer (got a fraction or exponent)");
  return WrongType(key, value, "integer");
}

absl::StatusOr<bool> GetBool(const ordered_json& obj, std::string_view key) {
  absl::StatusOr<const ordered_json*> field = FindField(obj, key);
  if (!field.ok()) return field.status();
  if (!(*field)->is_boolean()) return WrongType(key, **field, "boolean");
  return (*field)->get<bool>();
}

std::string StringOr(const ordered_json& obj, std::string_view key, std::string_view fallback) {
  if (!obj.is_object()) return std::string(fallback);
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::string(fallback);
  return it->get_ref<const std::string&>();
}

}  // namespace clusterd
