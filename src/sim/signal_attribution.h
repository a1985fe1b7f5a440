#pragma once

// Which job a fault may stop, checked after a run: every recovery cycle of a job (its first
// signal after it trained) must be explained by an injected fault on NPUs the job held at the
// time, while the fault was there (a fault that lasts may stop the job again: a UCE still
// reported after its retry window) or its own cycle had just ended; one fault starts at most one
// hot switch; and a fault the scenario expects a reaction to must have signalled every job that
// held its NPUs when it was injected. A signal
// nothing explains is a job stopped by a fault it never had: the run fails with a line naming the
// job. Pure: the runner records what happened, this judges it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace clusterd::sim {

// When a job held a fault's NPUs: from `since` (the injection for the holders then, or when
// its pod was placed there later) until it left them (nullopt: it still holds them).
struct Touch {
  absl::Time since;
  std::optional<absl::Time> until;
};

struct AttributedFault {
  std::string label;  // as the report shows it
  absl::Time injected;
  // The jobs the fault touched: the holders of its NPUs at injection, and jobs placed on its
  // NPUs later while it lasted.
  std::map<std::string, Touch> touched;
  // When it stopped being present: its recover was injected, or at once for a notice
  // (nullopt: it is still there).
  std::optional<absl::Time> cleared;
  // When the job it hit trained again (nullopt: not yet, or it hit no job).
  std::optional<absl::Time> handled;
  // The scenario expects a reaction (`expect`): every job holding its NPUs at injection must be
  // signalled.
  bool must_signal = false;
};

struct ReceivedSignal {
  absl::Time at;
  std::string type;  // signalType
  std::vector<std::string> actions;
  // The job trained since its previous signal (or this is its first): a new cycle starts here.
  // The later signals of a cycle belong to the fault that started it.
  bool starts_cycle = true;
};

struct AttributionOptions {
  // A signal this long after the fault's job trained again, after the fault cleared or after
  // the job left its NPUs still belongs to the cycle that was going on.
  absl::Duration trailing = absl::Seconds(2);
};

// The violations, one line each (empty: every signal is explained). `signals` holds every
// non-keep-alive signal of each job, in order.
std::vector<std::string> CheckSignalAttribution(
    const std::vector<AttributedFault>& faults,
    const std::map<std::string, std::vector<ReceivedSignal>>& signals, absl::Time run_start,
    const AttributionOptions& options = {});

}  // namespace clusterd::sim
