#include "common/work_queue.h"

#include <algorithm>
#include <cmath>

namespace clusterd {
namespace {

// Beyond 2^62 the back-off has long been capped; bounding the exponent keeps it finite.
constexpr int kMaxBackoffExponent = 62;

MetricLabels QueueLabels(std::string_view name) { return {{"name", std::string(name)}}; }

}  // namespace

WorkQueue::WorkQueue(std::string_view name, Clock& clock, MetricsRegistry& metrics,
                     WorkQueueOptions options)
    : clock_(clock),
      options_(options),
      depth_(metrics.GetGauge("clusterd_workqueue_depth",
                              "Keys waiting in a work queue to be handed to a worker.",
                              QueueLabels(name))),
      adds_(metrics.GetCounter("clusterd_workqueue_adds_total",
                               "Keys queued or marked for another pass in a work queue.",
                               QueueLabels(name))),
      retries_(metrics.GetCounter("clusterd_workqueue_retries_total",
                                  "Keys re-added with back-off after a failed reconcile.",
                                  QueueLabels(name))) {}

void WorkQueue::Add(const std::string& key) {
  absl::MutexLock lock(&mu_);
  AddLocked(key);
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (!dirty_.insert(key).second) return;  // already waiting, or already due another pass
  adds_.Increment();
  // A key being processed goes back in the queue from Done, never to a second worker.
  if (processing_.contains(key)) return;
  queue_.push_back(key);
  UpdateDepthLocked();
}

void WorkQueue::AddAfter(const std::string& key, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  AddAfterLocked(key, delay);
}

void WorkQueue::AddAfterLocked(const std::string& key, absl::Duration delay) {
  if (shutting_down_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(key);
    return;
  }
  const absl::Time due = clock_.Now() + delay;
  auto [it, inserted] = parked_due_.try_emplace(key, due);
  if (!inserted) {
    if (due >= it->second) return;
    parked_.erase({it->second, key});
    it->second = due;
  }
  if (parked_.empty() || due < parked_.begin()->first) ++parked_generation_;
  parked_.emplace(due, key);
}

void WorkQueue::AddRateLimited(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  int& failures = failures_[key];
  const double factor = std::ldexp(1.0, std::min(failures, kMaxBackoffExponent));
  const absl::Duration delay =
      std::min(options_.max_retry_delay, options_.base_retry_delay * factor);
  ++failures;
  retries_.Increment();
  AddAfterLocked(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

absl::optional<std::string> WorkQueue::Get() {
  absl::MutexLock lock(&mu_);
  ++blocked_gets_;
  while (!shutting_down_) {
    PromoteDueLocked();
    if (!queue_.empty()) break;
    const uint64_t generation = parked_generation_;
    // Conditions run with mu_ held, which the analysis cannot see through absl::Condition.
    auto wake = [this, generation]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return shutting_down_ || !queue_.empty() || parked_generation_ != generation;
    };
    if (parked_.empty()) {
      mu_.Await(absl::Condition(&wake));
    } else {
      // Real time: exact with the real clock; with a ManualClock, PromoteDue() wakes us.
      mu_.AwaitWithTimeout(absl::Condition(&wake), parked_.begin()->first - clock_.Now());
    }
  }
  --blocked_gets_;
  if (shutting_down_) return absl::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  UpdateDepthLocked();
  return key;
}

void WorkQueue::Done(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (processing_.erase(key) == 0) return;
  if (!shutting_down_ && dirty_.contains(key)) {
    queue_.push_back(key);
    UpdateDepthLocked();
  }
}

size_t WorkQueue::Len() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t WorkQueue::NumParked() const {
  absl::MutexLock lock(&mu_);
  return parked_.size();
}

size_t WorkQueue::PromoteDue() {
  absl::MutexLock lock(&mu_);
  return PromoteDueLocked();
}

size_t WorkQueue::PromoteDueLocked() {
  if (parked_.empty()) return 0;
  const absl::Time now = clock_.Now();
  size_t promoted = 0;
  while (!parked_.empty() && parked_.begin()->first <= now) {
    auto node = parked_.extract(parked_.begin());
    parked_due_.erase(node.value().second);
    AddLocked(node.value().second);
    ++promoted;
  }
  return promoted;
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  // Waiters re-check their conditions when the lock is released.
  shutting_down_ = true;
}

bool WorkQueue::ShuttingDown() const {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

void WorkQueue::AwaitBlockedGetsForTest(int n) const {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return blocked_gets_ >= n; };
  mu_.Await(absl::Condition(&enough));
}

void WorkQueue::UpdateDepthLocked() { depth_.Set(static_cast<double>(queue_.size())); }

}  // namespace clusterd
