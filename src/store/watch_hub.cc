#include "store/watch_hub.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "common/background_thread.h"
#include "common/thread_name.h"
#include "store/admission.h"
#include "store/strings.h"

namespace clusterd::store {

// One open watch: its filter, its queue and the thread that drains it into the handler.
class WatchHub::Watcher : public std::enable_shared_from_this<Watcher> {
 public:
  Watcher(std::string resource, std::string ns, LabelSelector selector, FieldSelector fields,
          WatchHandler handler)
      : resource_(std::move(resource)),
        ns_(std::move(ns)),
        selector_(std::move(selector)),
        fields_(std::move(fields)),
        handler_(std::move(handler)) {}

  const std::string& resource() const { return resource_; }

  // Enqueues what this watch sees of `change`, if anything (Kubernetes semantics: an object
  // entering the filter is ADDED, one leaving it is DELETED).
  void Offer(const Change& change) {
    bool now_matches = change.type != WatchEventType::kDeleted && Matches(*change.object);
    bool matched = change.type == WatchEventType::kDeleted
                       ? Matches(*change.object)
                       : (change.previous != nullptr && Matches(*change.previous));
    if (now_matches) {
      Enqueue(matched ? WatchEventType::kModified : WatchEventType::kAdded, change.object);
    } else if (matched) {
      if (change.type == WatchEventType::kDeleted) {
        Enqueue(WatchEventType::kDeleted, change.object);
      } else {
        // Left the filter: the previous content with the version of the change.
        auto gone = std::make_shared<Object>(*change.previous);
        SetResourceVersion(*gone, change.resource_version);
        Enqueue(WatchEventType::kDeleted, std::move(gone));
      }
    }
  }

  void OfferExisting(std::shared_ptr<const Object> object) {
    if (Matches(*object)) Enqueue(WatchEventType::kAdded, std::move(object));
  }

  void Start() {
    absl::MutexLock lock(&join_mu_);
    thread_ = std::thread([self = shared_from_this()] {
      SetCurrentThreadName("store-watch");
      MarkCurrentThreadBackground();
      self->Run();
    });
  }

  // After Stop() returns the handler is not called again. Called from the watch's own
  // handler, it cannot wait for itself: the thread is detached and exits when the handler
  // returns.
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stopped_ = true;
    }
    absl::MutexLock lock(&join_mu_);
    if (!thread_.joinable()) return;
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }

 private:
  struct Entry {
    WatchEventType type;
    std::shared_ptr<const Object> object;
  };

  bool Matches(const Object& o) const {
    return (ns_.empty() || NamespaceOf(o) == ns_) && selector_.Matches(o) && fields_.Matches(o);
  }

  void Enqueue(WatchEventType type, std::shared_ptr<const Object> object) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(Entry{type, std::move(object)});
  }

  bool Ready() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_ || !queue_.empty(); }

  void Run() {
    for (;;) {
      Entry entry;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &Watcher::Ready));
        if (stopped_) return;
        entry = std::move(queue_.front());
        queue_.pop_front();
      }
      handler_(WatchEvent{entry.type, std::move(entry.object)});
    }
  }

  const std::string resource_;
  const std::string ns_;
  const LabelSelector selector_;
  const FieldSelector fields_;
  const WatchHandler handler_;

  absl::Mutex mu_;
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex join_mu_;
  std::thread thread_ ABSL_GUARDED_BY(join_mu_);
};

struct WatchHub::Registry {
  absl::Mutex mu;
  std::deque<Change> history ABSL_GUARDED_BY(mu);
  // Every change after `floor` is in `history`.
  uint64_t floor ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::shared_ptr<Watcher>> watchers ABSL_GUARDED_BY(mu);
};

namespace {

class HubWatchHandle final : public WatchHandle {
 public:
  HubWatchHandle(std::weak_ptr<WatchHub::Registry> registry,
                 std::shared_ptr<WatchHub::Watcher> watcher)
      : registry_(std::move(registry)), watcher_(std::move(watcher)) {}

  ~HubWatchHandle() override;

 private:
  std::weak_ptr<WatchHub::Registry> registry_;
  std::shared_ptr<WatchHub::Watcher> watcher_;
};

}  // namespace

// Defined out of line: it needs the complete Registry.
HubWatchHandle::~HubWatchHandle() {
  if (auto registry = registry_.lock()) {
    absl::MutexLock lock(&registry->mu);
    auto& watchers = registry->watchers;
    watchers.erase(std::remove(watchers.begin(), watchers.end(), watcher_), watchers.end());
  }
  watcher_->Stop();
}

WatchHub::WatchHub(size_t history_limit)
    : history_limit_(std::max<size_t>(history_limit, 1)), registry_(std::make_shared<Registry>()) {}

WatchHub::~WatchHub() { StopAll(); }

void WatchHub::StopAll() {
  std::vector<std::shared_ptr<Watcher>> watchers;
  {
    absl::MutexLock lock(&registry_->mu);
    watchers.swap(registry_->watchers);
  }
  for (auto& w : watchers) w->Stop();
}

void WatchHub::ResetHistory(uint64_t resource_version) {
  absl::MutexLock lock(&registry_->mu);
  registry_->history.clear();
  registry_->floor = resource_version;
}

uint64_t WatchHub::Floor() const {
  absl::MutexLock lock(&registry_->mu);
  return registry_->floor;
}

void WatchHub::Publish(Change change) {
  absl::MutexLock lock(&registry_->mu);
  for (const auto& w : registry_->watchers) {
    if (w->resource() == change.resource) w->Offer(change);
  }
  registry_->history.push_back(std::move(change));
  while (registry_->history.size() > history_limit_) {
    registry_->floor = registry_->history.front().resource_version;
    registry_->history.pop_front();
  }
}

absl::StatusOr<std::unique_ptr<WatchHandle>> WatchHub::Watch(
    std::string_view resource, const WatchOptions& options, WatchHandler handler,
    const std::vector<std::shared_ptr<const Object>>& initial) {
  std::optional<uint64_t> from;
  if (!options.resource_version.empty()) {
    from = ParseResourceVersion(options.resource_version);
    if (!from) {
      return absl::InvalidArgumentError(Cat("watch ", resource, ": resourceVersion \"",
                                            options.resource_version,
                                            "\" is not a decimal number"));
    }
  }
  auto watcher = std::make_shared<Watcher>(std::string(resource), options.ns, options.selector,
                                           options.fields, std::move(handler));
  {
    absl::MutexLock lock(&registry_->mu);
    if (from) {
      if (*from < registry_->floor) {
        return absl::OutOfRangeError(Cat("410 Gone: watch ", resource, " from resourceVersion ",
                                         *from, ": too old, the oldest available is ",
                                         registry_->floor, "; list again"));
      }
      for (const Change& c : registry_->history) {
        if (c.resource_version > *from && c.resource == resource) watcher->Offer(c);
      }
    } else {
      for (const auto& o : initial) watcher->OfferExisting(o);
    }
    registry_->watchers.push_back(watcher);
  }
  watcher->Start();
  return std::unique_ptr<WatchHandle>(std::make_unique<HubWatchHandle>(registry_, watcher));
}

}  // namespace clusterd::store
