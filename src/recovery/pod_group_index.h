#pragma once

// Which pods belong to which PodGroup (the pod annotation scheduling.k8s.io/group-name): an
// index of the shared pod informer (store/informer.h), so that reading one job's view costs
// that job's pods rather than a list of every pod in the namespace. With 1,000 jobs the listing
// was most of the controller's CPU: every pod change of any job (the controller's own
// fault-type label included) re-listed and copied every pod.
//
// The index gives names only; the pods themselves are read from the store (its cache) when a
// view is built, and a pod counts only if its annotation still names the PodGroup then. So a
// view built right after the controller's own pod patch already shows it, and a name left
// behind by an event still on its way never puts a wrong pod in a view.
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::recovery {

inline constexpr std::string_view kGroupNameAnnotation = "scheduling.k8s.io/group-name";
// The pod informer's index of PodGroups: values "namespace/podgroup".
inline constexpr std::string_view kPodGroupIndex = "recovery-podgroup";

// The PodGroup a pod names, or "" when it names none.
std::string PodGroupOf(const store::Object& pod);
// The index function of kPodGroupIndex.
std::vector<std::string> PodGroupIndexValues(const store::Object& pod);

// The PodGroup's pods as the store holds them now, named by `pods` (which has kPodGroupIndex).
absl::StatusOr<std::vector<store::Object>> PodsOfGroup(const store::SharedInformer& pods,
                                                       store::ObjectStore& store,
                                                       const std::string& ns,
                                                       const std::string& pod_group);

}  // namespace clusterd::recovery
