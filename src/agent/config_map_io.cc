#include "agent/config_map_io.h"

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "common/sv.h"

namespace clusterd::agent {

std::string DescribeConfigMap(std::string_view ns, std::string_view name) {
  return absl::StrCat("configmap ", Sv(ns), "/", Sv(name));
}

store::Object ConfigMapObject(const ConfigMapSpec& spec) {
  store::Object object;
  object["apiVersion"] = "v1";
  object["kind"] = "ConfigMap";
  object["metadata"]["name"] = spec.name;
  object["metadata"]["namespace"] = spec.ns;
  if (!spec.labels.empty()) {
    for (const auto& [k, v] : spec.labels) object["metadata"]["labels"][k] = v;
  }
  object["data"] = store::Object::object();
  for (const auto& [k, v] : spec.data) object["data"][k] = v;
  return object;
}

absl::Status WriteConfigMap(store::ObjectStore& store, const ConfigMapSpec& spec) {
  const store::Object object = ConfigMapObject(spec);
  absl::StatusOr<store::Object> updated = store.Update(store::kConfigMaps, object);
  if (updated.ok()) return absl::OkStatus();
  if (!absl::IsNotFound(updated.status())) {
    return Annotate(updated.status(), DescribeConfigMap(spec.ns, spec.name));
  }
  absl::StatusOr<store::Object> created = store.Create(store::kConfigMaps, object);
  if (created.ok()) return absl::OkStatus();
  return Annotate(created.status(), DescribeConfigMap(spec.ns, spec.name));
}

ConfigMapData DataOf(const store::Object& config_map) {
  ConfigMapData data;
  auto it = config_map.find("data");
  if (it == config_map.end() || !it->is_object()) return data;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) data[k] = v.get<std::string>();
  }
  return data;
}

absl::StatusOr<std::optional<ConfigMapData>> ReadConfigMapData(store::ObjectStore& store,
                                                               std::string_view ns,
                                                               std::string_view name) {
  absl::StatusOr<store::Object> object =
      store.Get({std::string(store::kConfigMaps), std::string(ns), std::string(name)});
  if (absl::IsNotFound(object.status())) return std::optional<ConfigMapData>();
  if (!object.ok()) return Annotate(object.status(), DescribeConfigMap(ns, name));
  return std::optional<ConfigMapData>(DataOf(*object));
}

absl::Status DeleteConfigMap(store::ObjectStore& store, std::string_view ns,
                             std::string_view name) {
  absl::Status s =
      store.Delete({std::string(store::kConfigMaps), std::string(ns), std::string(name)});
  if (s.ok() || absl::IsNotFound(s)) return absl::OkStatus();
  return Annotate(s, DescribeConfigMap(ns, name));
}

}  // namespace clusterd::agent
