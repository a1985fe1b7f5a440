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

// Whether `fault` explains a signal of `job` at `at`: it touched the job by then, and its cycle
// was still going (or had just ended).
bool Explains(const AttributedFault& fault, const std::string& job, absl::Time at,
              const AttributionOptions& options) {
  auto touched = fault.touched.find(job);
  if (touched == fault.touched.end() || touched->second > at) return false;
  return !fault.handled.has_value() || at <= *fault.handled + options.trailing;
}

}  // namespace

std::vector<std::string> CheckSignalAttribution(
    const std::vector<AttributedFault>& faults,
    const std::map<std::string, std::vector<ReceivedSignal>>& signals, absl::Time run_start,
    const AttributionOptions& options) {
  std::vector<std::string> violations;
  std::vector<int> hot_switches(faults.size(), 0);
  for (const auto& [job, received] : signals) {
    bool reported = false;  // one line per job for unexplained signals: the first says enough
    for (const ReceivedSignal& s : received) {
      std::vector<size_t> explaining;
      for (size_t i = 0; i < faults.size(); ++i) {
        if (Explains(faults[i], job, s.at, options)) explaining.push_back(i);
      }
      if (explaining.empty()) {
        if (!reported) {
          violations.push_back(absl::StrCat("job ", job, " was signalled (", s.type, " at ",
                                            At(s.at, run_start),
                                            ") but no injected fault touched its NPUs then"));
        }
        reported = true;
        continue;
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
    for (const auto& [job, since] : fault.touched) {
      if (since != fault.injected) continue;  // placed there later: not a holder at injection
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
