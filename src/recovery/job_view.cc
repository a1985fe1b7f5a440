#include "recovery/job_view.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "model/pod_device_allocation.h"
#include "nlohmann/json.hpp"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

using store::Object;

// `super_pod_id` of the allocation annotation's JSON (jobs-ranktable-diagnosis.md §1.4: >= 0 on
// super-pod members); -2 when absent or unreadable.
int64_t SuperPodIdOf(const std::string& allocation) {
  if (allocation.empty()) return -2;
  const nlohmann::json alloc = nlohmann::json::parse(allocation, nullptr, false);
  if (!alloc.is_object()) return -2;
  const auto it = alloc.find("super_pod_id");
  return it != alloc.end() && it->is_number_integer() ? it->get<int64_t>() : -2;
}

StringMap StringsAt(const Object& object, const char* field) {
  StringMap out;
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return out;
  const auto it = meta->find(field);
  if (it == meta->end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

std::string PhaseOf(const Object& object) {
  const auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return "";
  const auto phase = status->find("phase");
  return phase != status->end() && phase->is_string() ? phase->get<std::string>() : "";
}

std::string SpecString(const Object& pod, const char* field) {
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return "";
  const auto it = spec->find(field);
  return it != spec->end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t QuantityOf(const Object& value) {
  int64_t n = 0;
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string() && absl::SimpleAtoi(value.get<std::string>(), &n)) return n;
  return 0;
}

// NPUs the pod's containers ask for, and the MINDIO_WAIT_MINDX_TIME env if any.
void ReadContainers(const Object& pod, const model::DeviceNaming& naming, int64_t& npus,
                    std::optional<int64_t>& mindio_wait) {
  npus = 0;
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return;
  const auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array()) return;
  for (const Object& c : *containers) {
    if (!c.is_object()) continue;
    const auto resources = c.find("resources");
    if (resources != c.end() && resources->is_object()) {
      const auto limits = resources->find("limits");
      if (limits != resources->end() && limits->is_object()) {
        for (const auto& [name, value] : limits->items()) {
          if (absl::StartsWith(name, "huawei.com/") || naming.CustomTypeOf(name).has_value()) {
            npus += QuantityOf(value);
          }
        }
      }
    }
    const auto env = c.find("env");
    if (env == c.end() || !env->is_array()) continue;
    for (const Object& e : *env) {
      if (!e.is_object() || e.value("name", "") != kEnvMindioWaitTime) continue;
      int64_t seconds = 0;
      if (absl::SimpleAtoi(e.value("value", ""), &seconds)) mindio_wait = seconds;
    }
  }
}

absl::Time CreatedOf(const Object& object) {
  const std::string text = object.value("/metadata/creationTimestamp"_json_pointer, "");
  absl::Time t;
  std::string err;
  if (!text.empty() && absl::ParseTime(absl::RFC3339_full, text, &t, &err)) return t;
  return absl::UnixEpoch();
}

}  // namespace

const PodView* JobView::Pod(int64_t pod_rank) const {
  const auto it = pods.find(pod_rank);
  return it == pods.end() ? nullptr : &it->second;
}

std::string JobView::PodUid(int64_t pod_rank) const {
  const PodView* pod = Pod(pod_rank);
  return pod == nullptr ? "" : pod->uid;
}

bool JobView::HasAnnotation(std::string_view key) const {
  return pod_group_annotations.count(std::string(key)) > 0;
}

JobView BuildJobView(const Object* pod_group, const std::vector<Object>& pods,
                     const model::DeviceNaming& naming) {
  const std::vector<std::string> allocation_keys = naming.AllocationAnnotationKeys();
  JobView view;
  if (pod_group != nullptr && pod_group->is_object()) {
    view.exists = true;
    view.ns = store::NamespaceOf(*pod_group);
    view.pod_group_name = store::NameOf(*pod_group);
    view.pod_group_labels = StringsAt(*pod_group, "labels");
    view.pod_group_annotations = StringsAt(*pod_group, "annotations");
    view.pod_group_running = PhaseOf(*pod_group) == "Running";
  }
  int64_t d = 0;
  for (const Object& pod : pods) {
    const StringMap annotations = StringsAt(pod, "annotations");
    const StringMap labels = StringsAt(pod, "labels");
    PodView p;
    p.name = store::NameOf(pod);
    p.uid = store::UidOf(pod);
    p.node = SpecString(pod, "nodeName");
    p.running = PhaseOf(pod) == "Running";
    p.ascend_real = !ValueOr(annotations, kAnnotationAscendReal).empty();
    p.backup = ValueOr(annotations, kPodTypeKey) == kPodTypeBackup ||
               ValueOr(labels, kPodTypeKey) == kPodTypeBackup;
    p.in_hot_switch_flow = ValueOr(annotations, kAnnotationInHotSwitchFlow) == "true";
    p.backup_new_pod_name = ValueOr(annotations, kAnnotationBackupNewPodName);
    p.created = CreatedOf(pod);
    // The 910 allocation annotation (renamed by PodConfigurationName when customised).
    std::string allocation;
    for (const std::string& key : allocation_keys) {
      if (key == model::kAnnotationAscendNpuConfiguration) break;
      if (allocation = ValueOr(annotations, key); !allocation.empty()) break;
    }
    p.super_pod_id = SuperPodIdOf(allocation);
    if (p.super_pod_id >= 0) view.super_pod = true;
    int64_t npus = 0;
    std::optional<int64_t> mindio_wait;
    ReadContainers(pod, naming, npus, mindio_wait);
    d = std::max(d, npus);
    if (p.backup) {
      view.backup_pods.push_back(std::move(p));
      continue;
    }
    int64_t rank = 0;
    if (!absl::SimpleAtoi(ValueOr(annotations, kAnnotationRankIndex), &rank) || rank < 0) continue;
    if (rank == 0) view.mindio_wait_seconds = mindio_wait;
    view.pods[rank] = std::move(p);
  }
  view.npus_per_pod = static_cast<int>(std::max<int64_t>(d, 1));
  return view;
}

}  // namespace clusterd::recovery
