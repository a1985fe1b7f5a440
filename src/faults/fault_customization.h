#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "faults/hex_code.h"
#include "faults/policy_issue.h"
#include "model/fault_level.h"

namespace clusterd::faults {

using model::FaultLevel;

// faultCustomization.json GraceTolerance (§5.1), seconds.
struct GraceTolerance {
  static constexpr int64_t kDefaultWaitProcessReadCm = 30;
  static constexpr int64_t kDefaultWaitDeviceReset = 150;
  static constexpr int64_t kDefaultWaitFaultSelfHealing = 15;
  int64_t wait_process_read_cm_s = kDefaultWaitProcessReadCm;
  int64_t wait_device_reset_s = kDefaultWaitDeviceReset;
  int64_t wait_fault_self_healing_s = kDefaultWaitFaultSelfHealing;
  bool operator==(const GraceTolerance&) const = default;
};

// A FaultFrequency entry as it applies to one code (§5.2).
struct FrequencyPolicy {
  std::string spelling;  // lower-case EventId as configured
  int64_t time_window_ms = 0;
  int64_t times = 0;
  FaultLevel handling = FaultLevel::kNotHandleFault;
  std::optional<int64_t> release_window_ms;  // nullopt: "unset", never released
  bool operator==(const FrequencyPolicy&) const = default;
};

// A FaultDuration entry as it applies to one code (§5.3).
struct DurationPolicy {
  std::string spelling;
  int64_t fault_timeout_ms = 0;
  int64_t recover_timeout_ms = 0;
  FaultLevel handling = FaultLevel::kNotHandleFault;
  bool operator==(const DurationPolicy&) const = default;
};

// The validated customisation: per-code policies after the §5.2/§5.3 rules (invalid entries
// dropped, first valid occurrence of an id wins). Immutable after Parse.
class FaultCustomization {
 public:
  // Format errors (wrong JSON types anywhere in the known schema) fail the whole document; the
  // caller then loads the shipped file (§5 "format error -> defaults"). Range errors drop the
  // entry or default the field and are reported in `issues`.
  static absl::StatusOr<FaultCustomization> Parse(std::string_view text, PolicyIssues* issues);

  const GraceTolerance& grace_tolerance() const { return grace_; }
  const FrequencyPolicy* Frequency(FaultCode code) const;
  const DurationPolicy* Duration(FaultCode code) const;
  const absl::flat_hash_map<FaultCode, FrequencyPolicy>& frequencies() const { return frequency_; }
  const absl::flat_hash_map<FaultCode, DurationPolicy>& durations() const { return duration_; }
  // Largest ReleaseTimeWindow set by any frequency entry: the autofill release delay (§5.5).
  std::optional<int64_t> MaxReleaseWindowMs() const { return max_release_ms_; }
  // The configured spelling of `code` in this file (lower-case), if any.
  const std::string* Spelling(FaultCode code) const;

 private:
  GraceTolerance grace_;
  absl::flat_hash_map<FaultCode, FrequencyPolicy> frequency_;
  absl::flat_hash_map<FaultCode, DurationPolicy> duration_;
  std::optional<int64_t> max_release_ms_;
};

}  // namespace clusterd::faults
