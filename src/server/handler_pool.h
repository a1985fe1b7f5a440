#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics.h"

namespace clusterd::server {

// Threads of our own for the unary handlers that may block: a store write (an fsync'd file, an
// API-server request) or a wait on a store lock held by a large write.
//
// Why: a callback-API handler runs on one of the few threads gRPC drains its callback queue
// with (gRPC 1.51: max(2, min(cores / 2, 16)), so 2 on a 2-core machine). Those threads also
// read the sockets, so while every one of them waits in a store write, no connection makes
// progress: no other call is answered and no keepalive ping is acknowledged, and clients with
// the real 1 s ping timeout drop their connections and every stream on them. 20,000 Register
// calls, each writing its PodGroup, did that to whole connections at once.
//
// Tasks run in the order they were queued, on `threads` workers. Thread-safe. The destructor
// runs every task already queued, then joins the workers: destroy the pool after the gRPC
// server, whose shutdown waits for the calls the queued tasks finish.
class HandlerPool {
 public:
  struct Options {
    size_t threads = 8;
    // Tasks waiting for a worker; past it Run refuses (a stuck store must not let waiting
    // calls take the memory).
    size_t max_queued = 10000;
  };
  explicit HandlerPool(Options options, MetricsRegistry& metrics = MetricsRegistry::Default());
  HandlerPool() : HandlerPool(Options{}) {}
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Queues `task`; ResourceExhausted (the task is not run) when max_queued tasks wait already,
  // Unavailable once the pool is being destroyed.
  absl::Status Run(absl::AnyInvocable<void() &&> task);

  // Tasks waiting for a worker (not counting those running).
  size_t Queued() const;

 private:
  void Work();

  const Options options_;
  Gauge& queued_gauge_;
  Gauge& busy_gauge_;
  Counter& refused_;
  mutable absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  size_t busy_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Run is refusing (logged once per episode).
  bool refusing_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace clusterd::server
