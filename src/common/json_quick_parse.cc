#include "common/json_quick_parse.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "simdjson.h"

namespace clusterd {
namespace {

using nlohmann::ordered_json;

// Texts up to this size go through one parser kept per thread; its buffers stay at about 15
// times the largest such text (1 MiB), so the many threads that parse small documents keep
// little. Larger texts get a parser of their own, freed when they are read.
constexpr size_t kThreadParserBytes = 64 << 10;

// Objects with more members than this find repeated keys through a hash map rather than by
// comparing with every member already placed.
constexpr size_t kLinearKeySearchMembers = 16;

ordered_json Build(simdjson::dom::element element);

// nlohmann's reading of a repeated key: the member keeps its first place and takes the last
// value.
ordered_json BuildObject(simdjson::dom::object object) {
  ordered_json out = ordered_json::object();
  auto& members = out.get_ref<ordered_json::object_t&>();
  // Reserving first matters: ordered_map's elements have const keys, so each growth of its
  // vector would copy every member built so far, values and all, instead of moving them.
  const size_t size = object.size();
  members.reserve(size);
  if (size <= kLinearKeySearchMembers) {
    for (simdjson::dom::key_value_pair member : object) {
      auto same = std::find_if(members.begin(), members.end(),
                               [&](const auto& placed) { return placed.first == member.key; });
      if (same != members.end()) {
        same->second = Build(member.value);
      } else {
        members.emplace_back(std::string(member.key), Build(member.value));
      }
    }
    return out;
  }
  absl::flat_hash_map<std::string_view, size_t> place;
  place.reserve(size);
  for (simdjson::dom::key_value_pair member : object) {
    auto [at, inserted] = place.try_emplace(member.key, members.size());
    if (!inserted) {
      (members.begin() + static_cast<std::ptrdiff_t>(at->second))->second = Build(member.value);
    } else {
      members.emplace_back(std::string(member.key), Build(member.value));
    }
  }
  return out;
}

ordered_json BuildArray(simdjson::dom::array array) {
  ordered_json out = ordered_json::array();
  auto& elements = out.get_ref<ordered_json::array_t&>();
  elements.reserve(array.size());
  for (simdjson::dom::element element : array) elements.push_back(Build(element));
  return out;
}

ordered_json Build(simdjson::dom::element element) {
  using Type = simdjson::dom::element_type;
  switch (element.type()) {
    case Type::OBJECT:
      return BuildObject(element.get_object().value_unsafe());
    case Type::ARRAY:
      return BuildArray(element.get_array().value_unsafe());
    case Type::STRING:
      return ordered_json(std::string(element.get_string().value_unsafe()));
    case Type::INT64: {
      // nlohmann keeps a non-negative integer as unsigned; simdjson says int64 when it fits.
      const int64_t value = element.get_int64().value_unsafe();
      if (value >= 0) return ordered_json(static_cast<uint64_t>(value));
      return ordered_json(value);
    }
    case Type::UINT64:
      return ordered_json(element.get_uint64().value_unsafe());
    case Type::DOUBLE:
      return ordered_json(element.get_double().value_unsafe());
    case Type::BOOL:
      return ordered_json(element.get_bool().value_unsafe());
    case Type::NULL_VALUE:
      return ordered_json(nullptr);
  }
  return ordered_json(nullptr);  // every element type is handled above
}

std::optional<ordered_json> ParseWith(simdjson::dom::parser& parser, std::string_view text) {
  // The parser copies the text into its own padded buffer (simdjson reads past the end).
  simdjson::simdjson_result<simdjson::dom::element> root =
      parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true);
  if (root.error() != simdjson::SUCCESS) return std::nullopt;
  return Build(root.value_unsafe());
}

}  // namespace

std::optional<ordered_json> ParseJsonQuickly(std::string_view text) {
  if (text.size() > kMaxQuickParseBytes) return std::nullopt;
  if (text.size() <= kThreadParserBytes) {
    thread_local simdjson::dom::parser parser;
    return ParseWith(parser, text);
  }
  simdjson::dom::parser parser;
  return ParseWith(parser, text);
}

}  // namespace clusterd
