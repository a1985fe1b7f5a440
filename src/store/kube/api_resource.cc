#include "store/kube/api_resource.h"

#include <array>

#include "store/strings.h"

namespace clusterd::store::kube {
namespace {

// The group/version/kind of every store resource: jobs-ranktable-diagnosis.md §1.1.
constexpr std::array<ApiResource, 8> kApiResources = {{
    {kConfigMaps, "", "v1", "ConfigMap", true, false, false, false},
    {kPods, "", "v1", "Pod", true, true, false, false},
    {kNodes, "", "v1", "Node", false, true, false, false},
    {kEvents, "", "v1", "Event", true, false, false, false},
    {kLeases, "coordination.k8s.io", "v1", "Lease", true, false, false, true},
    {kPodGroups, "scheduling.volcano.sh", "v1beta1", "PodGroup", true, true, true, true},
    {kJobs, "batch.volcano.sh", "v1alpha1", "Job", true, true, true, true},
    {kAscendJobs, "mindxdl.gitee.com", "v1", "AscendJob", true, true, true, true},
}};

}  // namespace

std::string ApiResource::ApiVersion() const {
  return group.empty() ? std::string(version) : Cat(group, "/", version);
}

std::string ApiResource::CollectionPath(std::string_view ns) const {
  std::string path = group.empty() ? "/api/v1" : Cat("/apis/", group, "/", version);
  if (namespaced && !ns.empty()) path += Cat("/namespaces/", ns);
  return Cat(path, "/", resource);
}

std::string ApiResource::ObjectPath(const ObjectKey& key, std::string_view subresource) const {
  std::string path = Cat(CollectionPath(key.ns), "/", QueryEscape(key.name));
  if (!subresource.empty()) path += Cat("/", subresource);
  return path;
}

const ApiResource* FindApiResource(std::string_view resource) {
  for (const ApiResource& api : kApiResources) {
    if (api.resource == resource) return &api;
  }
  return nullptr;
}

std::string QueryEscape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

Object Normalize(const ApiResource& api, Object object) {
  if (!object.is_object()) return object;
  Object out = Object::object();
  out["apiVersion"] = api.ApiVersion();
  out["kind"] = api.kind;
  if (auto it = object.find("metadata"); it != object.end()) out["metadata"] = std::move(*it);
  for (auto& [k, v] : object.items()) {
    if (k == "apiVersion" || k == "kind" || k == "metadata") continue;
    out[k] = std::move(v);
  }
  return out;
}

}  // namespace clusterd::store::kube
