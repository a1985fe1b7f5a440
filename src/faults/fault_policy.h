#pragma once

#include <memory>
#include <string>

#include "faults/fault_code_catalog.h"
#include "faults/fault_customization.h"
#include "faults/switch_fault_catalog.h"

namespace clusterd::faults {

// The node's device policy: faultCode.json, faultCustomization.json, SwitchFaultCode.json.
// Immutable; a reload builds a new one and hands it to the engine.
struct FaultPolicy {
  FaultCodeCatalog codes;
  FaultCustomization customization;
  SwitchFaultCatalog switch_codes;

  // Upper-case rendering of a chip code (§ Conventions): the configured spelling (leading
  // zeros kept) else minimal hex, upper-cased.
  std::string UpperHex(FaultCode code) const;
  // The lower-case configuration spelling used in UpgradeFaultReason.
  std::string LowerHex(FaultCode code) const;
};

using FaultPolicyPtr = std::shared_ptr<const FaultPolicy>;

}  // namespace clusterd::faults
