#pragma once

// A store that passes every call to another one. Test doubles derive from it and override the
// calls they count or fail.

#include <memory>
#include <string_view>

#include "store/object_store.h"

namespace clusterd::testing {

class ForwardingStore : public store::ObjectStore {
 public:
  explicit ForwardingStore(store::ObjectStore& inner) : inner_(inner) {}

  absl::StatusOr<store::Object> Get(const store::ObjectKey& key) override {
    return inner_.Get(key);
  }
  absl::StatusOr<store::ObjectList> List(std::string_view resource,
                                         const store::ListOptions& options) override {
    return inner_.List(resource, options);
  }
  absl::StatusOr<std::unique_ptr<store::WatchHandle>> Watch(std::string_view resource,
                                                            const store::WatchOptions& options,
                                                            store::WatchHandler handler) override {
    return inner_.Watch(resource, options, std::move(handler));
  }
  absl::StatusOr<store::Object> Create(std::string_view resource, store::Object object) override {
    return inner_.Create(resource, std::move(object));
  }
  absl::StatusOr<store::Object> Update(std::string_view resource, store::Object object) override {
    return inner_.Update(resource, std::move(object));
  }
  absl::StatusOr<store::Object> Patch(const store::ObjectKey& key,
                                      const store::Object& patch) override {
    return inner_.Patch(key, patch);
  }
  absl::Status Delete(const store::ObjectKey& key, std::string_view version) override {
    return inner_.Delete(key, version);
  }
  absl::Status Ready() override { return inner_.Ready(); }

 protected:
  store::ObjectStore& inner_;
};

}  // namespace clusterd::testing
