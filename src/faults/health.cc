#include "faults/health.h"

#include "model/reset_info.h"

namespace clusterd::faults {

using model::FaultLevel;

bool ChipHealthy(FaultLevel level, bool in_use, bool grace_tolerance) {
  switch (level) {
    case FaultLevel::kNormalNPU:
    case FaultLevel::kNormalNetwork:
    case FaultLevel::kNotHandleFault:
    case FaultLevel::kSubHealthFault:
      return true;
    case FaultLevel::kFreeRestartNPU:
      return in_use && grace_tolerance;
    case FaultLevel::kPreSeparateNPU:
      return in_use;
    case FaultLevel::kRestartRequest:
    case FaultLevel::kRestartBusiness:
    case FaultLevel::kRestartNPU:
    case FaultLevel::kSeparateNPU:
    case FaultLevel::kManuallySeparateNPU:
      return false;
  }
  return false;
}

bool NetworkHealthy(FaultLevel level) {
  return level == FaultLevel::kNormalNetwork || level == FaultLevel::kNormalNPU ||
         level == FaultLevel::kNotHandleFault;
}

std::string_view ResetPolicyFor(FaultLevel level) {
  switch (level) {
    case FaultLevel::kNormalNPU:
    case FaultLevel::kNormalNetwork:
    case FaultLevel::kNotHandleFault:
    case FaultLevel::kSubHealthFault:
      return model::kPolicyEmpty;
    case FaultLevel::kRestartRequest:
      return model::kPolicyRestartRequest;
    case FaultLevel::kRestartBusiness:
      return model::kPolicyRestart;
    case FaultLevel::kFreeRestartNPU:
      return model::kPolicyFreeReset;
    case FaultLevel::kRestartNPU:
      return model::kPolicyReset;
    default:
      return model::kPolicyIsolate;
  }
}

}  // namespace clusterd::faults
