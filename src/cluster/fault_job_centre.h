#pragma once

// The job centre of fault-pipeline.md §7.5: RelationFault, JobFaultRank, FaultCodeEvent. Pure
// functions of one job, the processed records of its nodes, the stage's memory and `now`.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/fault_job_faults.h"
#include "cluster/fault_job_index.h"
#include "cluster/fault_stages.h"
#include "cluster/fault_types.h"

namespace clusterd::cluster {

// ---- configuration (relationFaultCustomization.json, faultDuration.json) ----

inline constexpr std::string_view kStrategySeparate = "Separate";
inline constexpr std::string_view kStrategySubHealth = "SubHealth";
// The pod label the relation strategy is written to.
inline constexpr std::string_view kLabelFaultType = "fault-type";

struct RelationRule {
  std::string trigger;
  std::vector<std::string> relations;
  std::string strategy;  // Separate, SubHealth (anything else fires without effect)
  bool operator==(const RelationRule&) const = default;
};
struct RelationConfig {
  std::vector<RelationRule> rules;
  std::map<std::string, int64_t> timeout_s;  // faultDuration.json: code -> TimeOutInterval
  std::set<std::string> triggers;            // union of TriggerFault
  std::set<std::string> relations;           // union of RelationFaults
  bool operator==(const RelationConfig&) const = default;
};
// Parses the two files' text; an unparsable file yields no rules / no time-outs (as the original)
// and the status says why. Entries with an empty code or a negative interval are dropped.
RelationConfig ParseRelationConfig(std::string_view rules_json, std::string_view durations_json,
                                   std::vector<std::string>* problems);

// ---- what the job centre reads of one node ----

struct JobNodeView {
  const DeviceRecord* device = nullptr;        // processed; null: no device-info CM
  const SwitchRecord* switch_record = nullptr;  // processed
  const NodeRecord* node_record = nullptr;      // processed
  bool node_ready = true;                       // Kubernetes Node exists and Ready=True
  const std::vector<NpuFault>* custom_hidden = nullptr;
  const std::vector<InPlaceHidden>* in_place_hidden = nullptr;
  const std::vector<NpuFault>* force_added = nullptr;
};
using NodeViewFn = std::function<JobNodeView(const std::string& node)>;

// ---- 1. RelationFault ----

struct RelationFault {
  std::string id;    // <node>-<NPU>-<code key>
  std::string node;
  std::string npu;   // "FF" for a switch fault
  std::string code;  // device code, or the switch assembled code
  bool is_switch = false;
  std::string level;
  int64_t received_ms = 0;
  std::string strategy;  // "" until matched or defaulted
  bool operator==(const RelationFault&) const = default;
};
struct RelationState {
  std::optional<int64_t> first_sight_ms;
  std::map<std::string, RelationFault> tracked;
  std::set<std::string> seen;  // timed out while present; not taken in again until it vanishes
  std::vector<std::pair<RelationFault, int64_t>> vanished;  // with expiry (ms)
  std::vector<int64_t> deferred_cqe;                         // CQE receive times (super-pod jobs)
  std::set<std::pair<std::string, int64_t>> deferred_seen;   // (id, time) already deferred
  std::map<std::string, std::string> pod_labels;             // pod UID -> label value written
  bool operator==(const RelationState&) const = default;
};
struct PodLabelPatch {
  std::string pod_uid;
  std::string value;  // Separate / SubHealth
  bool operator==(const PodLabelPatch&) const = default;
};
struct RelationOutput {
  std::vector<RelationFault> faults;            // faults with a strategy this cycle
  std::map<std::string, std::string> node_strategy;  // node -> Separate / SubHealth
  std::vector<PodLabelPatch> patches;
  // A tracked fault times out, or this cycle's output has to end (one cycle, about 1 s).
  std::optional<int64_t> next_due_ms;
  bool operator==(const RelationOutput&) const = default;
};
// One job-centre cycle of RelationFault for `job` (needs a non-empty rank table).
RelationOutput RunRelationFault(const FaultJob& job, const RelationConfig& config,
                                const NodeViewFn& nodes, RelationState& state, int64_t now_ms);

// ---- 2. JobFaultRank ----

// Business-plane step-retry reports of the job, by (node, physical id).
using RetryBook = std::map<std::pair<std::string, int64_t>, RetryReport>;

struct JobFaultRankResult {
  JobFaultRanks faults;
  std::optional<int64_t> next_due_ms;  // a synthetic retry rank / DoStepRetry expires
};
JobFaultRankResult ComputeJobFaultRanks(const FaultJob& job, const NodeViewFn& nodes,
                                        const RelationOutput& relation, const RetryBook& retry,
                                        int64_t now_ms);

// ---- 3. FaultCodeEvent ----

struct FaultCodeEvent {
  std::string fault_code;
  int64_t timestamp_ms = 0;
  std::string node_name;
  std::string device_id;
  std::string fault_level;
  bool operator==(const FaultCodeEvent&) const = default;
};
// Returns the events to append when the job's FaultDevice digest differs from `*digest` (which
// is updated); empty otherwise, and for jobs without fault ranks.
std::vector<FaultCodeEvent> FaultCodeEvents(const JobFaultRanks& faults, std::string* digest,
                                            int64_t now_ms);

}  // namespace clusterd::cluster
