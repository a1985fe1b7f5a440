#include "sim/signal_attribution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clusterd::sim {
namespace {

// Wire spellings of the Recover service (recovery-protocol.md §5): a hot switch starts with a
// `hot-switch` signal carrying the action `hot switch`.
constexpr char kSignalHotSwitch[] = "hot-switch";
constexpr char kActionHotSwitch[] = "hot switch";

bool BeginsHotSwitch(const ReceivedSignal& s) {
  return s.type == kSignalHotSwitch &&
         std::find(s.actions.begin(), s.actions.end(), kActionHotSwitch) != s.actions.end();
}

std::string At(absl::Time t, absl::Time start) {
  return absl::StrFormat("%.1fs", absl::ToDoubleSeconds(t - start));
}

bool Within(absl::Time at, const std::optional<absl::Time>& end, absl::Duration trailing) {
  return !end.has_value() || at <= *end + trailing;
}

// Whether `fault` explains a cycle of `job` starting at `at`: the job held its NPUs then (or had
// just left them), and the fault was still there, or its own cycle had just ended.
bool Explains(const AttributedFault& fault, const std::string& job, absl::Time at,
              const AttributionOptions& options) {
  auto touched = fault.touched.find(job);
  if (touched == fault.touched.end() || touched->second.since > at) return false;
  if (!Within(at, touched->second.until, options.trailing)) return false;
  return Within(at, fault.cleared, options.trailing) ||
         (fault.handled.has_value() && at <= *fault.handled + options.trailing);
}

}  // namespace

std::vector<std::string> CheckSignalAttribution(
    const std::vector<AttributedFault>& faults,
    const std::map<std::string, std::vector<ReceivedSignal>>& signals, absl::Time run_start,
    const AttributionOptions& options) {
  std::vector<std::string> violations;
  std::vector<int> hot_switches(faults.size(), 0);
  for (const auto& [job, received] : signals) {
    bool reported = false;  // one line per job for unexplained cycles: the first says enough
    std::vector<size_t> explaining;  // the faults that explain the current cycle
    for (const ReceivedSignal& s : received) {
      if (s.starts_cycle) {
        explaining.clear();
        for (size_t i = 0; i < faults.size(); ++i) {
          if (Explains(faults[i], job, s.at, options)) explaining.push_back(i);
        }
        if (explaining.empty() && !reported) {
          violations.push_back(absl::StrCat("job ", job, " was signalled (", s.type, " at ",
                                            At(s.at, run_start),
                                            ") but no injected fault touched its NPUs then"));
          reported = true;
        }
      }
      if (!BeginsHotSwitch(s)) continue;
      for (size_t i : explaining) {
        if (++hot_switches[i] == 2) {
          violations.push_back(absl::StrCat(faults[i].label, " started a second hot switch of job ",
                                            job, " at ", At(s.at, run_start),
                                            " (one fault, one switch)"));
        }
      }
    }
  }
  for (const AttributedFault& fault : faults) {
    if (!fault.must_signal) continue;
    for (const auto& [job, touch] : fault.touched) {
      if (touch.since != fault.injected) continue;  // placed there later: not owed a signal
      auto it = signals.find(job);
      const bool signalled =
          it != signals.end() &&
          std::any_of(it->second.begin(), it->second.end(),
                      [&](const ReceivedSignal& s) { return s.at >= fault.injected; });
      if (!signalled) {
        violations.push_back(absl::StrCat("job ", job, " held the NPUs of ", fault.label,
                                          " (injected at ", At(fault.injected, run_start),
                                          ") but was never signalled"));
      }
    }
  }
  return violations;
}

}  // namespace clusterd::sim
