#pragma once

// Helpers shared by the fuzz targets (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/log.h"
#include "nlohmann/json.hpp"

namespace clusterd::fuzz {

// Turns clusterd's log off (every refused input logs a line; the fuzzer's own output is what
// matters), unless CLUSTERD_FUZZ_LOG is set.
inline void QuietLogs() {
  if (std::getenv("CLUSTERD_FUZZ_LOG") == nullptr) (void)ConfigureLogging("off", LogFormat::kText);
}

// A file of data/ (the shipped catalogs); empty when missing.
inline std::string ReadDataFile(std::string_view name) {
  std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/" + std::string(name));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// The parsers of the node-side ConfigMaps verify a CheckCode over the decoded record, which a
// mutated input almost never carries: left alone, the fuzzer would stop at the hash. `Resign`
// re-writes the top-level "CheckCode" of `text` to the value the parser asked for (the parser's
// FailedPrecondition text ends in "does not match <want>"), so that what follows the check in
// the callers (intake, fault engines) sees fuzzed content too. Returns `text` unchanged when it
// is not a JSON object or parses already; `parse` maps a text to the parser's status.
template <typename ParseFn>
std::string Resign(std::string_view text, ParseFn parse) {
  absl::Status status = parse(text);
  if (status.code() != absl::StatusCode::kFailedPrecondition) return std::string(text);
  nlohmann::ordered_json json =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::string(text);
  constexpr absl::string_view kMarker = "does not match ";
  if (status.message().find(kMarker) == absl::string_view::npos) {
    json["CheckCode"] = "0";  // empty or absent: any non-empty value gets the wanted one named
    status = parse(json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
  absl::string_view message = status.message();
  size_t at = message.find(kMarker);
  if (at == absl::string_view::npos) return std::string(text);
  json["CheckCode"] = std::string(message.substr(at + kMarker.size()));
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace clusterd::fuzz
