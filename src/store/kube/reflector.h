#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/kube/api_client.h"
#include "store/kube/api_resource.h"
#include "store/kube/read_scope.h"
#include "store/object_cache.h"

namespace clusterd::store::kube {

// --- Pure decisions, tested as tables -----------------------------------------------------------

// One change that brings the cache in line with a fresh list.
struct RelistStep {
  WatchEventType type;  // kAdded for puts (the cache decides ADDED or MODIFIED), or kDeleted
  ObjectKey key;
  Object object;  // puts only
  uint64_t resource_version = 0;
};

struct RelistPlan {
  std::vector<RelistStep> steps;  // in increasing resource_version
  // Objects that vanished but for which no version was free (never with etcd's revisions):
  // they stay in the cache until a later list.
  size_t unplaced_deletions = 0;
  // Listed objects older than the cache yet different from it (an API server that went back
  // in time): skipped.
  size_t skipped = 0;
};

// The changes between the cache (`cached`: key -> resourceVersion, complete up to `last`) and a
// list at `list_rv` (`listed`: key -> object with its resourceVersion). Changed and new objects
// are put at their own versions. A deletion's real version is unknown, but it lies in
// (last, list_rv] and is not the version of any listed object, so each deletion takes a free
// version of that range, from the top: watchers see one consistent history.
RelistPlan PlanRelist(const std::map<ObjectKey, uint64_t>& cached,
                      const std::map<ObjectKey, Object>& listed, uint64_t last, uint64_t list_rv);

// Delay before reconnect attempt `attempt` (0 = first retry): min * 2^attempt, capped at max,
// then "full jitter" scaled into [d/2, d] by `unit` in [0, 1).
absl::Duration Backoff(int attempt, absl::Duration min, absl::Duration max, double unit);

// --- The reflector ------------------------------------------------------------------------------

// Keeps an ObjectCache of one resource (all namespaces, or the objects of one ReadScope) equal to
// the API server: list, then watch from the list's resourceVersion with bookmarks; after the watch
// ends it resumes from the last version seen; on 410 Gone it lists again and commits the
// difference; on errors it retries with jittered exponential back-off. Watches and reads of the
// store are served from the cache.
class Reflector {
 public:
  struct Options {
    const ApiResource* api = nullptr;
    // What is listed and watched; cluster-wide by default.
    ReadScope scope;
    ApiClient* client = nullptr;
    size_t history_limit = 10000;
    size_t page_size = 500;
    // Server-side timeoutSeconds of each watch, jittered up to +25% so that watches do not
    // reconnect in step.
    absl::Duration watch_timeout = absl::Minutes(5);
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(30);
    const Clock* clock = &Clock::Real();
  };

  explicit Reflector(Options options);
  ~Reflector();  // Stop()
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();
  void Stop();

  ObjectCache& cache() { return cache_; }
  const ApiResource& api() const { return *options_.api; }
  const ReadScope& scope() const { return options_.scope; }

  // Waits for the first complete list; false after `timeout` or Stop().
  bool WaitForSync(absl::Duration timeout);
  // Waits until `done()` holds, re-checking after every change the reflector commits; false
  // after `timeout` or Stop(). For read-your-writes: "the cache has reached version V".
  // `done` must not call back into the reflector.
  bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout);
  // Waits until the reflector has seen `resource_version` (an event or a bookmark at or after
  // it); false after `timeout` or Stop().
  bool WaitForVersion(uint64_t resource_version, absl::Duration timeout);

  bool synced() const;
  // OK while the cache is synced and a watch is established (or being re-established after
  // the server ended it normally); otherwise why not.
  absl::Status Health() const;
  // The highest resourceVersion the reflector has seen (events and bookmarks).
  uint64_t seen_resource_version() const;

 private:
  enum class WatchEnd { kResume, kRelist, kError };

  void Run();
  // Lists everything (following continue tokens) and commits it.
  absl::Status ListAndCommit();
  // One watch request from resume_rv_; returns how it ended.
  WatchEnd WatchOnce();
  // Applies one watch line; false ends the stream (`end` says why).
  bool ApplyLine(std::string_view line, WatchEnd* end);
  void Commit(WatchEventType type, const ObjectKey& key, Object object, uint64_t rv);
  void Changed();
  void SetHealth(absl::Status status);
  // Waits `d` unless stopped; false when stopped.
  bool Pause(absl::Duration d);
  // The collection path of the scope, with its fieldSelector, then '&' or '?' for more.
  std::string ScopedPath() const;

  const Options options_;
  ObjectCache cache_;
  ApiClient::StreamControl stream_control_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t seen_rv_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status health_ ABSL_GUARDED_BY(mu_) = absl::UnavailableError("not listed yet");

  // Owned by the reflector thread.
  uint64_t resume_rv_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace clusterd::store::kube
