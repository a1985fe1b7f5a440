#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "store/kube/api_client.h"
#include "store/kube/api_resource.h"
#include "store/kube/kube_config.h"
#include "store/kube/reflector.h"
#include "store/object_store.h"

namespace clusterd::store::kube {

// The `kube` backend: the Kubernetes API server is the store (ARCHITECTURE.md §4).
//
// Reads are served from a cache that one Reflector per resource keeps equal to the server
// (list, then watch with bookmarks; re-list on 410 Gone; reconnect with jittered back-off), so
// they keep working while the server is unreachable. A List or Watch scoped by a namespace or a
// field selector, of a resource without that cluster-wide cache, starts a reflector of its scope
// only (ReadScope: `/namespaces/NS/...?fieldSelector=...`, shared by the reads of the same
// scope), so that a process that reads a small part of the cluster caches that part only:
//   Get     from the cache; a write of this store is visible to its next read (each write
//           waits, bounded, until the caches that hold the object have seen the version the
//           server returned). Without a cluster-wide cache, from a scoped cache that alone
//           decides the key (a watch of the object by name); else, with `scoped_reads`, from
//           the server (GET); else the cluster-wide cache is started.
//   List    from the server (a consistent read with the server's store-wide resourceVersion,
//           as the other backends return); from the cache when the server is unreachable.
//           ListShared (the shared informers' list before their watch) from the cache.
//   Watch   from the cache's event history (WatchHub): "" lists then watches; a version older
//           than the cache's history is OutOfRange (410), as on the other backends.
// Writes go to the server: Create (POST), Update (PUT, 409 Conflict -> Aborted; custom
// resources need a resourceVersion, so an unconditional Update reads the object and retries
// on conflict), Patch (JSON merge patch), Delete (preconditions in DeleteOptions). For kinds
// with a status subresource, a status given to Create/Update/Patch is written through /status.
// While the server cannot be reached (no connection), writes are queued in order and applied
// by a writer thread once it answers again; the caller gets OK with the object as it will be
// written (without a resourceVersion), and Get/List show it (docs/deploy.md). The write's own
// preconditions are checked against that state when it is queued; one that the server refuses
// when it is applied is dropped, logged and counted (clusterd_kube_queued_writes_total).
// Ready() is Unavailable while a resource is not synced, the server cannot be reached or writes
// are queued.
// A resource is cached from its first read on: a watch from a version older than that is
// OutOfRange (410 Gone), as after a compaction; list first (List starts the cache too).
class KubeStore final : public ObjectStore {
 public:
  struct Options {
    KubeConfig config;
    // Events kept for Watch from a resourceVersion, per resource.
    size_t history_limit = 10000;
    double qps = 50;
    int64_t burst = 100;
    absl::Duration request_timeout = absl::Seconds(15);
    absl::Duration connect_timeout = absl::Seconds(5);
    absl::Duration watch_timeout = absl::Minutes(5);
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(30);
    // Open() fails when the eager resources are not listed within this time.
    absl::Duration sync_timeout = absl::Seconds(60);
    // Longest wait of a write for its own watch event (read-your-writes).
    absl::Duration write_sync_timeout = absl::Seconds(5);
    size_t page_size = 500;
    // Writes held while the API server is unreachable; beyond this they fail (Unavailable).
    size_t max_queued_writes = 10000;
    // Cached from Open(); the others from their first read (Get, List or Watch), so that a
    // process caches only what it reads (an npu-agent on every node must not cache every pod).
    std::vector<std::string> eager_resources;
    // For a process that reads a small part of the cluster (npu-agent, one per node): a Get that
    // no cache covers asks the server (GET) instead of starting the cache of every object of its
    // resource; only the scopes it lists or watches are cached. Such a Get fails (Unavailable)
    // while the server cannot be reached. clusterd keeps the default: it reads whole resources
    // through its shared informers, and its Gets are served from their caches.
    bool scoped_reads = false;
    const Clock* clock = &Clock::Real();
  };

  static absl::StatusOr<std::unique_ptr<KubeStore>> Open(Options options);
  ~KubeStore() override;

  absl::StatusOr<Object> Get(const ObjectKey& key) override;
  absl::StatusOr<ObjectList> List(std::string_view resource, const ListOptions& options) override;
  // From the reflector's cache, whose events a Watch from the returned version delivers: a
  // shared informer's list + watch costs the server one LIST, the reflector's. With writes
  // queued, as List.
  absl::StatusOr<SharedObjectList> ListShared(std::string_view resource,
                                              const ListOptions& options) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view resource,
                                                     const WatchOptions& options,
                                                     WatchHandler handler) override;
  absl::StatusOr<Object> Create(std::string_view resource, Object object) override;
  absl::StatusOr<Object> Update(std::string_view resource, Object object) override;
  absl::StatusOr<Object> Patch(const ObjectKey& key, const Object& merge_patch) override;
  absl::Status Delete(const ObjectKey& key, std::string_view resource_version = "") override;
  absl::Status Ready() override;

