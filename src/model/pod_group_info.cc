#include "model/pod_group_info.h"

#include <set>

#include "absl/strings/match.h"

namespace clusterd::model {
namespace {

using Json = nlohmann::ordered_json;

const Json* Member(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::map<std::string, std::string> StringMapMember(const Json& obj, std::string_view key) {
  std::map<std::string, std::string> out;
  const Json* v = Member(obj, key);
  if (v == nullptr || !v->is_object()) return out;
  for (const auto& [k, value] : v->items()) {
    if (value.is_string()) out[k] = value.get<std::string>();
  }
  return out;
}

std::string Lookup(const std::map<std::string, std::string>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? std::string() : it->second;
}

}  // namespace

std::string PodGroupInfo::Label(std::string_view key) const { return Lookup(labels, key); }
std::string PodGroupInfo::Annotation(std::string_view key) const {
  return Lookup(annotations, key);
}
bool PodGroupInfo::IsSoftShare() const {
  return Annotation(kAnnotationSchedulePolicy) == kSchedulePolicySoftShare;
}

std::string ResourceTypeOf(const Json& min_resources, const DeviceNaming& naming) {
  if (!min_resources.is_object()) return std::string(kResourceTypeUnknown);
  std::set<std::string> keys;
  for (const auto& [k, _] : min_resources.items()) keys.insert(k);
  for (const std::string& key : keys) {
    if (std::optional<std::string> type = naming.CustomTypeOf(key); type.has_value()) {
      return *type == "Ascend910" ? std::string(kResourceTypeAscend910)
                                  : std::string(kResourceTypeAscend310);
    }
    if (key == "huawei.com/npu") return std::string(kResourceTypeNpu);
    if (absl::StrContains(key, "Ascend910")) return std::string(kResourceTypeAscend910);
    if (absl::StrContains(key, "Ascend310")) return std::string(kResourceTypeAscend310);
  }
  return std::string(kResourceTypeUnknown);
}

absl::StatusOr<PodGroupInfo> PodGroupInfoFromObject(const Json& pg, const DeviceNaming& naming) {
  PodGroupInfo info;
  const Json* md = Member(pg, "metadata");
  const Json* name = md == nullptr ? nullptr : Member(*md, "name");
  if (name == nullptr || !name->is_string() || name->get<std::string>().empty()) {
    return absl::InvalidArgumentError("podgroup has no metadata.name");
  }
  info.name = name->get<std::string>();
  if (const Json* ns = Member(*md, "namespace"); ns != nullptr && ns->is_string()) {
    info.ns = ns->get<std::string>();
  }
  if (const Json* uid = Member(*md, "uid"); uid != nullptr && uid->is_string()) {
    info.uid = uid->get<std::string>();
  }
  info.labels = StringMapMember(*md, "labels");
  info.annotations = StringMapMember(*md, "annotations");
  info.controller = ControllerOwnerOf(pg);
  if (const Json* spec = Member(pg, "spec"); spec != nullptr) {
    if (const Json* mm = Member(*spec, "minMember"); mm != nullptr && mm->is_number_integer()) {
      info.min_member = mm->get<int64_t>();
    }
    if (const Json* mr = Member(*spec, "minResources"); mr != nullptr && !mr->is_null()) {
      info.resource_type = ResourceTypeOf(*mr, naming);
    }
  }
  return info;
}

}  // namespace clusterd::model
