#include "recovery/pod_group_members.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace clusterd::recovery {
namespace {

std::string Key(const std::string& ns, const std::string& pod_group) {
  return absl::StrCat(ns, "/", pod_group);
}

}  // namespace

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

void PodGroupMembers::OnPodEvent(const store::WatchEvent& event) {
  const std::string group = PodGroupOf(event.object);
  if (group.empty()) return;
  const std::string key = Key(store::NamespaceOf(event.object), group);
  const std::string name = store::NameOf(event.object);
  absl::MutexLock lock(&mu_);
  if (event.type == store::WatchEventType::kDeleted) {
    auto it = names_.find(key);
    if (it == names_.end()) return;
    it->second.erase(name);
    if (it->second.empty()) names_.erase(it);
  } else {
    names_[key].insert(name);
  }
}

absl::Status PodGroupMembers::SeedOnce() {
  absl::MutexLock seeding(&seed_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (seeded_) return absl::OkStatus();
  }
  absl::StatusOr<store::ObjectList> pods = store_.List(store::kPods, {});
  if (!pods.ok()) return pods.status();
  absl::MutexLock lock(&mu_);
  for (const store::Object& pod : pods->items) {
    const std::string group = PodGroupOf(pod);
    if (!group.empty()) names_[Key(store::NamespaceOf(pod), group)].insert(store::NameOf(pod));
  }
  seeded_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<store::Object>> PodGroupMembers::PodsOf(const std::string& ns,
                                                                   const std::string& pod_group) {
  if (absl::Status s = SeedOnce(); !s.ok()) return s;
  std::vector<std::string> names;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = names_.find(Key(ns, pod_group)); it != names_.end()) {
      names.assign(it->second.begin(), it->second.end());
    }
  }
  std::vector<store::Object> pods;
  pods.reserve(names.size());
  for (const std::string& name : names) {
    absl::StatusOr<store::Object> pod = store_.Get({std::string(store::kPods), ns, name});
    if (absl::IsNotFound(pod.status())) continue;  // deleted; its watch event prunes the name
    if (!pod.ok()) return pod.status();
    if (PodGroupOf(*pod) != pod_group) continue;  // the name now belongs to another group's pod
    pods.push_back(*std::move(pod));
  }
  return pods;
}

size_t PodGroupMembers::KnownNames(const std::string& ns, const std::string& pod_group) const {
  absl::MutexLock lock(&mu_);
  auto it = names_.find(Key(ns, pod_group));
  return it == names_.end() ? 0 : it->second.size();
}

}  // namespace clusterd::recovery
