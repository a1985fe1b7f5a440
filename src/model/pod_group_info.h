#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "model/device_naming.h"
#include "model/pod_info.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// PodGroup labels and annotations the job registry reads (jobs-ranktable-diagnosis.md §1.3).
inline constexpr std::string_view kLabelFramework = "framework";
inline constexpr std::string_view kLabelCustomJobKey = "customJobKey";
inline constexpr std::string_view kCustomJobId = "custom-job-id";  // label and annotation
inline constexpr std::string_view kLabelScaleOutType = "scaleout-type";

// Resource types derived from spec.minResources.
inline constexpr std::string_view kResourceTypeNpu = "npu";
inline constexpr std::string_view kResourceTypeAscend910 = "Ascend910";
inline constexpr std::string_view kResourceTypeAscend310 = "Ascend310";
inline constexpr std::string_view kResourceTypeUnknown = "unknown";

// What the registry needs of one PodGroup. One PodGroup is one job; the job id is the UID of
// its controller owner (§1.5).
struct PodGroupInfo {
  std::string ns;
  std::string name;
  std::string uid;
  std::optional<OwnerReference> controller;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  int64_t min_member = 0;     // spec.minMember
  std::string resource_type;  // "" when spec.minResources is absent

  std::string Label(std::string_view key) const;
  std::string Annotation(std::string_view key) const;
  bool IsSoftShare() const;  // annotation schedule_policy=chip1-softShareDev
  std::string Key() const { return ns + "/" + name; }
};

// Decodes a PodGroup. Fails only when the object has no metadata.name.
absl::StatusOr<PodGroupInfo> PodGroupInfoFromObject(
    const nlohmann::ordered_json& pg, const DeviceNaming& naming = DeviceNaming::Fixed());

// §1.3: the resource type from the keys of spec.minResources (visited in sorted order, since
// the original's order is unspecified): `huawei.com/npu` -> npu; contains Ascend910 ->
// Ascend910; contains Ascend310 -> Ascend310 (so Ascend310P yields Ascend310, a kept quirk);
// no key matches -> unknown. A customised DevicePublicType of `naming` gives its ResourceType
// (Ascend310P as Ascend310, the same quirk).
std::string ResourceTypeOf(const nlohmann::ordered_json& min_resources,
                           const DeviceNaming& naming = DeviceNaming::Fixed());

}  // namespace clusterd::model
