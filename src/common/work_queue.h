#pragma once

#include <cstddef>
#include <deque>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "common/clock.h"
#include "common/metrics.h"

namespace clusterd {

struct WorkQueueOptions {
  // Per-key retry back-off of AddRateLimited: base * 2^(failures so far), capped at max.
  absl::Duration base_retry_delay = absl::Milliseconds(5);
  absl::Duration max_retry_delay = absl::Seconds(30);
};

// De-duplicating keyed work queue in the controller-runtime style. Watch handlers Add a key
// ("namespace/name"); workers Get a key, reconcile from the current objects and call Done.
//
//  - A key waiting in the queue is held once however often it is added.
//  - A key is handed to one worker at a time: re-adding it while it is processed marks it
//    dirty, and Done puts it back in the queue, so the change is never lost.
//  - AddAfter parks a key until the clock reaches its due time. Get promotes due keys itself
//    and, while only parked keys exist, waits no longer than the earliest due time. That wait
//    is in real time, which a ManualClock cannot shorten: after advancing a ManualClock, call
//    PromoteDue() (it wakes blocked workers). With the real clock no other thread is needed.
//  - After ShutDown, Add is ignored and every Get, blocked or future, returns nullopt, even
//    with keys still queued: reconciliation re-lists on start, so dropping them is harmless.
//
// Metrics (labelled name=<queue name>): clusterd_workqueue_depth (keys waiting to be handed
// out), clusterd_workqueue_adds_total (adds that queued or re-dirtied a key, not the
// de-duplicated ones) and clusterd_workqueue_retries_total (AddRateLimited calls).
//
// Thread-safe. Workers must have returned from Get before the queue is destroyed.
class WorkQueue {
 public:
  WorkQueue(std::string_view name, Clock& clock,
            MetricsRegistry& metrics = MetricsRegistry::Default(), WorkQueueOptions options = {});

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);

  // Adds `key` once `delay` has passed on the clock; a non-positive delay adds it now. A key
  // already parked keeps the earlier of its two due times.
  void AddAfter(const std::string& key, absl::Duration delay);

  // Adds `key` after its back-off (see WorkQueueOptions) and doubles the back-off. For a
  // reconcile that failed; call Forget once it succeeds.
  void AddRateLimited(const std::string& key);
  // Resets the back-off of `key`. Does not remove it from the queue.
  void Forget(const std::string& key);
  // AddRateLimited calls for `key` since its last Forget.
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is available and hands it out, marking it as being processed; returns
  // nullopt once the queue is shut down.
  absl::optional<std::string> Get();

  // Ends processing of `key` (from Get). Queues it again if it was re-added meanwhile.
  void Done(const std::string& key);

  // Keys waiting to be handed out; excludes keys being processed and parked (AddAfter) keys.
  size_t Len() const;
  // Keys parked by AddAfter / AddRateLimited and not yet due.
  size_t NumParked() const;

  // Moves every parked key whose due time has come into the queue; returns how many.
  size_t PromoteDue();

  void ShutDown();
  bool ShuttingDown() const;

  // Blocks until `n` callers are waiting inside Get; lets tests order events without sleeps.
  void AwaitBlockedGetsForTest(int n) const;

 private:
  void AddLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddAfterLocked(const std::string& key, absl::Duration delay)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t PromoteDueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateDepthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const WorkQueueOptions options_;
  Gauge& depth_;
  Counter& adds_;
  Counter& retries_;

  mutable absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  // Keys that need processing: those in queue_ plus those re-added while being processed.
  absl::flat_hash_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  // Parked keys ordered by due time, and each parked key's due time.
  std::set<std::pair<absl::Time, std::string>> parked_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::Time> parked_due_ ABSL_GUARDED_BY(mu_);
  // Bumped whenever the earliest due time moves earlier, so a Get waiting for the old one
  // recomputes its deadline.
  uint64_t parked_generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
  int blocked_gets_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace clusterd
