// Feeds the SwitchInfoCfg value of a device-info ConfigMap (the switch faults of a node, written
// by the device plugin) to its parser, each fault event string to the event parser, and the
// whole ConfigMap (beside a valid DeviceInfoCfg) to the fault centre's intake.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/fault_intake.h"
#include "fuzz_util.h"
#include "model/config_map_names.h"
#include "model/device_info.h"
#include "model/switch_info.h"
#include "store/object_store.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  absl::StatusOr<model::SwitchInfo> info = model::ParseSwitchInfo(text);
  if (info.ok()) (void)model::ParseSwitchInfo(model::RenderSwitchInfo(*info));
  absl::StatusOr<model::SwitchFaultEvent> event = model::ParseSwitchFaultEvent(text);
  if (event.ok()) (void)model::ParseSwitchFaultEvent(model::RenderSwitchFaultEvent(*event));

  static const std::string device_info_cfg = [] {
    model::DeviceInfoCfg cfg;
    cfg.device_info.device_list["huawei.com/Ascend910"] = "Ascend910-0,Ascend910-1";
    cfg.device_info.update_time = 1718000000;
    return model::RenderDeviceInfoCfg(cfg);
  }();
  store::Object cm = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", std::string(model::kDeviceInfoPrefix) + "node-1"},
                        {"namespace", std::string(model::kDeviceInfoNamespace)}}},
                      {"data",
                       {{std::string(model::kDeviceInfoCfgKey), device_info_cfg},
                        {std::string(model::kSwitchInfoCfgKey), std::string(text)}}}};
  absl::StatusOr<cluster::DeviceIntake> intake = cluster::DeviceIntakeFromConfigMap(cm);
  if (intake.ok() && intake->switch_record.has_value()) {
    cluster::SwitchRecord next = *intake->switch_record;
    cluster::CarryReceiveTimes(&*intake->switch_record, next, 1718000000000);
  }
  return 0;
}
