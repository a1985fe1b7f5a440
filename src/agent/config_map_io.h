#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "store/object_store.h"

namespace clusterd::agent {

using ConfigMapData = std::map<std::string, std::string>;

// A ConfigMap as the agent writes it: name, namespace, labels, data (full replace).
struct ConfigMapSpec {
  std::string ns;
  std::string name;
  std::map<std::string, std::string> labels;
  ConfigMapData data;
};

// "configmap NS/NAME", as the agent's errors name a ConfigMap.
std::string DescribeConfigMap(std::string_view ns, std::string_view name);

// The ConfigMap object `spec` describes (apiVersion, kind, metadata, data).
store::Object ConfigMapObject(const ConfigMapSpec& spec);

// Update (unconditional, replacing data and labels) then Create on NotFound (§1.2 "update then
// create"). Errors name the ConfigMap.
absl::Status WriteConfigMap(store::ObjectStore& store, const ConfigMapSpec& spec);

// The data of a ConfigMap, nullopt when it does not exist. Non-string values are skipped.
absl::StatusOr<std::optional<ConfigMapData>> ReadConfigMapData(store::ObjectStore& store,
                                                               std::string_view ns,
                                                               std::string_view name);
ConfigMapData DataOf(const store::Object& config_map);

// Deletes; NotFound counts as success.
absl::Status DeleteConfigMap(store::ObjectStore& store, std::string_view ns, std::string_view name);

}  // namespace clusterd::agent
