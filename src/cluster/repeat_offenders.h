#pragma once

// Repeat offenders (docs/goodput.md): per node and NPU, the faults seen over time by level, the
// mean time between them, and a verdict when a node faults `faults` times at the policy's levels
// within `window`. The policy is off by default; its action (none, cordon, taint) is carried out
// by the caller (server/goodput_bridge) through the store, once per verdict.
//
// Pure: every input carries its time. Not thread-safe: the caller serialises.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace clusterd::cluster {

struct OffenderPolicy {
  bool enabled = false;
  std::set<std::string> levels;  // empty: every level that interrupts training
  int64_t faults = 3;
  absl::Duration window = absl::Hours(24);
  std::string action = "none";  // none | cordon | taint

  bool operator==(const OffenderPolicy&) const = default;
  nlohmann::ordered_json ToJson() const;
};

// {"enabled":true,"faults":3,"windowHours":24,"levels":[...],"action":"cordon"}; unknown keys,
// wrong types and values out of range are refused with the reason.
absl::StatusOr<OffenderPolicy> ParseOffenderPolicy(std::string_view text);

// One fault of a node. The same code on several NPUs of the node within a minute (a storm, a
// board or firmware fault) is one occurrence: `npu` is the first NPU, `npus` how many.
struct NodeFaultOccurrence {
  absl::Time at;
  std::string npu;  // "" or "-1": the whole node
  std::string code;
  std::string level;
  int64_t npus = 1;
};
inline constexpr absl::Duration kOneOccurrenceSpan = absl::Minutes(1);

struct OffenderVerdict {
  std::string node;
  std::string reason;  // what a person reads: "3 faults at RestartNPU/... within 24h: ..."
  std::string action;
};

struct NodeFaultRecord {
  std::deque<NodeFaultOccurrence> recent;  // newest last, bounded
  std::map<std::string, int64_t> by_level;
  std::map<std::string, int64_t> by_npu;
  int64_t total = 0;
  bool offender = false;
  std::string reason;
  absl::Time verdict_at = absl::InfinitePast();
  std::set<std::string> active;  // npu|code of faults not cleared yet (an occurrence once)
};

struct OffenderLimits {
  size_t max_nodes = 5000;
  size_t recent_per_node = 64;
};

class RepeatOffenders {
 public:
  explicit RepeatOffenders(absl::Time observing_since, OffenderLimits limits = {})
      : since_(observing_since), limits_(limits) {}

  const OffenderPolicy& policy() const { return policy_; }
  // Re-evaluates every node under the new policy; returns the verdicts it produces.
  std::vector<OffenderVerdict> SetPolicy(OffenderPolicy policy, absl::Time now);

  // A fault appeared (or changed level) on `node`/`npu`. An occurrence of a fault still active
  // is not a new one. Returns a verdict when this makes the node an offender.
  std::optional<OffenderVerdict> ObserveFault(const std::string& node, const std::string& npu,
                                              const std::string& code, const std::string& level,
                                              absl::Time at);
  void ObserveClear(const std::string& node, const std::string& npu, const std::string& code);

  // Lifts verdicts whose faults aged out of the window (a cordon stays: an operator lifts it).
  void Expire(absl::Time now);

  const std::map<std::string, NodeFaultRecord>& nodes() const { return nodes_; }

  // {"policy":...,"observingSince":...,"items":[{node, faults, byLevel, npus:[{npu, faults,
  // mtbfSeconds}], mtbfSeconds, offender, reason, recent:[...]}]}; offenders first.
  nlohmann::ordered_json ToJson(absl::Time now) const;
  nlohmann::json Save() const;
  absl::Status Restore(const nlohmann::json& saved);

 private:
  std::optional<OffenderVerdict> Judge(const std::string& node, NodeFaultRecord& record,
                                       absl::Time now);
  bool Matches(std::string_view level) const;
  // The node's faults at the policy's levels within its window before `now`.
  std::vector<const NodeFaultOccurrence*> InWindow(const NodeFaultRecord& record,
                                                   absl::Time now) const;

  absl::Time since_;
  OffenderLimits limits_;
  OffenderPolicy policy_;
  std::map<std::string, NodeFaultRecord> nodes_;
};

}  // namespace clusterd::cluster
