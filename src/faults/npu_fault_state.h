#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "faults/duration_tracker.h"
#include "faults/fault_event.h"
#include "faults/frequency_tracker.h"
#include "model/fault_level.h"

namespace clusterd::faults {

// Parameter plane of a code: chip (incl. hyper-plane) or network (§3.3).
enum class Plane : uint8_t { kChip = 0, kNetwork = 1 };
inline Plane PlaneOf(FaultCode code) {
  return IsNetworkCode(code) ? Plane::kNetwork : Plane::kChip;
}

enum class UpgradeType : uint8_t { kFrequency, kDuration, kAutofill };
std::string_view UpgradeTypeName(UpgradeType type);

// A current code of an NPU.
struct ActiveCode {
  FaultCode code = 0;
  int64_t first_seen_ms = 0;
  // Reported in this cycle's write, then dropped at the start of the next cycle: notices
  // ("once") and codes that occurred and recovered within one cycle.
  bool remove_next_cycle = false;
  bool added_this_cycle = false;
};

// An escalation reason (UpgradeFaultReason entry).
struct EscalationReason {
  FaultCode code = 0;  // unused for autofill
  UpgradeType type = UpgradeType::kFrequency;
  model::FaultLevel level = model::FaultLevel::kNotHandleFault;
  int64_t upgrade_time_ms = 0;
  Plane plane = Plane::kChip;
};

// Everything the engine knows about one NPU. Plain data owned by DeviceFaultEngine.
struct NpuFaultState {
  int id = 0;
  std::string name;

  std::vector<ActiveCode> codes[2];  // per Plane, in arrival order
  // Last driver severity per code; absent = unknown.
  absl::flat_hash_map<FaultCode, uint32_t> severity;
  std::vector<EscalationReason> reasons;
  // In the ManuallySeparateNPU set, and whether that has been written to the ConfigMap.
  bool manual = false;
  bool manual_published = false;

  absl::flat_hash_map<FaultCode, FrequencyTracker> frequency;
  absl::flat_hash_map<FaultCode, DurationTracker> duration;
  std::vector<FaultCode> clear_frequency_next_cycle;
  // Codes whose frequency history changed in this cycle: only they (and codes with a frequency
  // reason) need the §5.5 evaluation.
  std::vector<FaultCode> frequency_touched;

  std::vector<NpuFaultEvent> pending;   // this cycle's intake
  std::vector<NpuFaultEvent> held_bus;  // AIC/AIV events held by the 80E01801 rule
  int64_t last_hbm_fault_ms = -1;       // last non-recover 80E01801 occurrence

  // Graceful tolerance: a hot reset of this NPU's ring is in progress (forced Unhealthy and
  // NetworkUnhealthy, listed in -Recovering), or its reset failed (isolated until its chip codes
  // are gone).
  bool resetting = false;
  bool forced_isolate = false;

  // Whether the next cycle must process this NPU regardless of time (new events, a reload, an
  // operator release), and the earliest time at which it must anyway.
  bool dirty = true;
  std::optional<int64_t> next_deadline_ms;

  // Results of the last cycle.
  model::FaultLevel level[2] = {model::FaultLevel::kNormalNPU, model::FaultLevel::kNormalNetwork};
  bool chip_healthy = true;
  bool network_healthy = true;

  const ActiveCode* FindCode(Plane plane, FaultCode code) const;
  bool HasReason(FaultCode code, UpgradeType type) const;
  bool HasManualReason() const;
};

}  // namespace clusterd::faults
