#include "cluster/config_map_io.h"

#include "absl/status/statusor.h"

namespace clusterd::cluster {

std::map<std::string, std::string> ConfigMapStringData(const store::Object& cm) {
  std::map<std::string, std::string> out;
  auto it = cm.find("data");
  if (it == cm.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) out.emplace(k, v.get<std::string>());
  }
  return out;
}

absl::Status WriteWholeConfigMap(store::ObjectStore& store, std::string_view ns,
                                 const std::string& name,
                                 const std::map<std::string, std::string>& data,
                                 const std::map<std::string, std::string>& labels) {
  store::Object cm;
  cm["apiVersion"] = "v1";
  cm["kind"] = "ConfigMap";
  cm["metadata"]["name"] = name;
  cm["metadata"]["namespace"] = std::string(ns);
  for (const auto& [k, v] : labels) cm["metadata"]["labels"][k] = v;
  cm["data"] = store::Object::object();
  for (const auto& [k, v] : data) cm["data"][k] = v;
  // A ConfigMap the store's cache does not hold (a Get is local on every backend) is created
  // first: an update the store refuses costs the API server a request for nothing.
  if (absl::IsNotFound(store.Get(store::KeyOf(store::kConfigMaps, cm)).status())) {
    absl::StatusOr<store::Object> created = store.Create(store::kConfigMaps, cm);
    if (created.ok()) return absl::OkStatus();
    if (!absl::IsAlreadyExists(created.status())) return created.status();
  }
  absl::StatusOr<store::Object> updated = store.Update(store::kConfigMaps, cm);
  if (updated.ok()) return absl::OkStatus();
  if (!absl::IsNotFound(updated.status())) return updated.status();
  absl::StatusOr<store::Object> created = store.Create(store::kConfigMaps, cm);
  if (created.ok()) return absl::OkStatus();
  if (absl::IsAlreadyExists(created.status())) return store.Update(store::kConfigMaps, cm).status();
  return created.status();
}

}  // namespace clusterd::cluster
