#include "model/pod_info.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/canonical_json.h"
#include "common/sv.h"

namespace clusterd::model {
namespace {

using Json = nlohmann::ordered_json;

const Json* Child(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string StringAt(const Json& obj, std::string_view key) {
  const Json* v = Child(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::map<std::string, std::string> StringMapAt(const Json& obj, std::string_view key) {
  std::map<std::string, std::string> out;
  const Json* v = Child(obj, key);
  if (v == nullptr || !v->is_object()) return out;
  for (const auto& [k, value] : v->items()) {
    if (value.is_string()) out[k] = value.get<std::string>();
  }
  return out;
}

// Go's strconv.Atoi: optional sign, decimal digits, nothing else.
std::optional<int64_t> Atoi(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  size_t i = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  if (i == text.size()) return std::nullopt;
  for (size_t k = i; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9') return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(Sv(text), &value)) return std::nullopt;
  return value;
}

void ReadContainers(const Json& containers, const DeviceNaming& naming, PodInfo& info) {
  if (!containers.is_array()) return;
  for (const Json& c : containers) {
    if (!c.is_object()) continue;
    ++info.container_count;
    if (const Json* resources = Child(c, "resources"); resources != nullptr) {
      if (const Json* limits = Child(*resources, "limits");
          limits != nullptr && limits->is_object()) {
        for (const auto& [name, _] : limits->items()) {
          if (naming.IsNpuResource(name)) info.needs_npu = true;
        }
      }
    }
    if (const Json* env = Child(c, "env"); env != nullptr && env->is_array()) {
      for (const Json& e : *env) {
        if (StringAt(e, "name") == kEnvMasterAddr && info.master_addr_env.empty()) {
          info.master_addr_env = StringAt(e, "value");
        }
      }
    }
    if (const Json* mounts = Child(c, "volumeMounts"); mounts != nullptr && mounts->is_array()) {
      for (const Json& m : *mounts) {
        if (StringAt(m, "mountPath") == kDataTraceMountPath) info.mounts_data_trace = true;
      }
    }
  }
}

}  // namespace

std::optional<OwnerReference> ControllerOwnerOf(const Json& object) {
  const Json* md = Child(object, "metadata");
  if (md == nullptr) return std::nullopt;
  const Json* refs = Child(*md, "ownerReferences");
  if (refs == nullptr || !refs->is_array()) return std::nullopt;
  for (const Json& ref : *refs) {
    const Json* controller = Child(ref, "controller");
    if (controller == nullptr || !controller->is_boolean() || !controller->get<bool>()) continue;
    OwnerReference owner;
    owner.api_version = StringAt(ref, "apiVersion");
    owner.kind = StringAt(ref, "kind");
    owner.name = StringAt(ref, "name");
    owner.uid = StringAt(ref, "uid");
    owner.controller = true;
    owner.raw = ref;
    if (owner.uid.empty()) return std::nullopt;
    return owner;
  }
  return std::nullopt;
}

bool PodInfo::IsBackup() const { return Annotation(kAnnotationPodType) == kPodTypeBackup; }

bool PodInfo::IsSoftShare() const {
  return Annotation(kAnnotationSchedulePolicy) == kSchedulePolicySoftShare;
}

std::string PodInfo::Annotation(std::string_view key) const {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? std::string() : it->second;
}

std::string PodInfo::Label(std::string_view key) const {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? std::string() : it->second;
}

absl::StatusOr<PodInfo> PodInfoFromObject(const Json& pod, const DeviceNaming& naming) {
  PodInfo info;
  const Json* md = Child(pod, "metadata");
  if (md == nullptr || StringAt(*md, "name").empty()) {
    return absl::InvalidArgumentError("pod has no metadata.name");
  }
  info.ns = StringAt(*md, "namespace");
  info.name = StringAt(*md, "name");
  info.uid = StringAt(*md, "uid");
  info.labels = StringMapAt(*md, "labels");
  info.controller = ControllerOwnerOf(pod);
  const std::string what = absl::StrCat("pod ", info.ns, "/", info.name);

  std::map<std::string, std::string> annotations = StringMapAt(*md, "annotations");
  std::optional<std::string> allocation_text;
  for (const std::string& key : naming.AllocationAnnotationKeys()) {
    auto it = annotations.find(key);
    if (it == annotations.end()) continue;
    if (!allocation_text.has_value()) {
      allocation_text = it->second;
      info.allocation_annotation_present = true;
      auto parsed =
          ParsePodDeviceAllocation(it->second, absl::StrCat(what, ": annotation ", Sv(key)));
      if (parsed.ok()) {
        info.allocation = *std::move(parsed);
      } else {
        info.allocation_problem = std::string(parsed.status().message());
      }
    }
    annotations.erase(it);
  }
  info.annotations = std::move(annotations);

  if (auto it = info.annotations.find(std::string(kAnnotationRankIndex));
      it != info.annotations.end()) {
    std::optional<int64_t> rank = Atoi(it->second);
    if (!rank.has_value() || *rank < 0) {
      info.rank_index_problem =
          absl::StrCat(what, ": annotation ", Sv(kAnnotationRankIndex),
                       " is not a non-negative integer: ", QuoteGoString(it->second));
    } else {
      info.rank_index = *rank;
    }
  }
  if (auto it = info.annotations.find(std::string(kAnnotationScheduleMinAvailable));
      it != info.annotations.end()) {
    std::optional<int64_t> n = Atoi(it->second);
    if (n.has_value() && *n > 0) info.min_available = *n;
  }

  if (const Json* spec = Child(pod, "spec"); spec != nullptr) {
    info.node_name = StringAt(*spec, "nodeName");
    if (const Json* containers = Child(*spec, "containers"); containers != nullptr) {
      ReadContainers(*containers, naming, info);
    }
  }
  if (const Json* status = Child(pod, "status"); status != nullptr) {
    info.phase = StringAt(*status, "phase");
    info.host_ip = StringAt(*status, "hostIP");
    info.pod_ip = StringAt(*status, "podIP");
    if (const Json* statuses = Child(*status, "containerStatuses");
        statuses != nullptr && statuses->is_array()) {
      for (const Json& cs : *statuses) {
        std::string name = StringAt(cs, "name");
        if (!name.empty()) info.container_ids[name] = StringAt(cs, "containerID");
      }
    }
  }
  return info;
}

bool DeviceAllocationComplete(const PodInfo& pod) {
  return pod.container_count >= 1 && (!pod.needs_npu || pod.allocation_annotation_present);
}

}  // namespace clusterd::model
