#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "store/object_store.h"

namespace clusterd::agent {

struct EventRecorderOptions {
  // The original's budget (fault-pipeline.md §1.11, §11): at most 10 event writes in any
  // 60 s, at most 100 waiting; a full queue drops the new event.
  int writes_per_minute = 10;
  size_t queue_capacity = 100;
  // Embedded stores (dir, memory) have no event TTL of their own: the recorder deletes its
  // oldest events beyond `keep` or older than `max_age`. Off for the kube store, whose API
  // server expires events (and the agent is granted no delete).
  bool prune = true;
  size_t keep = 100;
  absl::Duration max_age = absl::Hours(1);
  // Names of this reporter's events start with it (`<pod>.`): after a restart the recorder
  // finds the ones it wrote before and keeps pruning them.
  std::string own_prefix;
};

// Writes the agent's Kubernetes Events on a thread of its own, so that a slow or failing event
// write never delays a device-info write: Record() only queues. Writes are spaced by the
// per-minute budget; a name that already exists is patched (count + 1, lastTimestamp,
// message), as client-go's recorder does. A failed write is counted and logged at most once a
// minute. Tests call WriteDue() with a ManualClock instead of Start().
class EventRecorder {
 public:
  EventRecorder(EventRecorderOptions options, store::ObjectStore& store, const Clock& clock);
  ~EventRecorder();

  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Thread-safe and never waits for the store. False (counted as dropped) when the queue is
  // full.
  bool Record(store::Object event);

  // Reads back the events this reporter wrote before a restart, for pruning. Best effort.
  void LoadOwnEvents();
  // Writes the queued events the budget allows now and prunes; on the calling thread.
  void WriteDue();
  // When WriteDue has work again; InfiniteFuture when only Record can create some.
  absl::Time NextDue() const;
  size_t queued() const;

  // The writer thread: LoadOwnEvents, then WriteDue whenever due. Stop is idempotent.
  void Start();
  void Stop();

 private:
  int64_t NowMs() const;
  absl::Time NextDueLocked(int64_t now_ms) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Write(store::Object event, int64_t now_ms);
  void NoteFailure(const absl::Status& status, int64_t now_ms);
  void Prune(int64_t now_ms);
  void Loop();

  const EventRecorderOptions options_;
  store::ObjectStore& store_;
  const Clock& clock_;

  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  std::deque<store::Object> queue_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> recent_writes_ms_ ABSL_GUARDED_BY(mu_);  // within the last minute
  std::deque<std::pair<int64_t, store::ObjectKey>> kept_ ABSL_GUARDED_BY(mu_);  // oldest first
  bool stop_ ABSL_GUARDED_BY(mu_) = false;

  // Writer side only.
  int64_t last_failure_log_ms_ = INT64_MIN;
  int64_t failures_since_log_ = 0;
  std::thread thread_;
};

}  // namespace clusterd::agent
