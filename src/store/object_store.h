#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::store {

// Objects are Kubernetes-shaped JSON: apiVersion, kind, metadata{name, namespace, labels,
// annotations, uid, resourceVersion, ownerReferences, ...}, then data/spec/status.
// ordered_json keeps the field order a writer chose, so files read like kubectl output.
using Object = nlohmann::ordered_json;

// Lower-case plural resource names without API group, as in the `dir` layout:
// configmaps, pods, nodes, podgroups, ascendjobs, jobs, leases, events.
inline constexpr std::string_view kConfigMaps = "configmaps";
inline constexpr std::string_view kPods = "pods";
inline constexpr std::string_view kNodes = "nodes";
inline constexpr std::string_view kPodGroups = "podgroups";
inline constexpr std::string_view kAscendJobs = "ascendjobs";
inline constexpr std::string_view kJobs = "jobs";
inline constexpr std::string_view kLeases = "leases";
inline constexpr std::string_view kEvents = "events";

// True for resources without a namespace (only nodes among the known ones).
bool IsClusterScoped(std::string_view resource);
// True for the resources listed above.
bool IsKnownResource(std::string_view resource);

struct ObjectKey {
  std::string resource;
  std::string ns;  // empty for cluster-scoped resources
  std::string name;

  std::string ToString() const;  // "configmaps/kube-system/name" or "nodes/name"
  auto operator<=>(const ObjectKey&) const = default;
};

// Equality-based label selector (what the project uses): "a=b,c!=d,e,!f".
class LabelSelector {
 public:
  LabelSelector() = default;
  static absl::StatusOr<LabelSelector> Parse(std::string_view text);
  bool Matches(const Object& object) const;  // reads metadata.labels
  bool Empty() const { return requirements_.empty(); }
  std::string ToString() const;

  enum class Op { kEquals, kNotEquals, kExists, kNotExists };
  struct Requirement {
    std::string key;
    Op op;
    std::string value;
  };

 private:
  std::vector<Requirement> requirements_;
};

// Equality-based field selector (what the project uses): "spec.nodeName=node-1,status.phase!=x",
// the API server's fieldSelector. A field is a dotted path read as a string; an absent or
// non-string field reads as "" (so "spec.nodeName=" selects the pods not bound to a node). In a
// value, a backslash, ',' and '=' are escaped with a backslash, as Kubernetes escapes them.
// Which fields a resource may be selected by is the API server's rule (CheckFieldSelector in
// admission.h: metadata.name, metadata.namespace of namespaced resources, and for pods
// spec.nodeName and status.phase); every store refuses the others, as the server does.
class FieldSelector {
 public:
  FieldSelector() = default;
  static absl::StatusOr<FieldSelector> Parse(std::string_view text);
  // The objects whose `field` is `value` (any value: nothing to escape).
  static FieldSelector Equal(std::string_view field, std::string_view value);
  bool Matches(const Object& object) const;
  bool Empty() const { return requirements_.empty(); }
  // Parseable again, in the order given (the query parameter a kube store sends).
  std::string ToString() const;

  enum class Op { kEquals, kNotEquals };
  struct Requirement {
    std::string field;  // dotted path, e.g. "spec.nodeName"
    Op op;
    std::string value;
  };
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

struct ListOptions {
  std::string ns;  // empty = all namespaces
  LabelSelector selector;
  FieldSelector fields;
};

struct ObjectList {
  std::vector<Object> items;
  std::string resource_version;  // store-wide version at the time of the list
};

// A list whose objects are shared with the store's cache: no copy is made, and the objects are
// never modified (a change replaces the cached pointer).
struct SharedObjectList {
  std::vector<std::shared_ptr<const Object>> items;
  std::string resource_version;  // store-wide version at the time of the list
};

enum class WatchEventType { kAdded, kModified, kDeleted };
std::string_view ToString(WatchEventType type);  // ADDED, MODIFIED, DELETED

// One change seen by a watch. The object is shared, never copied, between the store's cache,
// every watch that sees the change and every consumer that keeps it (the shared informers), so
// that a process holds one copy of each object however many rooms read it.
class WatchEvent {
 public:
  WatchEvent(WatchEventType type, Object object)
      : type(type), object_(std::make_shared<const Object>(std::move(object))) {}
  WatchEvent(WatchEventType type, std::shared_ptr<const Object> object)
      : type(type), object_(std::move(object)) {}

  WatchEventType type;
  // For kDeleted: the last known state.
  const Object& object() const { return *object_; }
  const std::shared_ptr<const Object>& shared_object() const { return object_; }

