#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/work_queue.h"

namespace clusterd::runtime {

// What one reconcile asks of the runtime when it returns.
//  - error not OK: the key comes back after its back-off (base * 2^retries, capped), and the
//    reconcile sees `retries` grow; the requeue_after of a failed result is ignored.
//  - OK with requeue_after set: the key's back-off is reset and it comes back once that much
//    time has passed on the controller's clock (a timer: a grace period, a poll, a deadline);
//    a non-positive requeue_after brings it back at once, after the keys already waiting.
//  - OK otherwise: done until something enqueues the key again.
// RequeueAfter is how a reconcile asks for its own key to be woken: a controller keeps no
// timer threads and re-arms nothing by hand (EnqueueAfter is for other keys and first delays).
struct Result {
  absl::Status error = absl::OkStatus();
  std::optional<absl::Duration> requeue_after;

  static Result Done() { return {}; }
  static Result RequeueAfter(absl::Duration after) { return {absl::OkStatus(), after}; }
  static Result Retry(absl::Status error) { return {std::move(error), std::nullopt}; }
};

struct ControllerOptions {
  // The controller's name: the metric label (and its queue's) and the log component.
  std::string name;
  // The worker threads' name (`top -H`, gdb; the threading map of docs/architecture.md). The
  // kernel keeps 15 bytes of it. Empty: `name`.
  std::string thread_name = {};
  int workers = 1;
  // Back-off of a failed reconcile: base * 2^(failures since the last success), capped at max.
  absl::Duration base_retry_delay = absl::Milliseconds(5);
  absl::Duration max_retry_delay = absl::Seconds(30);
  // The workers run as background threads (common/background_thread.h): for controllers whose
  // reconciles can wait a scheduler tick, never for one on a request's path.
  bool background = false;
};

// The one controller loop of the project, in the controller-runtime style: watch handlers
// Enqueue keys, a worker hands each key to the reconcile function (one worker per key at a
// time, a burst of adds for one key reconciled once), and the Result says what comes next.
//
// Production calls Start(), which runs `workers` named threads until Stop(). Tests do not
// start it: they call RunUntilIdleForTest() on their own thread after each step, with a
// ManualClock, so nothing happens by itself and nothing sleeps.
//
// Metrics (label controller=<name>): clusterd_controller_reconciles_total{result=ok|requeue|
// error} and clusterd_controller_reconcile_seconds, besides the queue's clusterd_workqueue_*
// (label name=<name>).
//
// Thread-safe. The reconcile function must not call Stop().
class Controller {
 public:
  // `key` as enqueued; `retries`: failed reconciles of this key since its last success.
  using ReconcileFn = std::function<Result(const std::string& key, int retries)>;

  Controller(ControllerOptions options, Clock& clock, ReconcileFn reconcile,
             MetricsRegistry& metrics = MetricsRegistry::Default());
  ~Controller();

  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Reconcile `key` soon. Adds for a key already waiting are merged.
  void Enqueue(const std::string& key);
  // Reconcile `key` once `delay` has passed (a request that must wait, e.g. a first delay);
  // an earlier pending time wins. A non-positive delay is Enqueue.
  void EnqueueAfter(const std::string& key, absl::Duration delay);

  // Starts the worker threads (`workers` of them, or ControllerOptions::workers when 0); a
  // second call does nothing.
  void Start(int workers = 0);
  // Shuts the queue and joins the workers (a reconcile in progress finishes first). Keys still
  // queued are dropped: every controller re-lists on start. Idempotent; also the destructor.
  void Stop();
  bool started() const;

  // Tests: reconciles on the calling thread every key that is ready now, timers whose time has
  // come on the clock included, until none is left; returns how many reconciles ran. Keys a
  // reconcile asked back later (RequeueAfter, a retry's back-off) wait for the clock to move.
  size_t RunUntilIdleForTest();
  // Reconciles on the calling thread the keys waiting now (no timers), until none is left: a
  // controller that builds its initial view synchronously in its Start() before the workers run.
  size_t DrainOnCallingThread();

  // Keys waiting now, and keys waiting for a time (RequeueAfter, back-off, EnqueueAfter).
  size_t Ready() const { return queue_.Len(); }
  size_t Parked() const { return queue_.NumParked(); }
  const std::string& name() const { return options_.name; }

 private:
  void RunWorker();
  void ReconcileOne(const std::string& key);

  const ControllerOptions options_;
  Clock& clock_;
  const ReconcileFn reconcile_;
  WorkQueue queue_;
  Counter& ok_;
  Counter& requeued_;
  Counter& failed_;
  Histogram& duration_;

  mutable absl::Mutex mu_;
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

// How a typed key travels through the queue, which holds strings. Encode must be injective and
// Decode(Encode(k)) == k. std::string keys pass as they are.
template <typename Key>
struct KeyCodec;

template <>
struct KeyCodec<std::string> {
  static std::string Encode(const std::string& key) { return key; }
  static std::optional<std::string> Decode(std::string_view text) { return std::string(text); }
};

// A Controller over typed keys: a controller with several kinds of work names them in a
// std::variant (or a struct) with a KeyCodec instead of dispatching on string prefixes.
template <typename Key, typename Codec = KeyCodec<Key>>
class TypedController {
 public:
  using ReconcileFn = std::function<Result(const Key& key, int retries)>;

  TypedController(ControllerOptions options, Clock& clock, ReconcileFn reconcile,
                  MetricsRegistry& metrics = MetricsRegistry::Default())
      : core_(
            std::move(options), clock,
            [reconcile = std::move(reconcile)](const std::string& text, int retries) {
              std::optional<Key> key = Codec::Decode(text);
              // Only Encode's output is ever queued, so a key that does not decode is a
              // codec bug; it is dropped rather than retried for ever.
              if (!key.has_value()) return Result::Done();
              return reconcile(*key, retries);
            },
            metrics) {}

  void Enqueue(const Key& key) { core_.Enqueue(Codec::Encode(key)); }
  void EnqueueAfter(const Key& key, absl::Duration delay) {
    core_.EnqueueAfter(Codec::Encode(key), delay);
  }
  void Start() { core_.Start(); }
  void Stop() { core_.Stop(); }
  bool started() const { return core_.started(); }
  size_t RunUntilIdleForTest() { return core_.RunUntilIdleForTest(); }
  size_t DrainOnCallingThread() { return core_.DrainOnCallingThread(); }
  size_t Ready() const { return core_.Ready(); }
  size_t Parked() const { return core_.Parked(); }

 private:
  Controller core_;
};

}  // namespace clusterd::runtime
