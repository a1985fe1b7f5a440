#include "recovery/pod_group_index.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace clusterd::recovery {

std::string PodGroupOf(const store::Object& pod) {
  if (!pod.is_object()) return "";
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) return "";
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return "";
  auto group = annotations->find(std::string(kGroupNameAnnotation));
  if (group == annotations->end() || !group->is_string()) return "";
  return group->get<std::string>();
}

std::vector<std::string> PodGroupIndexValues(const store::Object& pod) {
  std::string group = PodGroupOf(pod);
  if (group.empty()) return {};
  return {absl::StrCat(store::NamespaceOf(pod), "/", group)};
}

absl::StatusOr<std::vector<store::Object>> PodsOfGroup(const store::SharedInformer& pods,
                                                       store::ObjectStore& store,
                                                       const std::string& ns,
                                                       const std::string& pod_group) {
  std::vector<store::Object> out;
  for (const auto& cached : pods.ByIndex(kPodGroupIndex, absl::StrCat(ns, "/", pod_group))) {
    absl::StatusOr<store::Object> pod =
        store.Get({std::string(store::kPods), ns, store::NameOf(*cached)});
    if (absl::IsNotFound(pod.status())) continue;  // deleted; its event prunes the name
    if (!pod.ok()) return pod.status();
    if (PodGroupOf(*pod) != pod_group) continue;  // the name now belongs to another group's pod
    out.push_back(*std::move(pod));
  }
  return out;
}

}  // namespace clusterd::recovery
