#pragma once

#include <string>
#include <string_view>

#include "store/object_store.h"

namespace clusterd::store::kube {

// Where a store resource lives in the Kubernetes API.
struct ApiResource {
  std::string_view resource;  // the store's name, which is also the API plural
  std::string_view group;     // "" for core/v1
  std::string_view version;
  std::string_view kind;
  bool namespaced;
  // Writes to the main resource keep the status; /status writes change only the status.
  bool status_subresource;
  // A CustomResourceDefinition (Volcano, MindX DL): strategic merge patches are not accepted.
  bool custom;
  // The server refuses an update without a resourceVersion (422 "must be specified for an
  // update"): custom resources and Leases (their strategies do not allow unconditional
  // updates); ConfigMaps, Pods, Nodes and Events do.
  bool update_needs_version;

  // "v1" or "group/version".
  std::string ApiVersion() const;
  // /api/v1[/namespaces/NS]/RESOURCE or /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE. An
  // empty `ns` of a namespaced resource is the all-namespaces path.
  std::string CollectionPath(std::string_view ns) const;
  // The object's path, with "/status" appended when `subresource` is "status".
  std::string ObjectPath(const ObjectKey& key, std::string_view subresource = "") const;
};

// The API resource of a store resource; null for an unknown one.
const ApiResource* FindApiResource(std::string_view resource);

// Percent-encoding of a query value (RFC 3986 unreserved characters stay).
std::string QueryEscape(std::string_view value);

// The object as the store keeps it: apiVersion and kind of `api` (list items of built-in kinds
// come without them), then metadata, then the other fields in the server's order.
Object Normalize(const ApiResource& api, Object object);

}  // namespace clusterd::store::kube
