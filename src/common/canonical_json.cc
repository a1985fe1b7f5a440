#include "common/canonical_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "common/utf8.h"

namespace clusterd {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// ASCII bytes Go's encoding/json (HTML escaping on, the Marshal default) copies unchanged.
constexpr std::array<bool, 128> kRawAscii = [] {
  std::array<bool, 128> raw{};
  for (int c = 0x20; c < 0x80; ++c) raw[c] = true;
  for (char c : {'"', '\\', '<', '>', '&'}) raw[static_cast<unsigned char>(c)] = false;
  return raw;
}();

// A byte that starts no well-formed UTF-8 sequence (WellFormedUtf8Length 0) is where Go's
// utf8.DecodeRuneInString reports RuneError of width 1: Go then moves on by a single byte, so
// each such byte becomes its own \ufffd.
void AppendQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t pending = 0;  // start of the run of bytes not yet copied
  size_t i = 0;
  auto flush = [&] { out->append(s.data() + pending, i - pending); };
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (kRawAscii[b]) {
        ++i;
        continue;
      }
      flush();
      switch (b) {
        case '"':
        case '\\':
          out->push_back('\\');
          out->push_back(static_cast<char>(b));
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        default:  // other control characters and < > &
          out->append("\\u00");
          out->push_back(kHexDigits[b >> 4]);
          out->push_back(kHexDigits[b & 0xF]);
      }
      pending = ++i;
      continue;
    }
    const size_t length = WellFormedUtf8Length(s, i);
    if (length == 0) {
      flush();
      out->append("\\ufffd");
      pending = ++i;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8/A9) are valid JSON but end lines in JavaScript.
    if (length == 3 && b == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
      flush();
      out->append("\\u202");
      out->push_back(kHexDigits[static_cast<unsigned char>(s[i + 2]) & 0xF]);
      pending = i += 3;
      continue;
    }
    i += length;
  }
  flush();
  out->push_back('"');
}

template <typename Int>
void AppendInteger(Int v, std::string* out) {
  char buf[24];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, result.ptr);
}

// Go's float64 encoder: shortest round-trip digits, plain notation for 1e-6 <= |f| < 1e21,
// otherwise exponent notation with a two-digit negative exponent cut to one ("1e-07" ->
// "1e-7"); to_chars already writes exponents as Go's strconv does ("1e+21").
void AppendFloat(double f, std::string* out) {
  if (!std::isfinite(f)) {
    out->append("null");
    return;
  }
  const double magnitude = std::fabs(f);
  const bool exponent = magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21);
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), f,
                              exponent ? std::chars_format::scientific : std::chars_format::fixed);
  std::string_view text(buf, result.ptr - buf);
  const size_t n = text.size();
  if (exponent && n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0') {
    out->append(text.substr(0, n - 2));
    out->push_back(text[n - 1]);
    return;
  }
  out->append(text);
}

template <typename Json>
void AppendValue(const Json& value, std::string* out) {
  using nlohmann::detail::value_t;
  switch (value.type()) {
    case value_t::null:
    case value_t::discarded:
      out->append("null");
      return;
    case value_t::boolean:
      out->append(value.template get<bool>() ? "true" : "false");
      return;
    case value_t::number_integer:
      AppendInteger(value.template get<std::int64_t>(), out);
      return;
    case value_t::number_unsigned:
      AppendInteger(value.template get<std::uint64_t>(), out);
      return;
    case value_t::number_float:
      AppendFloat(value.template get<double>(), out);
      return;
    case value_t::string:
      AppendQuoted(value.template get_ref<const typename Json::string_t&>(), out);
      return;
    case value_t::binary: {
      const auto& bytes = value.template get_ref<const typename Json::binary_t&>();
      out->push_back('"');
      out->append(absl::Base64Escape(
          absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
      out->push_back('"');
      return;
    }
    case value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const auto& element : value.template get_ref<const typename Json::array_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendValue(element, out);
      }
      out->push_back(']');
      return;
    }
    case value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, element] : value.template get_ref<const typename Json::object_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendQuoted(key, out);
        out->push_back(':');
        AppendValue(element, out);
      }
      out->push_back('}');
      return;
    }
  }
}

}  // namespace

std::string CanonicalJson(const nlohmann::ordered_json& value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

std::string CanonicalJson(const nlohmann::json& value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

nlohmann::ordered_json SortedObject(const nlohmann::ordered_json& map_like) {
  using Object = nlohmann::ordered_json::object_t;
  if (!map_like.is_object()) return map_like;
  const auto& source = map_like.get_ref<const Object&>();
  std::vector<const Object::value_type*> entries;
  entries.reserve(source.size());
  for (const auto& entry : source) entries.push_back(&entry);
  // std::string compares as unsigned char, i.e. by byte value like Go's sort of map keys.
  std::sort(entries.begin(), entries.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  // Filling the underlying vector directly skips ordered_map's linear duplicate check; keys
  // are already unique.
  Object sorted;
  auto& container = static_cast<Object::Container&>(sorted);
  container.reserve(entries.size());
  for (const auto* entry : entries) container.emplace_back(entry->first, entry->second);
  return nlohmann::ordered_json(std::move(sorted));
}

std::string QuoteGoString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendQuoted(s, &out);
  return out;
}

}  // namespace clusterd
