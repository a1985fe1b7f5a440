#pragma once

// Which job a fault may stop, checked after a run: every signal a job's recovery client received
// must be explained by an injected fault that touched the job, and a fault the scenario expects a
// reaction to must have signalled every job that held its NPUs when it was injected. A signal
// nothing explains is a job stopped by a fault it never had: the run fails with a line naming the
// job. Pure: the runner records what happened, this judges it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace clusterd::sim {

struct AttributedFault {
  std::string label;  // as the report shows it
  absl::Time injected;
  // The jobs the fault touched and since when: the jobs holding its NPUs at injection (at the
  // injection time), and jobs placed on its NPUs later while it lasted (at that time).
  std::map<std::string, absl::Time> touched;
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
};

struct AttributionOptions {
  // A signal this long after the fault's job trained again still belongs to its cycle.
  absl::Duration trailing = absl::Seconds(2);
};

// The violations, one line each (empty: every signal is explained). `signals` holds every
// non-keep-alive signal of each job, in order.
std::vector<std::string> CheckSignalAttribution(
    const std::vector<AttributedFault>& faults,
    const std::map<std::string, std::vector<ReceivedSignal>>& signals, absl::Time run_start,
    const AttributionOptions& options = {});

}  // namespace clusterd::sim
