#include "store/object_cache.h"

#include <algorithm>
#include <cassert>

#include "store/admission.h"
#include "store/strings.h"

namespace clusterd::store {
ObjectCache::ObjectCache(size_t history_limit) : hub_(history_limit) {}

std::shared_ptr<const Object> ObjectCache::Find(const ObjectKey& key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

absl::StatusOr<Object> ObjectCache::Get(const ObjectKey& key) const {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  auto found = Find(key);
  if (found == nullptr) return NotFoundError(key);
  return *found;
}

ObjectList ObjectCache::List(std::string_view resource, const ListOptions& options) const {
  SharedObjectList shared = ListShared(resource, options);
  ObjectList list;
  list.items.reserve(shared.items.size());
  for (const auto& o : shared.items) list.items.push_back(*o);
  list.resource_version = std::move(shared.resource_version);
  return list;
}

SharedObjectList ObjectCache::ListShared(std::string_view resource,
                                         const ListOptions& options) const {
  SharedObjectList list;
  absl::ReaderMutexLock lock(&mu_);
  ObjectKey first{std::string(resource), options.ns, ""};
  for (auto it = objects_.lower_bound(first);
       it != objects_.end() && it->first.resource == resource; ++it) {
    if (!options.ns.empty() && it->first.ns != options.ns) break;
    if (options.selector.Matches(*it->second) && options.fields.Matches(*it->second)) {
      list.items.push_back(it->second);
    }
  }
  list.resource_version = Cat(last_resource_version_);
  return list;
}

absl::StatusOr<std::unique_ptr<WatchHandle>> ObjectCache::Watch(std::string_view resource,
                                                                const WatchOptions& options,
                                                                WatchHandler handler) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  // Shared lock: Put/Remove cannot run between the snapshot and the registration.
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::shared_ptr<const Object>> initial;
  if (options.resource_version.empty()) {
    ObjectKey first{std::string(resource), options.ns, ""};
    for (auto it = objects_.lower_bound(first);
         it != objects_.end() && it->first.resource == resource; ++it) {
      if (!options.ns.empty() && it->first.ns != options.ns) break;
      initial.push_back(it->second);
    }
    std::stable_sort(initial.begin(), initial.end(), [](const auto& a, const auto& b) {
      return ResourceVersionNumber(*a) < ResourceVersionNumber(*b);
    });
  }
  return hub_.Watch(resource, options, std::move(handler), initial);
}

std::shared_ptr<const Object> ObjectCache::Put(const ObjectKey& key, Object object,
                                               uint64_t resource_version) {
  auto stored = std::make_shared<const Object>(std::move(object));
  absl::MutexLock lock(&mu_);
  assert(resource_version > last_resource_version_);
  auto& slot = objects_[key];
  Change change{slot == nullptr ? WatchEventType::kAdded : WatchEventType::kModified, key.resource,
                stored, slot, resource_version};
  slot = stored;
  last_resource_version_ = resource_version;
  hub_.Publish(std::move(change));
  return stored;
}

std::shared_ptr<const Object> ObjectCache::Remove(const ObjectKey& key, uint64_t resource_version) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  assert(resource_version > last_resource_version_);
  auto last = std::make_shared<Object>(*it->second);
  SetResourceVersion(*last, resource_version);
  objects_.erase(it);
  last_resource_version_ = resource_version;
  hub_.Publish(Change{WatchEventType::kDeleted, key.resource, last, nullptr, resource_version});
  return last;
}

void ObjectCache::Load(const ObjectKey& key, Object object) {
  absl::MutexLock lock(&mu_);
  // The stores load in key order: at the end is where the next key goes, found without a search
  // (a key out of order is still put in its place).
  objects_.insert_or_assign(objects_.end(), key, std::make_shared<const Object>(std::move(object)));
}

void ObjectCache::Reset(uint64_t resource_version) {
  absl::MutexLock lock(&mu_);
  last_resource_version_ = resource_version;
  hub_.ResetHistory(resource_version);
}

uint64_t ObjectCache::LastResourceVersion() const {
  absl::ReaderMutexLock lock(&mu_);
  return last_resource_version_;
}

std::vector<ObjectKey> ObjectCache::Keys(std::string_view resource,
                                         std::optional<std::string_view> ns) const {
  std::vector<ObjectKey> keys;
  absl::ReaderMutexLock lock(&mu_);
  ObjectKey first{std::string(resource), std::string(ns.value_or("")), ""};
  for (auto it = objects_.lower_bound(first);
       it != objects_.end() && it->first.resource == resource; ++it) {
    if (ns && it->first.ns != *ns) break;
    keys.push_back(it->first);
  }
  return keys;
}

}  // namespace clusterd::store
