#include "faults/chip_profile.h"

#include "absl/strings/str_cat.h"

namespace clusterd::faults {

std::optional<ChipProfile> ChipProfile::FromName(std::string_view chip) {
  if (chip == "Ascend910" || chip == "Ascend910B")
    return ChipProfile{ChipFamily::k910, "Ascend910", "", ""};
  if (chip == "Ascend910A") return ChipProfile{ChipFamily::k910A, "Ascend910", "", ""};
  if (chip == "Ascend910A3" || chip == "A3") return ChipProfile{ChipFamily::kA3, "Ascend910", "", ""};
  if (chip == "npu" || chip == "A5") return ChipProfile{ChipFamily::kA5, "npu", "", ""};
  if (chip == "Ascend310P") return ChipProfile{ChipFamily::k310P, "Ascend310P", "", ""};
  if (chip == "Ascend310") return ChipProfile{ChipFamily::k310, "Ascend310", "", ""};
  return std::nullopt;
}

void ChipProfile::ApplyNaming(const model::DeviceNaming& naming) {
  const model::DeviceNameEntry* entry = naming.EntryFor(device_type);
  if (entry == nullptr) return;
  public_type = entry->device_public_type;
  name_prefix = entry->device_public_name_pre;
}

std::string ChipProfile::NpuName(int physical_id) const {
  if (!name_prefix.empty()) return absl::StrCat(name_prefix, physical_id);
  return absl::StrCat(device_type, "-", physical_id);
}

int ChipProfile::ResetRingSize(int num_npus) const {
  switch (family) {
    case ChipFamily::k910A:
    case ChipFamily::kA3:
      return 4;
    case ChipFamily::k910:
      return num_npus > 8 ? 16 : 8;
    default:
      return 1;
  }
}

model::DeviceListKeys ChipProfile::keys() const {
  if (!public_type.empty()) return model::DeviceListKeys::WithBase(public_type);
  model::DeviceListKeys keys = model::DeviceListKeys::For(device_type);
  if (family == ChipFamily::k310) keys.fault = model::DeviceListKeys::For("Ascend310P").fault;
  return keys;
}

}  // namespace clusterd::faults
