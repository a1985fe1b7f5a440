#include "runtime/controller.h"

#include "common/background_thread.h"
#include "common/log.h"
#include "common/thread_name.h"

namespace clusterd::runtime {
namespace {

MetricLabels ReconcileLabels(const std::string& controller, std::string_view result) {
  return {{"controller", controller}, {"result", std::string(result)}};
}

// Reconciles are in-memory decisions and store writes: sub-millisecond to a few seconds.
std::vector<double> ReconcileBounds() {
  return {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};
}

Counter& ReconcileCounter(MetricsRegistry& metrics, const std::string& controller,
                          std::string_view result) {
  return metrics.GetCounter("clusterd_controller_reconciles_total",
                            "Reconciles run by a controller, by result (ok, requeue, error).",
                            ReconcileLabels(controller, result));
}

}  // namespace

Controller::Controller(ControllerOptions options, Clock& clock, ReconcileFn reconcile,
                       MetricsRegistry& metrics)
    : options_(std::move(options)),
      clock_(clock),
      reconcile_(std::move(reconcile)),
      queue_(options_.name, clock, metrics,
             WorkQueueOptions{options_.base_retry_delay, options_.max_retry_delay}),
      ok_(ReconcileCounter(metrics, options_.name, "ok")),
      requeued_(ReconcileCounter(metrics, options_.name, "requeue")),
      failed_(ReconcileCounter(metrics, options_.name, "error")),
      duration_(metrics.GetHistogram("clusterd_controller_reconcile_seconds",
                                     "Time one reconcile took, on the controller's clock.",
                                     ReconcileBounds(), {{"controller", options_.name}})) {}

Controller::~Controller() { Stop(); }

void Controller::Enqueue(const std::string& key) { queue_.Add(key); }

void Controller::EnqueueAfter(const std::string& key, absl::Duration delay) {
  queue_.AddAfter(key, delay);
}

void Controller::Start(int workers) {
  absl::MutexLock lock(&mu_);
  if (started_ || queue_.ShuttingDown()) return;
  started_ = true;
  if (workers <= 0) workers = options_.workers > 0 ? options_.workers : 1;
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { RunWorker(); });
}

void Controller::Stop() {
  queue_.ShutDown();
  std::vector<std::thread> workers;
  {
    absl::MutexLock lock(&mu_);
    workers.swap(workers_);
  }
  for (std::thread& worker : workers) worker.join();
}

bool Controller::started() const {
  absl::MutexLock lock(&mu_);
  return started_;
}

void Controller::RunWorker() {
  SetCurrentThreadName(options_.thread_name.empty() ? options_.name : options_.thread_name);
  if (options_.background) MarkCurrentThreadBackground();
  while (absl::optional<std::string> key = queue_.Get()) {
    ReconcileOne(*key);
    queue_.Done(*key);
  }
}

size_t Controller::RunUntilIdleForTest() {
  queue_.PromoteDue();
  return DrainOnCallingThread();
}

size_t Controller::DrainOnCallingThread() {
  size_t reconciled = 0;
  while (queue_.Len() > 0) {
    absl::optional<std::string> key = queue_.Get();
    if (!key.has_value()) break;  // shut down
    ReconcileOne(*key);
    queue_.Done(*key);
    ++reconciled;
  }
  return reconciled;
}

void Controller::ReconcileOne(const std::string& key) {
  const absl::Time start = clock_.Now();
  const Result result = reconcile_(key, queue_.NumRequeues(key));
  duration_.Observe(absl::ToDoubleSeconds(clock_.Now() - start));
  if (!result.error.ok()) {
    failed_.Increment();
    LogDebug(options_.name, "reconcile failed; retrying with back-off",
             {{"key", key}, {"error", result.error}});
    queue_.AddRateLimited(key);
    return;
  }
  queue_.Forget(key);
  if (result.requeue_after.has_value()) {
    requeued_.Increment();
    queue_.AddAfter(key, *result.requeue_after);
    return;
  }
  ok_.Increment();
}

}  // namespace clusterd::runtime
