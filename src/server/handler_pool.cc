#include "server/handler_pool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/thread_name.h"

namespace clusterd::server {

HandlerPool::HandlerPool(Options options, MetricsRegistry& metrics)
    : options_(options),
      queued_gauge_(metrics.GetGauge(
          "clusterd_grpc_handler_queue_depth",
          "Unary calls that may block (store writes) waiting for a handler thread.")),
      busy_gauge_(metrics.GetGauge("clusterd_grpc_handler_busy_threads",
                                   "Handler threads running a unary call that may block.")),
      refused_(metrics.GetCounter(
          "clusterd_grpc_handler_refused_total",
          "Unary calls refused with RESOURCE_EXHAUSTED because too many waited for a handler "
          "thread.")) {
  const size_t threads = std::max<size_t>(options_.threads, 1);
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    workers_.emplace_back([this] {
      SetCurrentThreadName("grpc-handler");
      Work();
    });
  }
}

HandlerPool::~HandlerPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

absl::Status HandlerPool::Run(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("clusterd is stopping");
  if (queue_.size() >= options_.max_queued) {
    refused_.Increment();
    // One line per episode, not per call: the counter has the count.
    if (!refusing_) {
      LogWarn("grpc", "refusing unary calls: too many wait for a handler thread",
              {{"queued", queue_.size()}});
    }
    refusing_ = true;
    return absl::ResourceExhaustedError(
        absl::StrCat(queue_.size(), " calls are waiting for the store; try again later"));
  }
  refusing_ = false;
  queue_.push_back(std::move(task));
  queued_gauge_.Set(static_cast<double>(queue_.size()));
  return absl::OkStatus();
}

size_t HandlerPool::Queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void HandlerPool::Work() {
  for (;;) {
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&ready));
      // Queued tasks run even while stopping: each one finishes a call the server waits for.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      queued_gauge_.Set(static_cast<double>(queue_.size()));
      busy_gauge_.Set(static_cast<double>(++busy_));
    }
    std::move(task)();
    absl::MutexLock lock(&mu_);
    busy_gauge_.Set(static_cast<double>(--busy_));
  }
}

}  // namespace clusterd::server
