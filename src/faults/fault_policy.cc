#include "faults/fault_policy.h"

namespace clusterd::faults {

std::string FaultPolicy::LowerHex(FaultCode code) const {
  if (const std::string* s = customization.Spelling(code)) return *s;
  if (const std::string* s = codes.Spelling(code)) return *s;
  return MinimalHex(code);
}

std::string FaultPolicy::UpperHex(FaultCode code) const { return AsciiUpper(LowerHex(code)); }

}  // namespace clusterd::faults
