#pragma once

#include <string>
#include <vector>

#include "faults/device_fault_engine.h"
#include "faults/device_info_render.h"
#include "model/device_fault.h"
#include "shipped_policy.h"

namespace clusterd::faults::testing {

inline constexpr int64_t kT0 = 1718000000000;  // ms
inline constexpr int64_t kS = 1000;
inline constexpr int64_t kHour = 3600 * kS;

inline DeviceEngineOptions Options(int npus = 8, std::string_view chip = "Ascend910") {
  DeviceEngineOptions options;
  options.profile = *ChipProfile::FromName(chip);
  for (int i = 0; i < npus; ++i) options.npu_ids.push_back(i);
  return options;
}

inline NpuFaultEvent Event(int npu, FaultCode code, Assertion a, int64_t t,
                           Severity severity = std::nullopt) {
  return NpuFaultEvent{npu, code, a, t, severity};
}

// Submits one event and runs a cycle at the event's time.
inline CycleResult At(DeviceFaultEngine& engine, int npu, FaultCode code, Assertion a, int64_t t) {
  engine.Submit(Event(npu, code, a, t));
  return engine.RunCycle(t);
}

inline std::vector<model::DeviceFault> Faults(const DeviceFaultEngine& engine) {
  return BuildDeviceFaults(engine);
}

inline std::string DeviceListValue(const DeviceFaultEngine& engine, std::string_view suffix) {
  const auto list = BuildDeviceList(engine);
  auto it =
      list.find(std::string("huawei.com/") + engine.profile().device_type + std::string(suffix));
  return it == list.end() ? "<absent>" : it->second;
}

}  // namespace clusterd::faults::testing
