#include "agent/fault_script.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "agent/event_json.h"
#include "common/json_util.h"

namespace clusterd::agent {

FaultScript ParseFaultScript(std::string_view text, int num_npus) {
  FaultScript script;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line.front() == '#') continue;
    auto json = ParseJson(std::string_view(line.data(), line.size()), "event", 64 * 1024);
    if (!json.ok()) {
      script.errors.push_back({number, std::string(json.status().message())});
      continue;
    }
    auto event = ParseEventJson(*json, num_npus);
    if (!event.ok()) {
      script.errors.push_back({number, std::string(event.status().message())});
      continue;
    }
    script.events.push_back(*std::move(event));
  }
  std::stable_sort(
      script.events.begin(), script.events.end(),
      [](const ScheduledEvent& a, const ScheduledEvent& b) { return a.at_ms < b.at_ms; });
  return script;
}

}  // namespace clusterd::agent
