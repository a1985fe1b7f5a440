#pragma once

// Which pods belong to which PodGroup (the pod annotation scheduling.k8s.io/group-name), kept
// from the pod watch, so that reading one job's view costs that job's pods rather than a list
// of every pod in the namespace. With 1,000 jobs the listing was most of the controller's CPU:
// every pod change of any job (the controller's own fault-type label included) re-listed and
// copied every pod.
//
// The index holds names only; the pods themselves are read from the store (its cache) when a
// view is built, and a pod counts only if its annotation still names the PodGroup then. So a
// name learnt late, or left behind by a missed deletion, never puts a wrong pod in a view.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/object_store.h"

namespace clusterd::recovery {

inline constexpr std::string_view kGroupNameAnnotation = "scheduling.k8s.io/group-name";

// The PodGroup a pod names, or "" when it names none.
std::string PodGroupOf(const store::Object& pod);

class PodGroupMembers {
 public:
  explicit PodGroupMembers(store::ObjectStore& store) : store_(store) {}

  // The pod watch's events (any thread).
  void OnPodEvent(const store::WatchEvent& event);

  // The PodGroup's pods as the store holds them now. The first call lists every pod once to
  // learn the pods the watch has not delivered yet; later calls read only the group's pods.
  absl::StatusOr<std::vector<store::Object>> PodsOf(const std::string& ns,
                                                    const std::string& pod_group);

  // Names known for the PodGroup (tests).
  size_t KnownNames(const std::string& ns, const std::string& pod_group) const;

 private:
  absl::Status SeedOnce();

  store::ObjectStore& store_;
  absl::Mutex seed_mu_;  // one listing at a time
  mutable absl::Mutex mu_;
  bool seeded_ ABSL_GUARDED_BY(mu_) = false;
  // "ns/podgroup" -> pod names.
  std::map<std::string, std::set<std::string>> names_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::recovery
