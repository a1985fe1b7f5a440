#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/device_info.h"

namespace clusterd::model {

// The device-name customisation file (seed 001, "deviceNameCustomization.json", Table 7).
inline constexpr std::string_view kDeviceNameCustomizationFile = "deviceNameCustomization.json";

// One entry of the file: the public names of one device type.
struct DeviceNameEntry {
  std::string resource_type;           // ResourceType: Ascend910, Ascend310 or Ascend310P
  std::string device_public_type;      // DevicePublicType: replaces huawei.com/<ResourceType>
  std::string device_public_name_pre;  // DevicePublicNamePre: NPU name = prefix + physical id
  // PodConfigurationName: replaces the pod annotation
  // ascend.kubectl.kubernetes.io/ascend-910-configuration (Ascend910 only; mandatory there).
  std::string pod_configuration_name;
  bool operator==(const DeviceNameEntry&) const = default;
};

// Parses the file: a JSON array of objects, one per device type, each with the four fields
// above (the original decodes the file into a list of such records). Everything the seed
// states is checked, plus: keys are exact (an unknown or misspelt key is refused), values are
// strings, a ResourceType appears once, and no DevicePublicType is another type's resource name
// (huawei.com/<T> or a DevicePublicType), since a node's type is recognised by it. Errors name
// `file` and the line:column of the offending key or entry: "<file>:3:5: DevicePublicType ...".
absl::StatusOr<std::vector<DeviceNameEntry>> ParseDeviceNameCustomization(std::string_view text,
                                                                          std::string_view file);

// How each device type is named on the wire: huawei.com/<T> and <T>-<physical id>, unless an
// entry of the customisation file renames the type. The default-constructed naming renames
// nothing. Immutable, cheap to copy.
class DeviceNaming {
 public:
  DeviceNaming() = default;
  explicit DeviceNaming(std::vector<DeviceNameEntry> entries) : entries_(std::move(entries)) {}
  // Reads and parses the file (a missing or unreadable file is an error too).
  static absl::StatusOr<DeviceNaming> ReadFile(const std::string& path);
  // The file the programs use: `file` when given (it must exist), else
  // `data_dir`/deviceNameCustomization.json when that exists (the original reads the file next
  // to its binary; the shipped files live in the data directory here), else the fixed names.
  // `*used` is set to the file read ("" when none).
  static absl::StatusOr<DeviceNaming> Load(const std::string& file, const std::string& data_dir,
                                           std::string* used);
  // The fixed names (no file), for defaults.
  static const DeviceNaming& Fixed();

  bool empty() const { return entries_.empty(); }
  const std::vector<DeviceNameEntry>& entries() const { return entries_; }
  // The entry renaming `device_type` (Ascend910, Ascend310, Ascend310P, npu), or nullptr.
  const DeviceNameEntry* EntryFor(std::string_view device_type) const;

  // The DeviceList base key, which is also the Kubernetes resource name: huawei.com/<type> or
  // DevicePublicType.
  std::string ResourceName(std::string_view device_type) const;
  // <type>- or DevicePublicNamePre.
  std::string NamePrefix(std::string_view device_type) const;
  std::string NpuName(std::string_view device_type, int64_t physical_id) const;
  // The five DeviceList keys of `device_type`, built on ResourceName.
  DeviceListKeys Keys(std::string_view device_type) const;
  // Pod annotations holding the device allocation, in the order they are read: the Ascend910
  // PodConfigurationName when customised, then the fixed
  // ascend.kubectl.kubernetes.io/ascend-910-configuration (pods of nodes that run without the
  // file, in a cluster moving to it) and ascend.kubectl.kubernetes.io/ascend-npu-configuration.
  std::vector<std::string> AllocationAnnotationKeys() const;
  // The customised type whose DevicePublicType is `resource_name`, or nullopt.
  std::optional<std::string> CustomTypeOf(std::string_view resource_name) const;
  // The customised entry whose DevicePublicType is the base of the DeviceList key `key`
  // (`<DevicePublicType>` or with a -Unhealthy, -NetworkUnhealthy, -Recovering or -Fault
  // suffix), or nullptr.
  const DeviceNameEntry* EntryOfDeviceListKey(std::string_view key) const;
  // A container limit or PodGroup minResources key that asks for NPUs: one containing
  // huawei.com/ (the fixed names), or a DevicePublicType.
  bool IsNpuResource(std::string_view resource_name) const;

 private:
  std::vector<DeviceNameEntry> entries_;
};

}  // namespace clusterd::model
