// Feeds the DeviceInfoCfg value of a `mindx-dl-deviceinfo-<node>` ConfigMap (written by the
// device plugin on every node) to its parser and, re-signed, to the fault centre's intake: the
// per-NPU fault lists of its DeviceList, the split into one fault per code, receive times.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/fault_intake.h"
#include "fuzz_util.h"
#include "model/config_map_names.h"
#include "model/device_fault.h"
#include "model/device_info.h"
#include "store/object_store.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  (void)model::ParseDeviceInfoCfg(text);
  // The fault lists are JSON text inside DeviceList values; their parser takes them directly too.
  (void)model::ParseDeviceFaults(text);

  const std::string signed_text =
      fuzz::Resign(text, [](std::string_view t) { return model::ParseDeviceInfoCfg(t).status(); });
  store::Object cm = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", std::string(model::kDeviceInfoPrefix) + "node-1"},
                        {"namespace", std::string(model::kDeviceInfoNamespace)}}},
                      {"data", {{std::string(model::kDeviceInfoCfgKey), signed_text}}}};
  absl::StatusOr<cluster::DeviceIntake> intake = cluster::DeviceIntakeFromConfigMap(cm);
  if (intake.ok()) {
    // A second report of the same CM keeps the receive times of the first.
    absl::StatusOr<cluster::DeviceIntake> again = cluster::DeviceIntakeFromConfigMap(cm);
    if (again.ok()) {
      cluster::CarryReceiveTimes(&intake->device, again->device, 1718000000000);
      (void)cluster::DetectDeviceType({});
    }
  }
  return 0;
}
