#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/object_store.h"

namespace clusterd::store {

// One committed change of the store, before per-watch filtering.
struct Change {
  WatchEventType type;
  std::string resource;
  // The new state; for kDeleted the last state, carrying the deletion's resourceVersion.
  std::shared_ptr<const Object> object;
  // The state before a kModified (to compute selector transitions); null otherwise.
  std::shared_ptr<const Object> previous;
  uint64_t resource_version = 0;
};

// Fans committed changes out to watches and keeps a bounded history of them so that a watch
// can start from a resourceVersion. Shared by every backend.
//
// Each watch owns a delivery thread with an unbounded queue: its handler runs serially, in
// resourceVersion order, never under a store lock (so it may call back into the store), and a
// slow handler only delays its own watch. Publish() only enqueues.
class WatchHub {
 public:
  explicit WatchHub(size_t history_limit);
  ~WatchHub();  // stops every watch still open

  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Stops every open watch (their handles become inert). Backends call it first on shutdown
  // so that no handler runs while they are being torn down.
  void StopAll();

  // Forgets the history: watches may start from `resource_version` or later. Used after a
  // backend loaded its initial state.
  void ResetHistory(uint64_t resource_version);

  // Records and fans out a change. Callers serialise Publish and Watch (the ObjectCache lock),
  // with strictly increasing resource versions.
  void Publish(Change change);

  // Opens a watch. With an empty options.resource_version, `initial` (the matching objects at
  // this instant, in the caller's snapshot) is delivered as ADDED first; otherwise the
  // history after that version is replayed, or OutOfRange if it was already dropped.
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(
      std::string_view resource, const WatchOptions& options, WatchHandler handler,
      const std::vector<std::shared_ptr<const Object>>& initial);

  // Oldest version a watch may start from.
  uint64_t Floor() const;

  // Internal, named here only so that watch handles can refer to them.
  class Watcher;
  struct Registry;

 private:
  size_t history_limit_;
  std::shared_ptr<Registry> registry_;
};

}  // namespace clusterd::store
