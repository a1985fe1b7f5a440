#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "faults/fault_code_catalog.h"

namespace clusterd::faults {

// Assertion of a driver event (numeric values as in the switch record).
enum class Assertion : uint8_t { kRecover = 0, kOccur = 1, kOnce = 2 };
std::optional<Assertion> ParseAssertion(std::string_view text);  // occur, recover, once
std::string_view AssertionName(Assertion a);

// A chip or network event for one NPU, as the driver subscription delivers it.
struct NpuFaultEvent {
  int npu = 0;  // physical id
  FaultCode code = 0;
  Assertion assertion = Assertion::kOccur;
  int64_t alarm_time_ms = 0;  // 0: "now" at intake
  Severity severity;          // unknown when the source did not say
};

// A UnifiedBus switch event (A3).
struct SwitchFaultInput {
  std::string assembled_code;  // "[0x08520003,na,L2,na]"
  uint32_t chip_id = 0;
  uint32_t port_id = 0;
  uint32_t peer_port_id = 0;
  uint32_t severity = 0;
  Assertion assertion = Assertion::kOccur;
  int64_t alarm_time_ms = 0;
};

// A NodeD (iBMC) event: one component's code.
struct NodeFaultInput {
  std::string device_type = "UNKNOWN";  // CPU, Memory, PSU, ...
  int64_t device_id = 0;
  std::string code;  // 8 hex characters
  Assertion assertion = Assertion::kOccur;
};

}  // namespace clusterd::faults
