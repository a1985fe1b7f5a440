#include "faults/npu_fault_state.h"

#include "model/upgrade_fault_reason.h"

namespace clusterd::faults {

std::string_view UpgradeTypeName(UpgradeType type) {
  switch (type) {
    case UpgradeType::kFrequency:
      return model::kUpgradeTypeFrequency;
    case UpgradeType::kDuration:
      return model::kUpgradeTypeDuration;
    case UpgradeType::kAutofill:
      return model::kUpgradeTypeAutofill;
  }
  return "";
}

const ActiveCode* NpuFaultState::FindCode(Plane plane, FaultCode code) const {
  for (const ActiveCode& c : codes[static_cast<int>(plane)]) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

bool NpuFaultState::HasReason(FaultCode code, UpgradeType type) const {
  for (const EscalationReason& r : reasons) {
    if (r.type == type && r.code == code) return true;
  }
  return false;
}

bool NpuFaultState::HasManualReason() const {
  for (const EscalationReason& r : reasons) {
    if (r.level == model::FaultLevel::kManuallySeparateNPU) return true;
  }
  return false;
}

}  // namespace clusterd::faults
