#pragma once

#include <string>

#include "store/object_store.h"

namespace clusterd::store::kube {

// What the cache of one reflector holds: every object of its resource (cluster-wide), or only
// those of one namespace and/or one field selector (the objects the server lists and watches
// with `/namespaces/NS/...` and `fieldSelector=`). A process that reads a small part of the
// cluster (an npu-agent: the pods of its node, a few ConfigMaps by name) then caches that part
// only, as client-go's informers with a field selector do.
struct ReadScope {
  std::string ns;        // empty: all namespaces
  FieldSelector fields;  // empty: every object

  bool ClusterWide() const { return ns.empty() && fields.Empty(); }
  // Equal for the requests that select the same objects ("a=1,b=2" and "b==2,a=1"), so that
  // they share one reflector.
  std::string Key() const;
  // Whether `object` belongs in this scope.
  bool Holds(const Object& object) const;
  // Whether this scope's cache alone says whether `key` exists: the scope is decided by the
  // key's namespace and name only (no other field), and includes the key. A Get of the key can
  // then be served from it (found, or NotFound).
  bool Covers(const ObjectKey& key) const;
  // For logs and errors: "all namespaces", "namespace kube-system, fields metadata.name=x".
  std::string ToString() const;
};

}  // namespace clusterd::store::kube
