// Differential target for the quick JSON reader (common/json_quick_parse.h): whatever text
// simdjson accepts must read exactly as nlohmann reads it (same value, same serialisation,
// same number kinds apart from the sign of an integer zero), and ParseJson must give that
// value too. Texts simdjson refuses go to nlohmann in ParseJson: the target runs that path as
// well, so a text both refuse still exercises the error wording. (simdjson is a Debian library
// built without coverage: the fuzzer is guided by the reading code around it and by nlohmann.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "common/json_quick_parse.h"
#include "common/json_util.h"
#include "fuzz_util.h"

using namespace clusterd;
using nlohmann::ordered_json;

namespace {

// Equal by value and by the kind of every number, an integer zero's sign aside.
bool SameReading(const ordered_json& quick, const ordered_json& slow) {
  if (quick.type() != slow.type()) {
    return quick.is_number_integer() && slow.is_number_integer() && quick == 0 && slow == 0;
  }
  if (quick.is_object()) {
    if (quick.size() != slow.size()) return false;
    auto a = quick.begin();
    for (auto b = slow.begin(); b != slow.end(); ++a, ++b) {
      if (a.key() != b.key() || !SameReading(a.value(), b.value())) return false;
    }
    return true;
  }
  if (quick.is_array()) {
    if (quick.size() != slow.size()) return false;
    for (size_t i = 0; i < quick.size(); ++i) {
      if (!SameReading(quick[i], slow[i])) return false;
    }
    return true;
  }
  return quick == slow;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  std::optional<ordered_json> quick = ParseJsonQuickly(text);
  absl::StatusOr<ordered_json> parsed = ParseJson(text, "fuzz input", 1 << 24);
  if (!quick.has_value()) return 0;
  const ordered_json slow = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (slow.is_discarded() || !SameReading(*quick, slow) || quick->dump() != slow.dump() ||
      !parsed.ok() || !SameReading(*parsed, slow)) {
    std::abort();  // simdjson accepted a text nlohmann refuses, or read it differently
  }
  return 0;
}
