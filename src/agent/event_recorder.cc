#include "agent/event_recorder.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "agent/agent_metrics.h"
#include "agent/kube_event.h"
#include "common/log.h"
#include "common/thread_name.h"

namespace clusterd::agent {
namespace {

constexpr std::string_view kEventRecorderLog = "npu-agent";
constexpr int64_t kMinuteMs = 60000;

int64_t EventTimeMs(const store::Object& event) {
  absl::Time t;
  std::string error;
  if (event.contains("eventTime") && event["eventTime"].is_string() &&
      absl::ParseTime(absl::RFC3339_full, event["eventTime"].get<std::string>(), &t, &error)) {
    return absl::ToUnixMillis(t);
  }
  return 0;
}

}  // namespace

EventRecorder::EventRecorder(EventRecorderOptions options, store::ObjectStore& store,
                             const Clock& clock)
    : options_(std::move(options)), store_(store), clock_(clock) {}

EventRecorder::~EventRecorder() { Stop(); }

int64_t EventRecorder::NowMs() const { return absl::ToUnixMillis(clock_.Now()); }

bool EventRecorder::Record(store::Object event) {
  {
    absl::MutexLock lock(&mu_);
    if (queue_.size() >= options_.queue_capacity) {
      AgentMetrics::KubeEvents("dropped").Increment();
      return false;
    }
    queue_.push_back(std::move(event));
  }
  wake_.Signal();
  return true;
}

size_t EventRecorder::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void EventRecorder::LoadOwnEvents() {
  if (!options_.prune || options_.own_prefix.empty()) return;
  store::ListOptions list;
  list.ns = std::string(kEventNamespace);
  absl::StatusOr<store::ObjectList> events = store_.List(store::kEvents, list);
  if (!events.ok()) return;
  std::vector<std::pair<int64_t, store::ObjectKey>> own;
  for (const store::Object& event : events->items) {
    if (!absl::StartsWith(store::NameOf(event), options_.own_prefix)) continue;
    own.emplace_back(EventTimeMs(event), store::KeyOf(store::kEvents, event));
  }
  std::sort(own.begin(), own.end());
  absl::MutexLock lock(&mu_);
  kept_.insert(kept_.begin(), own.begin(), own.end());
}

absl::Time EventRecorder::NextDueLocked(int64_t now_ms) const {
  std::optional<int64_t> due;
  if (!queue_.empty()) {
    due = std::ssize(recent_writes_ms_) < options_.writes_per_minute
              ? now_ms
              : recent_writes_ms_.front() + kMinuteMs;
  }
  if (options_.prune && !kept_.empty()) {
    const int64_t expiry = kept_.size() > options_.keep
                               ? now_ms
                               : kept_.front().first + absl::ToInt64Milliseconds(options_.max_age);
    if (!due.has_value() || expiry < *due) due = expiry;
  }
  return due.has_value() ? absl::FromUnixMillis(*due) : absl::InfiniteFuture();
}

absl::Time EventRecorder::NextDue() const {
  const int64_t now = NowMs();
  absl::MutexLock lock(&mu_);
  return NextDueLocked(now);
}

void EventRecorder::WriteDue() {
  const int64_t now = NowMs();
  for (;;) {
    store::Object event;
    {
      absl::MutexLock lock(&mu_);
      while (!recent_writes_ms_.empty() && recent_writes_ms_.front() + kMinuteMs <= now) {
        recent_writes_ms_.pop_front();
      }
      if (queue_.empty() || std::ssize(recent_writes_ms_) >= options_.writes_per_minute) break;
      event = std::move(queue_.front());
      queue_.pop_front();
      // A failed write spends its share of the budget too, so a broken store is not hammered.
      recent_writes_ms_.push_back(now);
    }
    Write(std::move(event), now);
  }
  Prune(now);
}

void EventRecorder::Write(store::Object event, int64_t now_ms) {
  const store::ObjectKey key = store::KeyOf(store::kEvents, event);
  absl::StatusOr<store::Object> created = store_.Create(store::kEvents, event);
  if (created.ok()) {
    AgentMetrics::KubeEvents("written").Increment();
    if (options_.prune) {
      absl::MutexLock lock(&mu_);
      kept_.emplace_back(now_ms, key);
    }
    return;
  }
  if (!absl::IsAlreadyExists(created.status())) {
    NoteFailure(created.status(), now_ms);
    return;
  }
  // The same name again (two codes of one NPU in one millisecond): count it on the existing
  // event, as client-go's recorder does.
  absl::StatusOr<store::Object> existing = store_.Get(key);
  if (!existing.ok()) {
    NoteFailure(existing.status(), now_ms);
    return;
  }
  const int64_t count = existing->value("count", int64_t{1});
  store::Object patch = {{"count", count + 1},
                         {"lastTimestamp", event["lastTimestamp"]},
                         {"message", event["message"]}};
  absl::StatusOr<store::Object> patched = store_.Patch(key, patch);
  if (!patched.ok()) {
    NoteFailure(patched.status(), now_ms);
    return;
  }
  AgentMetrics::KubeEvents("patched").Increment();
}

void EventRecorder::NoteFailure(const absl::Status& status, int64_t now_ms) {
  AgentMetrics::KubeEvents("failed").Increment();
  ++failures_since_log_;
  if (last_failure_log_ms_ != INT64_MIN && now_ms - last_failure_log_ms_ < kMinuteMs) return;
  LogWarn(kEventRecorderLog,
          "kubernetes event write failed; events are best effort, faults are still "
          "written to the device-info configmap",
          {{"error", status}, {"failures_since_last_log", failures_since_log_}});
  last_failure_log_ms_ = now_ms;
  failures_since_log_ = 0;
}

void EventRecorder::Prune(int64_t now_ms) {
  if (!options_.prune) return;
  std::vector<store::ObjectKey> expired;
  {
    absl::MutexLock lock(&mu_);
    const int64_t max_age_ms = absl::ToInt64Milliseconds(options_.max_age);
    while (!kept_.empty() &&
           (kept_.size() > options_.keep || kept_.front().first + max_age_ms <= now_ms)) {
      expired.push_back(std::move(kept_.front().second));
      kept_.pop_front();
    }
  }
  for (const store::ObjectKey& key : expired) {
    absl::Status deleted = store_.Delete(key);
    if (deleted.ok()) {
      AgentMetrics::KubeEventsPruned().Increment();
    } else if (!absl::IsNotFound(deleted)) {
      NoteFailure(deleted, now_ms);
    }
  }
}

void EventRecorder::Start() {
  LoadOwnEvents();
  thread_ = std::thread([this] { Loop(); });
}

void EventRecorder::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
}

void EventRecorder::Loop() {
  SetCurrentThreadName("kube-events");
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    const absl::Time due = NextDueLocked(NowMs());
    if (due > clock_.Now()) {
      wake_.WaitWithDeadline(&mu_, due);
      continue;
    }
    mu_.Unlock();
    WriteDue();
    mu_.Lock();
  }
}

}  // namespace clusterd::agent