  const KubeConfig& config() const { return options_.config; }
  // Writes waiting for the API server.
  size_t queued_writes();

 private:
  enum class WriteOp { kCreate, kUpdate, kPatch, kDelete };
  struct QueuedWrite {
    WriteOp op;
    ObjectKey key;
    Object body;               // create/update: the object; patch: the merge patch
    std::string precondition;  // delete: the resourceVersion precondition
    // An earlier attempt may have reached the server (a timeout): AlreadyExists after a
    // create, NotFound after a delete then mean it did.
    bool attempted = false;
  };

  explicit KubeStore(Options options);

  absl::StatusOr<Object> CreateOnline(const ApiResource& api, const ObjectKey& key,
                                      const Object& object);
  absl::StatusOr<Object> UpdateOnline(const ApiResource& api, const ObjectKey& key, Object object);
  absl::StatusOr<Object> PatchOnline(const ApiResource& api, const ObjectKey& key,
                                     const Object& merge_patch);
  absl::Status DeleteOnline(const ApiResource& api, const ObjectKey& key,
                            std::string_view resource_version);

  // Whether writes go to the queue now (the server is unreachable, or earlier writes wait).
  bool Queueing() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);
  // Queues a write, checking it against the state it will apply to; returns that state.
  absl::StatusOr<std::optional<Object>> EnqueueLocked(QueuedWrite write, const Object* object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);
  // The object as this store shows it: the queued state, else the cache's; nullopt if none.
  std::optional<Object> CurrentLocked(const ObjectKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);
  absl::Status Replay(const QueuedWrite& write);
  void WriterLoop();
  // The queued state over a list from the cache.
  void OverlayLocked(std::string_view resource, const ListOptions& options, ObjectList* list)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);

  // The synced reflector whose cache serves a List/Watch of `scope`: the one of exactly this
  // scope, else the cluster-wide one, else one started for this scope (cluster-wide for an
  // unscoped read); Unavailable if it cannot sync.
  absl::StatusOr<Reflector*> ReflectorFor(std::string_view resource, const ReadScope& scope);
  // The reflector of exactly (resource, scope), started if there is none.
  Reflector* StartedReflector(std::string_view resource, const ReadScope& scope);
  // The reflector of exactly (resource, scope); null if there is none.
  Reflector* FindReflector(std::string_view resource, const ReadScope& scope);
  // A synced scoped reflector whose cache alone decides `key` (ReadScope::Covers); null if none.
  Reflector* CoveringReflector(const ObjectKey& key);
  // The synced reflectors whose cache a write of `key` changes: the cluster-wide one, and the
  // scoped ones that hold the key now or will hold `written` (null for a deletion).
  std::vector<Reflector*> ReflectorsSeeing(const ObjectKey& key, const Object* written);

  absl::StatusOr<ApiClient::Response> Send(std::string method, std::string path, const Object* body,
                                           std::string content_type = "application/json");
  absl::StatusOr<Object> ParseObject(const ApiResource& api, const ApiClient::Response& response,
                                     std::string_view what);
  absl::StatusOr<Object> GetFromServer(const ApiResource& api, const ObjectKey& key);
  absl::StatusOr<ObjectList> ListFromServer(const ApiResource& api, const ListOptions& options);
  // Aborted for a 409 Conflict on `key`, naming the wanted and the stored resourceVersion.
  absl::Status Conflict(const ApiResource& api, const ObjectKey& key, std::string_view wanted,
                        const ApiClient::Response& response);
  // Writes `status` through the status subresource of `written` (the object the server just
  // returned); returns the object after it.
  absl::StatusOr<Object> WriteStatus(const ApiResource& api, const ObjectKey& key,
                                     const Object& written, const Object& status);
  // Read-your-writes: waits until the caches that see a write of `key` have seen `written`.
  void AwaitCache(const ObjectKey& key, const Object& written);
  void AwaitDeletion(const ObjectKey& key, const std::string& uid);

  const Options options_;
  std::unique_ptr<ApiClient> client_;
  absl::Mutex mu_;
  // The cluster-wide reflectors, by resource.
  std::map<std::string, std::unique_ptr<Reflector>, std::less<>> informers_ ABSL_GUARDED_BY(mu_);
  // The scoped ones, by resource, then by ReadScope::Key().
  std::map<std::string, std::map<std::string, std::unique_ptr<Reflector>>, std::less<>> scoped_
      ABSL_GUARDED_BY(mu_);

  absl::Mutex queue_mu_;
  std::deque<QueuedWrite> queue_ ABSL_GUARDED_BY(queue_mu_);
  // The state queued writes leave behind, per key (nullopt: deleted), and how many queued
  // writes touch the key.
  std::map<ObjectKey, std::optional<Object>> overlay_ ABSL_GUARDED_BY(queue_mu_);
  std::map<ObjectKey, int> queued_per_key_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::thread writer_;
};

}  // namespace clusterd::store::kube
