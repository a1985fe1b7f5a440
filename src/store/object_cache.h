#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/object_store.h"
#include "store/watch_hub.h"

namespace clusterd::store {

// The committed state of a store as its readers see it: the objects, the store-wide
// resourceVersion and the watches. Both backends serve Get/List/Watch from it and commit
// every change through Put/Remove, which update the objects and publish the change atomically
// with respect to Watch (no event is lost or doubled between a watch's initial list and its
// stream).
//
// Put/Remove must be called with strictly increasing versions; the backend serialises its
// writers (and owns the version counter) around its own precondition checks.
class ObjectCache {
 public:
  explicit ObjectCache(size_t history_limit);

  std::shared_ptr<const Object> Find(const ObjectKey& key) const;
  absl::StatusOr<Object> Get(const ObjectKey& key) const;
  ObjectList List(std::string_view resource, const ListOptions& options) const;
  // The same objects, shared with the cache (no copy).
  SharedObjectList ListShared(std::string_view resource, const ListOptions& options) const;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view resource,
                                                     const WatchOptions& options,
                                                     WatchHandler handler);

  // Commits `object` (its metadata.resourceVersion is `resource_version`) as ADDED or MODIFIED.
  // Returns the stored object.
  std::shared_ptr<const Object> Put(const ObjectKey& key, Object object, uint64_t resource_version);
  // Commits the deletion of `key` (no-op if absent): DELETED carries the last state with
  // `resource_version`. Returns that last state.
  std::shared_ptr<const Object> Remove(const ObjectKey& key, uint64_t resource_version);

  // Startup: stores without publishing, then Reset() makes `resource_version` the current
  // version and the oldest one a watch may start from. Quickest in key order.
  void Load(const ObjectKey& key, Object object);
  void Reset(uint64_t resource_version);

  uint64_t LastResourceVersion() const;
  // Stops every open watch; see WatchHub::StopAll().
  void StopWatches() { hub_.StopAll(); }
  // Keys of the cached objects of `resource`, optionally in one namespace.
  std::vector<ObjectKey> Keys(std::string_view resource,
                              std::optional<std::string_view> ns = std::nullopt) const;

 private:
  mutable absl::Mutex mu_;
  std::map<ObjectKey, std::shared_ptr<const Object>> objects_ ABSL_GUARDED_BY(mu_);
  uint64_t last_resource_version_ ABSL_GUARDED_BY(mu_) = 0;
  WatchHub hub_;  // declared last: destroyed (stopping the watches) first
};

}  // namespace clusterd::store
