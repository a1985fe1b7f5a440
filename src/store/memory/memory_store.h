#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "store/object_cache.h"
#include "store/object_store.h"

namespace clusterd::store {

// The `memory` backend: the ObjectStore contract with nothing behind it, for tests and the
// simulator. Versions start at 1 for each store.
class MemoryStore final : public ObjectStore {
 public:
  struct Options {
    // Events kept for Watch from a resourceVersion; older versions get OutOfRange.
    size_t history_limit = 10000;
    const Clock* clock = &Clock::Real();
  };

  MemoryStore() : MemoryStore(Options{}) {}
  explicit MemoryStore(Options options);

  absl::StatusOr<Object> Get(const ObjectKey& key) override;
  absl::StatusOr<ObjectList> List(std::string_view resource, const ListOptions& options) override;
  absl::StatusOr<SharedObjectList> ListShared(std::string_view resource,
                                              const ListOptions& options) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view resource,
                                                     const WatchOptions& options,
                                                     WatchHandler handler) override;
  absl::StatusOr<Object> Create(std::string_view resource, Object object) override;
  absl::StatusOr<Object> Update(std::string_view resource, Object object) override;
  absl::StatusOr<Object> Patch(const ObjectKey& key, const Object& merge_patch) override;
  absl::Status Delete(const ObjectKey& key, std::string_view resource_version = "") override;

 private:
  // Commits `object` under `key` with the next version; requires write_mu_. A no-op write
  // (ChangesNothing) returns the stored object and commits nothing.
  Object Commit(const ObjectKey& key, Object object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const Clock* clock_;
  // Serialises writers: a precondition check and its commit are one step.
  absl::Mutex write_mu_;
  uint64_t resource_version_ ABSL_GUARDED_BY(write_mu_) = 0;
  ObjectCache cache_;
};

}  // namespace clusterd::store
