#include "agent/config_map_owner.h"

#include "absl/strings/str_cat.h"
#include "common/status_util.h"

namespace clusterd::agent {

std::string WriterOf(const store::Object& config_map) {
  auto metadata = config_map.find("metadata");
  if (metadata == config_map.end() || !metadata->is_object()) return "";
  auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return "";
  auto writer = annotations->find(std::string(kWriterAnnotation));
  return writer != annotations->end() && writer->is_string() ? writer->get<std::string>() : "";
}

absl::StatusOr<GuardedWrite> WriteOwnedConfigMap(store::ObjectStore& store,
                                                 const ConfigMapSpec& spec, bool take_over) {
  store::Object object = ConfigMapObject(spec);
  object["metadata"]["annotations"][std::string(kWriterAnnotation)] = std::string(kAgentWriter);
  absl::StatusOr<store::Object> stored =
      store.Get({std::string(store::kConfigMaps), spec.ns, spec.name});
  if (absl::IsNotFound(stored.status())) {
    // Create fails with AlreadyExists when another writer created it meanwhile: never replaced.
    absl::StatusOr<store::Object> created = store.Create(store::kConfigMaps, object);
    if (!created.ok()) return Annotate(created.status(), DescribeConfigMap(spec.ns, spec.name));
    return GuardedWrite{true, "", false};
  }
  if (!stored.ok()) return Annotate(stored.status(), DescribeConfigMap(spec.ns, spec.name));
  GuardedWrite result{false, WriterOf(*stored), true};
  if (result.writer != kAgentWriter && !take_over) return result;
  object["metadata"]["resourceVersion"] = store::ResourceVersionOf(*stored);
  absl::StatusOr<store::Object> updated = store.Update(store::kConfigMaps, object);
  if (!updated.ok()) return Annotate(updated.status(), DescribeConfigMap(spec.ns, spec.name));
  result.done = true;
  return result;
}

absl::StatusOr<GuardedWrite> DeleteOwnedConfigMap(store::ObjectStore& store, std::string_view ns,
                                                  std::string_view name, bool take_over) {
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(ns), std::string(name)};
  absl::StatusOr<store::Object> stored = store.Get(key);
  if (absl::IsNotFound(stored.status())) return GuardedWrite{true, "", false};
  if (!stored.ok()) return Annotate(stored.status(), DescribeConfigMap(ns, name));
  GuardedWrite result{false, WriterOf(*stored), true};
  if (result.writer != kAgentWriter && !take_over) return result;
  absl::Status s = store.Delete(key, store::ResourceVersionOf(*stored));
  if (!s.ok() && !absl::IsNotFound(s)) return Annotate(s, DescribeConfigMap(ns, name));
  result.done = true;
  return result;
}

}  // namespace clusterd::agent
