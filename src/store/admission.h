#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/object_store.h"

// The write rules every backend applies, so that memory, dir and (later) kube agree on them:
// what Create/Update/Patch/Delete may do to an object, given the stored version. Pure
// functions: the backends own the locking, the version counter and the storage.
namespace clusterd::store {

// Every resource the store knows, in the order of object_store.h.
inline constexpr std::array<std::string_view, 8> kKnownResources = {
    kConfigMaps, kPods, kNodes, kPodGroups, kAscendJobs, kJobs, kLeases, kEvents};

// InvalidArgument unless `resource` is one of the known resources.
absl::Status CheckResource(std::string_view resource);
// Checks a key passed to Get/Patch/Delete: known resource, name present, namespace present
// exactly for namespaced resources.
absl::Status CheckKey(const ObjectKey& key);
// Checks the namespace filter of a List/Watch.
absl::Status CheckNamespaceFilter(std::string_view resource, std::string_view ns);
// Checks that `resource` may be selected by every field of `fields`, by the API server's rule:
// metadata.name; metadata.namespace for namespaced resources; for pods also spec.nodeName and
// status.phase. Otherwise InvalidArgument naming the field ("field label not supported: X",
// the server's 400).
absl::Status CheckFieldSelector(std::string_view resource, const FieldSelector& fields);
// Both checks of a List/Watch: the namespace filter and the field selector.
absl::Status CheckReadFilter(std::string_view resource, std::string_view ns,
                             const FieldSelector& fields);

// Object to store for a Create: validated, metadata.uid assigned when absent,
// metadata.creationTimestamp set to `now`, metadata.resourceVersion removed (the backend sets
// it).
absl::StatusOr<Object> AdmitCreate(std::string_view resource, Object object, absl::Time now);

// Object to store for an Update of `stored`: the resourceVersion precondition (Aborted on
// mismatch), uid must match if given, uid and creationTimestamp carried over.
absl::StatusOr<Object> AdmitUpdate(std::string_view resource, const Object& stored, Object update);

// Object to store for a JSON merge patch of `stored`. metadata.resourceVersion in the patch is
// a precondition; name, namespace and uid are immutable.
absl::StatusOr<Object> AdmitPatch(const ObjectKey& key, const Object& stored,
                                  const Object& merge_patch);

// True when writing `admitted` over `stored` would change nothing but the resourceVersion. The
// API server answers such an update or patch with the stored object, at its own version, and
// sends no watch event (a no-op write is not committed); every backend does the same. Members
// are compared in order, so an object that only reorders its members is still written.
bool ChangesNothing(const Object& stored, const Object& admitted);

// Precondition of a Delete: Aborted if `resource_version` is set and differs.
absl::Status AdmitDelete(const ObjectKey& key, const Object& stored,
                         std::string_view resource_version);

// Sets (or replaces) a metadata string field, placing a new one in the conventional
// Kubernetes position (name, namespace, uid, resourceVersion, creationTimestamp first) while
// keeping the order of every other field.
void SetMetadataField(Object& object, std::string_view field, std::string value);
void SetResourceVersion(Object& object, uint64_t resource_version);

// Parses a decimal resourceVersion; nullopt when it is not one.
std::optional<uint64_t> ParseResourceVersion(std::string_view text);
// An object's resourceVersion as a number; 0 when it has none or it is not decimal.
uint64_t ResourceVersionNumber(const Object& o);

// Random UUID (version 4) in canonical text form.
std::string NewUid();
// RFC 3339 in UTC with whole seconds, as Kubernetes writes creationTimestamp.
std::string FormatTimestamp(absl::Time t);

// Messages shared by the backends.
absl::Status NotFoundError(const ObjectKey& key);
absl::Status AlreadyExistsError(const ObjectKey& key);

}  // namespace clusterd::store
