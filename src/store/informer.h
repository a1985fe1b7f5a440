#pragma once

// One shared informer per resource (client-go's SharedInformer): the resource is listed and
// watched ONCE, into one cache with named indexes, and every consumer reads that cache and
// registers handlers on it instead of opening a store watch of its own. An idle clusterd thus
// runs one store watch (one `store-watch` delivery thread on the memory/dir stores) per
// resource instead of one per consumer.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/object_store.h"

namespace clusterd::store {

// Which of the informer's objects a handler sees: a namespace (empty = all), a label selector, a
// field selector and optionally a predicate. Selector semantics as for a store watch: an object
// entering the filter is ADDED, one leaving it is DELETED (with its last content that matched).
struct InformerFilter {
  std::string ns = {};
  LabelSelector selector = {};
  FieldSelector fields = {};
  std::function<bool(const Object&)> predicate = nullptr;  // null: every object

  bool Matches(const Object& object) const;
};

struct InformerHandler {
  InformerFilter filter = {};
  // Serialised with every other delivery of the informer (see SharedInformer::AddHandler).
  // Must not block: record what changed, enqueue a key, return.
  WatchHandler on_event = nullptr;
  // If set, the replay of the cached objects to a handler registered after the start goes here
  // instead of to on_event: a consumer that used to list, then watch from the listed version,
  // rebuilds its state without queueing work for every object.
  WatchHandler on_replay = nullptr;
};

// The values an object has for one index (e.g. a pod's node name); empty = not in the index.
using IndexFunc = std::function<std::vector<std::string>(const Object&)>;

// Dropping it unregisters the handler; after the destructor returns the handler is not called
// again. May be dropped from inside the handler itself (or another handler of the informer).
class InformerRegistration {
 public:
  virtual ~InformerRegistration() = default;
};

// The cache of one resource, kept by one list + watch (all namespaces, no selector).
//
// Deliveries are serialised by the informer: the stream's events arrive on the store's watch
// thread (the informer adds no thread of its own), the replay of the current objects to a
// handler registered after the start runs on the registering thread, inside AddHandler. Either
// way the cache already holds the change when a handler sees it, and no two deliveries of one
// informer overlap. So a handler must not take a lock that is held while registering or
// unregistering a handler of the same informer.
//
// Errors are those of the store watches it replaces: Start() fails if the list or the watch
// cannot be opened; a watch from the listed version that is already too old (OutOfRange, "410
// Gone") is answered by listing again, the difference delivered as events. The kube store's
// reflector keeps the stream itself alive (its own relists and back-off).
class SharedInformer {
 public:
  SharedInformer(ObjectStore& store, std::string_view resource);
  ~SharedInformer();  // Stop()

  SharedInformer(const SharedInformer&) = delete;
  SharedInformer& operator=(const SharedInformer&) = delete;

  const std::string& resource() const;

  // Adds a named index, built at once over the objects already cached. AlreadyExists if the
  // name is taken: a name stands for one function, whoever registers it first.
  absl::Status AddIndex(std::string_view name, IndexFunc index);

  // Registers a handler. Before Start() it receives the initial list as ADDED; after it, the
  // objects cached now that match its filter are delivered as ADDED (to on_replay if set)
  // before AddHandler returns, then every change.
  std::unique_ptr<InformerRegistration> AddHandler(InformerHandler handler);

  // Lists, delivers the list, then watches from the listed version. Idempotent; after Stop()
  // it starts again (the new list is delivered as the difference to the cache).
  absl::Status Start();
  // Closes the watch; after it returns no handler is called. The cache and the registrations
  // stay.
  void Stop();
  // True once the initial list is in the cache and was delivered.
  bool HasSynced() const;

  // Reads, under a reader lock. Objects are shared and never modified.
  std::shared_ptr<const Object> Get(std::string_view ns, std::string_view name) const;
  std::vector<std::shared_ptr<const Object>> List() const;  // by namespace/name
  // The objects whose index function gave `value`, by namespace/name; empty for an unknown
  // index.
  std::vector<std::shared_ptr<const Object>> ByIndex(std::string_view index,
                                                     std::string_view value) const;
  size_t Size() const;

  // Waits until the change with this resourceVersion (or a later one of this resource) is in
  // the cache and was delivered to the handlers; false after `timeout`. For tests, which cannot
  // otherwise know when the asynchronous watch delivered their write.
  bool WaitForVersion(std::string_view resource_version, absl::Duration timeout) const;

  // "namespace/name", or "name" for a cluster-scoped object (the cache's key).
  static std::string KeyOf(std::string_view ns, std::string_view name);

  struct Core;  // named here only so that registrations can refer to it

 private:
  std::shared_ptr<Core> core_;
};

// Hands out the one informer per resource of a process. Owned by the assembly (ClusterBrain),
// which stops it after the rooms and before the store goes.
class InformerFactory {
 public:
  explicit InformerFactory(ObjectStore& store) : store_(store) {}
  ~InformerFactory() { Stop(); }

  InformerFactory(const InformerFactory&) = delete;
  InformerFactory& operator=(const InformerFactory&) = delete;

  ObjectStore& store() { return store_; }

  // The informer of `resource`, created (not started) on first use.
  SharedInformer& For(std::string_view resource);
  // Starts every informer handed out so far, in the order they were first asked for. One
  // handed out later is started by its user (SharedInformer::Start is idempotent).
  absl::Status Start();
  // Stops them all, the last created first.
  void Stop();

 private:
  ObjectStore& store_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<SharedInformer>> informers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::store