 private:
  std::shared_ptr<const Object> object_;
};

// Handler is called on a store-owned thread, serialised per watch, in resourceVersion order.
// It must not block for long: enqueue a key into a work queue and return.
using WatchHandler = std::function<void(const WatchEvent&)>;

// Dropping the handle stops the watch; after the destructor returns the handler is not called.
class WatchHandle {
 public:
  virtual ~WatchHandle() = default;
};

struct WatchOptions {
  std::string ns;  // empty = all namespaces
  LabelSelector selector;
  FieldSelector fields;
  // Empty: first deliver ADDED for every existing object, then changes (list+watch in one).
  // Otherwise: deliver every change after this version; a version older than the store's
  // history fails with absl::StatusCode::kOutOfRange ("410 Gone").
  std::string resource_version;
};

// The object store of the architecture: one interface, several backends (memory, dir:PATH,
// kube). All methods are thread-safe. Errors:
//   NotFound         the object does not exist
//   AlreadyExists    Create of an existing name
//   Aborted          optimistic-concurrency conflict (resourceVersion mismatch, "409 Conflict")
//   InvalidArgument  malformed object or request
//   OutOfRange       watch from a version that is no longer available ("410 Gone")
//   Unavailable      the backend cannot be reached (I/O error, API server down)
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  virtual absl::StatusOr<Object> Get(const ObjectKey& key) = 0;
  virtual absl::StatusOr<ObjectList> List(std::string_view resource,
                                          const ListOptions& options) = 0;
  // List without copying the objects, for consumers that keep them (the shared informers). The
  // default wraps List(); the backends with a cache of their own hand out its objects.
  virtual absl::StatusOr<SharedObjectList> ListShared(std::string_view resource,
                                                      const ListOptions& options);
  virtual absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view resource,
                                                             const WatchOptions& options,
                                                             WatchHandler handler) = 0;

  // Create assigns metadata.uid (if absent), metadata.resourceVersion and
  // metadata.creationTimestamp. Returns the stored object.
  virtual absl::StatusOr<Object> Create(std::string_view resource, Object object) = 0;
  // Update replaces the object. If metadata.resourceVersion is set it must equal the stored
  // one (else Aborted); if it is empty the update is unconditional. As on the API server, an
  // update or patch that changes nothing but the resourceVersion is not committed: the stored
  // object comes back at its version, and no watch event follows.
  virtual absl::StatusOr<Object> Update(std::string_view resource, Object object) = 0;
  // JSON merge patch (RFC 7386) applied to the stored object; metadata.name/namespace/uid
  // cannot change. A patch carrying metadata.resourceVersion is a precondition.
  virtual absl::StatusOr<Object> Patch(const ObjectKey& key, const Object& merge_patch) = 0;
  // Deletes the object; a non-empty resource_version is a precondition.
  virtual absl::Status Delete(const ObjectKey& key, std::string_view resource_version = "") = 0;

  // OK when the store is in step with its backend; otherwise why not (kube: a resource not
  // synced, the API server unreachable). Reads may still be served from a cache meanwhile.
  // For readiness probes.
  virtual absl::Status Ready() { return absl::OkStatus(); }
};

// Helpers over Kubernetes-shaped objects.
std::string NameOf(const Object& o);
std::string NamespaceOf(const Object& o);
std::string ResourceVersionOf(const Object& o);
std::string UidOf(const Object& o);
ObjectKey KeyOf(std::string_view resource, const Object& o);
// RFC 7386 JSON merge patch.
void ApplyMergePatch(Object& target, const Object& patch);
// Kubernetes' limit on a ConfigMap's data plus binaryData.
inline constexpr size_t kMaxConfigMapDataBytes = size_t{1} << 20;
// Validates what every backend requires of an object: metadata.name is a DNS-1123 subdomain,
// metadata.namespace present exactly for namespaced resources, labels/annotations are string
// maps, a ConfigMap's data within kMaxConfigMapDataBytes.
absl::Status ValidateObject(std::string_view resource, const Object& o);

// Creates a store from its command-line spelling: "memory", "dir:PATH", or "kube" (the
// Kubernetes API server: in-cluster service-account credentials, or options.kubeconfig), or
// "kube:KUBECONFIG".
struct StoreOptions {
  std::string kubeconfig;    // kube: a kubeconfig file instead of the in-cluster credentials
  std::string kube_context;  // kube: a context of the kubeconfig instead of current-context
  // kube: the process reads a small part of the cluster (npu-agent, one per node), so that no
  // read starts the cache of a whole resource: see KubeStore::Options::scoped_reads.
  bool kube_scoped_reads = false;
};
absl::StatusOr<std::unique_ptr<ObjectStore>> OpenStore(std::string_view spec);
absl::StatusOr<std::unique_ptr<ObjectStore>> OpenStore(std::string_view spec,
                                                       const StoreOptions& options);

}  // namespace clusterd::store
