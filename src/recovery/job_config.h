#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace clusterd::recovery {

using StringMap = std::map<std::string, std::string>;

// A job's recovery configuration (§9.1): a snapshot of the PodGroup's labels and two strategy
// annotations, taken at Init and kept until the job is deleted (quirk 12). Only the sub-health
// strategy may change later, in memory (hot-switch downgrade, §8.6, §14).
struct JobConfig {
  bool process_recover_enabled = false;  // label process-recover-enable == "on"
  // Configured strategies, de-duplicated and sorted by §5.3 priority; always contains "exit".
  std::vector<std::string> strategies;
  std::string sub_health_strategy;  // "graceExit", "hotSwitch", "ignore" or ""
  std::string framework;            // label framework
  bool platform_mode = false;       // annotation ProcessRecoverStrategy present

  bool Has(std::string_view strategy) const;
  bool HotSwitch() const;
  bool GraceExit() const;
  bool JobRescheduling() const;  // "job-rescheduling" configured
  bool PodRescheduling() const;  // "pod-rescheduling" configured
  bool operator==(const JobConfig&) const = default;
};

// Builds the snapshot from the PodGroup's labels and annotations (§9.1): recover-strategy items
// are split on commas and not trimmed, unknown names are dropped, job-/pod-rescheduling come
// from labels, "exit" is always added.
JobConfig BuildJobConfig(const StringMap& labels, const StringMap& annotations);

// §5.3 priority order: retry 1 ... exit 6; names without a priority sort after all of them,
// in name order (the reference leaves their order undefined).
void SortStrategies(std::vector<std::string>& strategies);

// Init admits a job when process recovery is on or the sub-health strategy is hotSwitch
// (§2.3 Init step 4).
bool InitAdmits(const JobConfig& config);
// The 403 text of a refused Init, misspelling and trailing <nil> included.
std::string InitRefusalInfo(std::string_view job_id);
// The 0 text of a successful Init.
std::string InitSuccessInfo(std::string_view job_id);

// §9.1 / §9.8: the live gate of the recover-in-place bookkeeping. The current label
// process-recover-enable must be "on" and the current recover-strategy annotation, with all
// spaces removed, must contain "recover-in-place".
bool InPlaceGateOpen(const StringMap& live_labels, const StringMap& live_annotations);

// A value of a string map, or "" when absent.
std::string ValueOr(const StringMap& map, std::string_view key, std::string_view fallback = "");

}  // namespace clusterd::recovery
