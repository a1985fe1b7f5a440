#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::model {

// upgrade_type values and the autofill code (fault-pipeline.md §1.2.4, §5.5).
inline constexpr std::string_view kUpgradeTypeFrequency = "FaultFrequency";
inline constexpr std::string_view kUpgradeTypeDuration = "FaultDuration";
inline constexpr std::string_view kUpgradeTypeAutofill = "FaultAutofill";
inline constexpr std::string_view kAutofillFaultCode = "AutofillFaultCode";

// One escalation reason, fields in wire order.
struct UpgradeFaultReason {
  int64_t upgrade_time = 0;  // ms
  std::string fault_code;    // lower-case configuration spelling, or AutofillFaultCode
  std::string fault_level;
  std::string upgrade_type;
  bool operator==(const UpgradeFaultReason&) const = default;
};

// NPU name -> reasons (unique per (fault_code, fault_level, upgrade_type); order not significant).
using UpgradeFaultReasons = std::map<std::string, std::vector<UpgradeFaultReason>>;

// The `UpgradeFaultReason` value: canonical JSON, "{}" when empty.
std::string RenderUpgradeFaultReasons(const UpgradeFaultReasons& reasons);
// "" gives an empty map.
absl::StatusOr<UpgradeFaultReasons> ParseUpgradeFaultReasons(std::string_view text);

}  // namespace clusterd::model
