#pragma once

// Replay of a recorded fault trace (data/infinitehbd-trace/fault_trace.json: fault_start and
// fault_end events of 400 GPU servers over 348 days) onto the simulated cluster. Each episode
// (a start and its end on one trace node) becomes a scenario fault: trace nodes are mapped onto
// simulated nodes in order of first appearance, GPU-cluster fault classes onto the NPU fault
// codes with the same handling, and trace days onto seconds of the timeline.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scenario.h"

namespace clusterd::sim {

// One fault episode of the trace: its start and (if the trace has one) its end.
struct TraceEpisode {
  std::string node_id;
  double start_day = 0;
  std::optional<double> end_day;
  std::string level;  // fault_type.Level, e.g. "Hardware Failure"
  std::string cls;    // fault_type.Class, e.g. "GPU"
  std::string desc;   // fault_type.Desc, e.g. "GPU DBE(Double Bit ECC) > Threshold"
};

struct TraceParseStats {
  int events = 0;
  int unmatched_ends = 0;  // a fault_end without an open start of the same type on that node
};

// Parses the trace JSON (an array of {node_id, event_time, event_type, fault_type}). Episodes
// are returned in order of their start; a malformed event is an error naming its index.
absl::StatusOr<std::vector<TraceEpisode>> ParseTrace(std::string_view text,
                                                     TraceParseStats* stats = nullptr);

// What a trace fault becomes on an NPU cluster: a scenario fault kind and code.
struct TraceFaultMapping {
  std::string kind;  // chip | network | node
  std::string code;
  std::string label;  // short, for the report
};
// The mapping of one trace class; nullopt for faults with no NPU-cluster counterpart the
// simulator can inject (software failures, "Unknown Error", stress-test failures).
std::optional<TraceFaultMapping> MapTraceFault(const TraceEpisode& episode);

struct ReplayPlan {
  std::vector<FaultSpec> faults;
  int episodes = 0;                    // in the trace
  int played = 0;                      // turned into faults
  std::map<std::string, int> skipped;  // reason -> count
  double first_day = 0, last_day = 0;  // trace time covered by the played episodes
};

// Turns the episodes from `spec.from_day` on into at most `spec.max_events` faults on
// `cluster`: at_s = start_s + (day − first played day) / days_per_second; the fault clears after
// the episode's length (at least 1 s; open episodes never clear). Chip and network faults hit an
// NPU chosen from the trace node id.
ReplayPlan PlanReplay(const std::vector<TraceEpisode>& episodes, const ReplaySpec& spec,
                      const ClusterSpec& cluster);

// Loads `scenario->replay->trace` (absolute, else relative to the scenario file's directory,
// else to `data_dir`), plans the replay and appends its faults to the scenario. Errors read
// "FILE:LINE: message" with the line of the replay section. No-op without a replay section.
absl::StatusOr<ReplayPlan> ExpandReplay(Scenario* scenario, std::string_view data_dir);

}  // namespace clusterd::sim
