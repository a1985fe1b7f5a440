#include "store/memory/memory_store.h"

#include <utility>

#include "store/admission.h"

namespace clusterd::store {

MemoryStore::MemoryStore(Options options) : clock_(options.clock), cache_(options.history_limit) {}

absl::StatusOr<Object> MemoryStore::Get(const ObjectKey& key) { return cache_.Get(key); }

absl::StatusOr<ObjectList> MemoryStore::List(std::string_view resource,
                                             const ListOptions& options) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  return cache_.List(resource, options);
}

absl::StatusOr<SharedObjectList> MemoryStore::ListShared(std::string_view resource,
                                                         const ListOptions& options) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  return cache_.ListShared(resource, options);
}

absl::StatusOr<std::unique_ptr<WatchHandle>> MemoryStore::Watch(std::string_view resource,
                                                                const WatchOptions& options,
                                                                WatchHandler handler) {
  return cache_.Watch(resource, options, std::move(handler));
}

Object MemoryStore::Commit(const ObjectKey& key, Object object) {
  // A no-op update or patch: no new version and no event (admission.h).
  if (auto stored = cache_.Find(key); stored != nullptr && ChangesNothing(*stored, object)) {
    return *stored;
  }
  SetResourceVersion(object, ++resource_version_);
  return *cache_.Put(key, std::move(object), resource_version_);
}

absl::StatusOr<Object> MemoryStore::Create(std::string_view resource, Object object) {
  auto admitted = AdmitCreate(resource, std::move(object), clock_->Now());
  if (!admitted.ok()) return admitted.status();
  ObjectKey key = KeyOf(resource, *admitted);
  absl::MutexLock lock(&write_mu_);
  if (cache_.Find(key) != nullptr) return AlreadyExistsError(key);
  return Commit(key, *std::move(admitted));
}

absl::StatusOr<Object> MemoryStore::Update(std::string_view resource, Object object) {
  if (absl::Status s = ValidateObject(resource, object); !s.ok()) return s;
  ObjectKey key = KeyOf(resource, object);
  absl::MutexLock lock(&write_mu_);
  auto stored = cache_.Find(key);
  if (stored == nullptr) return NotFoundError(key);
  auto admitted = AdmitUpdate(resource, *stored, std::move(object));
  if (!admitted.ok()) return admitted.status();
  return Commit(key, *std::move(admitted));
}

absl::StatusOr<Object> MemoryStore::Patch(const ObjectKey& key, const Object& merge_patch) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  absl::MutexLock lock(&write_mu_);
  auto stored = cache_.Find(key);
  if (stored == nullptr) return NotFoundError(key);
  auto admitted = AdmitPatch(key, *stored, merge_patch);
  if (!admitted.ok()) return admitted.status();
  return Commit(key, *std::move(admitted));
}

absl::Status MemoryStore::Delete(const ObjectKey& key, std::string_view resource_version) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  absl::MutexLock lock(&write_mu_);
  auto stored = cache_.Find(key);
  if (stored == nullptr) return NotFoundError(key);
  if (absl::Status s = AdmitDelete(key, *stored, resource_version); !s.ok()) return s;
  cache_.Remove(key, ++resource_version_);
  return absl::OkStatus();
}

}  // namespace clusterd::store
