#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/device_info.h"
#include "model/device_naming.h"

namespace clusterd::faults {

enum class ChipFamily { k910, k910A, kA3, kA5, k310P, k310 };

// What the chip family decides about the device-info ConfigMap (fault-pipeline.md §1.2).
struct ChipProfile {
  ChipFamily family = ChipFamily::k910;
  std::string device_type;  // Ascend910, npu, Ascend310P, Ascend310
  // From deviceNameCustomization.json (seed 001 Table 7); empty when the type is not renamed:
  // the DeviceList base key (DevicePublicType, else huawei.com/<type>) and the NPU name prefix
  // (DevicePublicNamePre, else <type>-). The engine names its NPUs with them, so the renaming
  // reaches DeviceList, ManuallySeparateNPU and UpgradeFaultReason alike (§1.2.1).
  std::string public_type;
  std::string name_prefix;

  // From the --chip flag: Ascend910 / Ascend910A / Ascend910B, Ascend910A3 (or A3),
  // npu (or A5), Ascend310P, Ascend310. nullopt for anything else.
  static std::optional<ChipProfile> FromName(std::string_view chip);
  // Takes `naming`'s entry for device_type, if any (none can name npu: A5 is not renamed).
  void ApplyNaming(const model::DeviceNaming& naming);

  // `<type>-<physical id>`, or the customised prefix followed by the physical id.
  std::string NpuName(int physical_id) const;
  // 310/310P have no parameter plane: network events are dropped and no network / recovering
  // keys are written.
  bool has_network() const { return family != ChipFamily::k310 && family != ChipFamily::k310P; }
  // A3 and A5 write SwitchInfoCfg (A5 always the zero record).
  bool writes_switch_info() const { return family == ChipFamily::kA3 || family == ChipFamily::kA5; }
  // DeviceList keys; 310 keeps the original's fault key spelling `huawei.com/Ascend310P-Fault`
  // unless renamed (a customised type's keys all start with its DevicePublicType).
  model::DeviceListKeys keys() const;
  // NPUs reset together (§3.4): 4 on 910A, 8 on 910B (16 on boards with more than 8 NPUs), the
  // 4 dies of a card pair on A3, 1 on A5 and 310/310P.
  int ResetRingSize(int num_npus) const;
  // 910B resets free_reset / reset faults without waiting for them to persist 60 s (§3.6).
  bool ResetWithoutPersistence() const { return family == ChipFamily::k910; }
};

}  // namespace clusterd::faults
