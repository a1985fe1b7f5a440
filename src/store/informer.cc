#include "store/informer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/metrics.h"
#include "common/status_util.h"
#include "store/admission.h"
#include "store/strings.h"

namespace clusterd::store {
namespace {

constexpr char kInformerLog[] = "informer";
// A watch from the listed version can be too old only if more changes than the store keeps
// happened between the list and the watch; a few attempts in a row mean something else is
// wrong, and Start() says so.
constexpr int kMaxListAttempts = 5;

std::string KeyOfObject(const Object& o) {
  return SharedInformer::KeyOf(NamespaceOf(o), NameOf(o));
}

}  // namespace

bool InformerFilter::Matches(const Object& object) const {
  return (ns.empty() || NamespaceOf(object) == ns) && selector.Matches(object) &&
         fields.Matches(object) && (predicate == nullptr || predicate(object));
}

std::string SharedInformer::KeyOf(std::string_view ns, std::string_view name) {
  return ns.empty() ? std::string(name) : Cat(ns, "/", name);
}

struct SharedInformer::Core : std::enable_shared_from_this<Core> {
  struct Slot {
    InformerHandler handler;
    // Cleared (under deliver_mu) when the registration goes: a delivery already iterating over
    // a copy of the handler list skips it.
    std::atomic<bool> active{true};
  };

  // Marks the calling thread as the one delivering while it holds deliver_mu, so that a handler
  // registering or dropping a registration does not wait for itself.
  class DeliveryScope {
   public:
    explicit DeliveryScope(Core& core) : core_(core) {
      core_.delivering.store(std::this_thread::get_id());
    }
    ~DeliveryScope() { core_.delivering.store(std::thread::id()); }

   private:
    Core& core_;
  };

  Core(ObjectStore& s, std::string_view r)
      : store(s),
        resource(r),
        objects_gauge(MetricsRegistry::Default().GetGauge(
            "clusterd_informer_objects", "Objects in the shared informer's cache, by resource.",
            {{"resource", resource}})),
        relists(MetricsRegistry::Default().GetCounter(
            "clusterd_informer_relists_total",
            "Lists again because the watch from the listed version was too old (410 Gone), by "
            "resource.",
            {{"resource", resource}})) {}

  bool OnDeliveryThread() const { return delivering.load() == std::this_thread::get_id(); }

  absl::Status Start();
  void Stop();
  void OnStreamEvent(const WatchEvent& event);
  void Add(const std::shared_ptr<Slot>& slot);
  void Remove(const std::shared_ptr<Slot>& slot);

  void AddLocked(const std::shared_ptr<Slot>& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu);
  void RemoveLocked(const std::shared_ptr<Slot>& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu);
  // Commits one change to the cache; returns the object it replaced (null if none).
  std::shared_ptr<const Object> Apply(WatchEventType type, std::shared_ptr<const Object> object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu) ABSL_LOCKS_EXCLUDED(cache_mu);
  // The cache becomes `items`, the difference delivered as events.
  void Replace(std::vector<std::shared_ptr<const Object>> items, uint64_t list_version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu) ABSL_LOCKS_EXCLUDED(cache_mu);
  void Dispatch(WatchEventType type, const std::shared_ptr<const Object>& object,
                const std::shared_ptr<const Object>& previous, const WatchEvent* raw)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu);
  void Index(const std::string& key, const Object& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(cache_mu);
  void Unindex(const std::string& key, const Object& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(cache_mu);

  ObjectStore& store;
  const std::string resource;
  Gauge& objects_gauge;
  Counter& relists;

  // Start and Stop; taken before deliver_mu.
  absl::Mutex start_mu;
  std::unique_ptr<WatchHandle> watch ABSL_GUARDED_BY(start_mu);

  // Serialises deliveries (stream events, relists, replays to late handlers) and changes to the
  // handler list; taken before cache_mu.
  absl::Mutex deliver_mu;
  std::atomic<std::thread::id> delivering{};
  std::vector<std::shared_ptr<Slot>> handlers ABSL_GUARDED_BY(deliver_mu);
  // False from Stop() on: an event of the closing watch still in flight is dropped.
  bool streaming ABSL_GUARDED_BY(deliver_mu) = false;

  mutable absl::Mutex cache_mu;
  std::map<std::string, std::shared_ptr<const Object>, std::less<>> objects
      ABSL_GUARDED_BY(cache_mu);
  std::map<std::string, IndexFunc, std::less<>> index_funcs ABSL_GUARDED_BY(cache_mu);
  // index -> value -> keys
  std::map<std::string, std::map<std::string, std::set<std::string>, std::less<>>, std::less<>>
      indexes ABSL_GUARDED_BY(cache_mu);
  bool synced ABSL_GUARDED_BY(cache_mu) = false;
  uint64_t version ABSL_GUARDED_BY(cache_mu) = 0;  // newest resourceVersion delivered
};

namespace {

class Registration final : public InformerRegistration {
 public:
  Registration(std::weak_ptr<SharedInformer::Core> core,
               std::shared_ptr<SharedInformer::Core::Slot> slot)
      : core_(std::move(core)), slot_(std::move(slot)) {}
  ~Registration() override;

 private:
  std::weak_ptr<SharedInformer::Core> core_;
  std::shared_ptr<SharedInformer::Core::Slot> slot_;
};

Registration::~Registration() {
  if (auto core = core_.lock()) {
    core->Remove(slot_);
  } else {
    slot_->active = false;
  }
}

}  // namespace

void SharedInformer::Core::Index(const std::string& key, const Object& object) {
  for (const auto& [name, func] : index_funcs) {
    for (std::string& value : func(object)) indexes[name][std::move(value)].insert(key);
  }
}

void SharedInformer::Core::Unindex(const std::string& key, const Object& object) {
  for (const auto& [name, func] : index_funcs) {
    auto& index = indexes[name];
    for (const std::string& value : func(object)) {
      auto it = index.find(value);
      if (it == index.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  }
}

std::shared_ptr<const Object> SharedInformer::Core::Apply(WatchEventType type,
                                                          std::shared_ptr<const Object> object) {
  const std::string key = KeyOfObject(*object);
  absl::MutexLock lock(&cache_mu);
  std::shared_ptr<const Object> previous;
  if (auto it = objects.find(key); it != objects.end()) {
    previous = it->second;
    Unindex(key, *previous);
    if (type == WatchEventType::kDeleted) objects.erase(it);
  }
  if (type != WatchEventType::kDeleted) {
    Index(key, *object);
    objects[key] = std::move(object);
  }
  objects_gauge.Set(static_cast<double>(objects.size()));
  return previous;
}

void SharedInformer::Core::Dispatch(WatchEventType type,
                                    const std::shared_ptr<const Object>& object,
                                    const std::shared_ptr<const Object>& previous,
                                    const WatchEvent* raw) {
  if (handlers.empty()) return;
  // A copy: a handler may register or drop registrations while we iterate.
  const std::vector<std::shared_ptr<Slot>> slots = handlers;
  const bool deleted = type == WatchEventType::kDeleted;
  for (const auto& slot : slots) {
    if (!slot->active) continue;
    const InformerFilter& filter = slot->handler.filter;
    const bool now_matches = !deleted && filter.Matches(*object);
    const bool matched =
        deleted ? filter.Matches(*object) : (previous != nullptr && filter.Matches(*previous));
    if (now_matches || (matched && deleted)) {
      const WatchEventType seen = deleted   ? WatchEventType::kDeleted
                                  : matched ? WatchEventType::kModified
                                            : WatchEventType::kAdded;
      if (raw != nullptr && raw->type == seen) {
        slot->handler.on_event(*raw);
      } else {
        slot->handler.on_event(WatchEvent{seen, object});
      }
    } else if (matched) {
      // Left the filter: the previous content with the version of the change.
      Object gone = *previous;
      SetResourceVersion(gone, ResourceVersionNumber(*object));
      slot->handler.on_event(WatchEvent{WatchEventType::kDeleted, std::move(gone)});
    }
  }
}

void SharedInformer::Core::Replace(std::vector<std::shared_ptr<const Object>> items,
                                   uint64_t list_version) {
  // The list by key. Lists come in (nearly) key order, so the sort is mostly a check; of two
  // objects with one key the later is kept.
  std::vector<std::pair<std::string, std::shared_ptr<const Object>>> next;
  next.reserve(items.size());
  for (std::shared_ptr<const Object>& o : items) {
    std::string key = KeyOfObject(*o);
    next.emplace_back(std::move(key), std::move(o));
  }
  const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(next.begin(), next.end(), by_key)) {
    std::stable_sort(next.begin(), next.end(), by_key);
  }
  for (size_t i = 1; i < next.size(); ++i) {
    if (next[i - 1].first == next[i].first) next[i - 1].second = nullptr;  // the later one wins
  }
  std::erase_if(next, [](const auto& entry) { return entry.second == nullptr; });
  const auto listed = [&next](const std::string& key) {
    auto it =
        std::lower_bound(next.begin(), next.end(), key,
                         [](const auto& entry, const std::string& k) { return entry.first < k; });
    return it != next.end() && it->first == key;
  };
  std::vector<std::shared_ptr<const Object>> gone;
  std::map<std::string, std::string> versions;  // of the cached objects
  bool was_empty = false;
  {
    absl::ReaderMutexLock lock(&cache_mu);
    was_empty = objects.empty();
    for (const auto& [key, o] : objects) {
      if (!listed(key)) {
        gone.push_back(o);
      } else {
        versions[key] = ResourceVersionOf(*o);
      }
    }
  }
  if (was_empty) {
    // The first list (every start): the cache is filled in one pass, in key order, and each
    // object is then delivered as added. Only deliveries change the cache, and this is one.
    {
      absl::MutexLock lock(&cache_mu);
      for (const auto& [key, o] : next) {
        Index(key, *o);
        objects.insert_or_assign(objects.end(), key, o);
      }
      objects_gauge.Set(static_cast<double>(objects.size()));
    }
    for (const auto& [key, o] : next) Dispatch(WatchEventType::kAdded, o, nullptr, nullptr);
  } else {
    for (auto& [key, o] : next) {
      auto v = versions.find(key);
      if (v != versions.end() && v->second == ResourceVersionOf(*o)) continue;  // unchanged
      std::shared_ptr<const Object> previous =
          Apply(v == versions.end() ? WatchEventType::kAdded : WatchEventType::kModified, o);
      Dispatch(previous == nullptr ? WatchEventType::kAdded : WatchEventType::kModified, o,
               previous, nullptr);
    }
  }
  for (const auto& o : gone) {
    Apply(WatchEventType::kDeleted, o);
    Dispatch(WatchEventType::kDeleted, o, o, nullptr);
  }
  absl::MutexLock lock(&cache_mu);
  if (list_version > version) version = list_version;
  synced = true;
}

void SharedInformer::Core::OnStreamEvent(const WatchEvent& event) {
  absl::MutexLock lock(&deliver_mu);
  if (!streaming) return;
  DeliveryScope scope(*this);
  // Shared with the store's cache: the informer keeps no copy of its own.
  const std::shared_ptr<const Object>& object = event.shared_object();
  const uint64_t v = ResourceVersionNumber(*object);
  std::shared_ptr<const Object> previous = Apply(event.type, object);
  Dispatch(event.type, object, previous, &event);
  absl::MutexLock cache(&cache_mu);
  if (v > version) version = v;  // after the handlers: WaitForVersion means "delivered"
}

absl::Status SharedInformer::Core::Start() {
  absl::MutexLock lock(&start_mu);
  if (watch != nullptr) return absl::OkStatus();
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<SharedObjectList> list = store.ListShared(resource, {});
    if (!list.ok()) return Annotate(list.status(), Cat("informer ", resource, ": listing"));
    WatchOptions options;
    options.resource_version = list->resource_version;
    {
      absl::MutexLock deliver(&deliver_mu);
      DeliveryScope scope(*this);
      Replace(std::move(list->items), ParseResourceVersion(list->resource_version).value_or(0));
      streaming = true;
    }
    auto opened =
        store.Watch(resource, options, [this](const WatchEvent& event) { OnStreamEvent(event); });
    if (opened.ok()) {
      watch = *std::move(opened);
      return absl::OkStatus();
    }
    {
      absl::MutexLock deliver(&deliver_mu);
      streaming = false;
    }
    if (!absl::IsOutOfRange(opened.status()) || attempt >= kMaxListAttempts) {
      return Annotate(opened.status(), Cat("informer ", resource, ": watching"));
    }
    relists.Increment();
    LogWarn(kInformerLog, "watch from the listed version too old; listing again",
            {{"resource", resource}, {"error", opened.status()}});
  }
}

void SharedInformer::Core::Stop() {
  absl::MutexLock lock(&start_mu);
  {
    absl::MutexLock deliver(&deliver_mu);
    streaming = false;
  }
  watch.reset();  // waits for an event in flight, which drops itself
}

void SharedInformer::Core::AddLocked(const std::shared_ptr<Slot>& slot) {
  std::vector<std::shared_ptr<const Object>> current;
  {
    absl::ReaderMutexLock lock(&cache_mu);
    if (synced) {
      current.reserve(objects.size());
      for (const auto& [key, o] : objects) current.push_back(o);
    }
  }
  handlers.push_back(slot);
  for (const auto& o : current) {
    if (!slot->active) break;  // dropped from inside its own replay
    if (!slot->handler.filter.Matches(*o)) continue;
    const WatchHandler& to =
        slot->handler.on_replay != nullptr ? slot->handler.on_replay : slot->handler.on_event;
    to(WatchEvent{WatchEventType::kAdded, o});
  }
}

void SharedInformer::Core::RemoveLocked(const std::shared_ptr<Slot>& slot) {
  slot->active = false;
  std::erase(handlers, slot);
}

void SharedInformer::Core::Add(const std::shared_ptr<Slot>& slot) {
  if (OnDeliveryThread()) {
    deliver_mu.AssertHeld();
    AddLocked(slot);
    return;
  }
  absl::MutexLock lock(&deliver_mu);
  DeliveryScope scope(*this);
  AddLocked(slot);
}

void SharedInformer::Core::Remove(const std::shared_ptr<Slot>& slot) {
  if (OnDeliveryThread()) {
    deliver_mu.AssertHeld();
    RemoveLocked(slot);
    return;
  }
  absl::MutexLock lock(&deliver_mu);
  RemoveLocked(slot);
}

// ---- SharedInformer ----

SharedInformer::SharedInformer(ObjectStore& store, std::string_view resource)
    : core_(std::make_shared<Core>(store, resource)) {}

SharedInformer::~SharedInformer() { Stop(); }

const std::string& SharedInformer::resource() const { return core_->resource; }

absl::Status SharedInformer::AddIndex(std::string_view name, IndexFunc index) {
  absl::MutexLock lock(&core_->cache_mu);
  if (core_->index_funcs.contains(name)) {
    return absl::AlreadyExistsError(
        Cat("informer ", core_->resource, ": index \"", name, "\" already exists"));
  }
  core_->index_funcs.emplace(std::string(name), index);
  auto& built = core_->indexes[std::string(name)];
  for (const auto& [key, o] : core_->objects) {
    for (std::string& value : index(*o)) built[std::move(value)].insert(key);
  }
  return absl::OkStatus();
}

std::unique_ptr<InformerRegistration> SharedInformer::AddHandler(InformerHandler handler) {
  auto slot = std::make_shared<Core::Slot>();
  slot->handler = std::move(handler);
  core_->Add(slot);
  return std::make_unique<Registration>(core_, std::move(slot));
}

absl::Status SharedInformer::Start() { return core_->Start(); }

void SharedInformer::Stop() { core_->Stop(); }

bool SharedInformer::HasSynced() const {
  absl::ReaderMutexLock lock(&core_->cache_mu);
  return core_->synced;
}

std::shared_ptr<const Object> SharedInformer::Get(std::string_view ns,
                                                  std::string_view name) const {
  const std::string key = KeyOf(ns, name);
  absl::ReaderMutexLock lock(&core_->cache_mu);
  auto it = core_->objects.find(key);
  return it == core_->objects.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const Object>> SharedInformer::List() const {
  absl::ReaderMutexLock lock(&core_->cache_mu);
  std::vector<std::shared_ptr<const Object>> out;
  out.reserve(core_->objects.size());
  for (const auto& [key, o] : core_->objects) out.push_back(o);
  return out;
}

std::vector<std::shared_ptr<const Object>> SharedInformer::ByIndex(std::string_view index,
                                                                   std::string_view value) const {
  absl::ReaderMutexLock lock(&core_->cache_mu);
  std::vector<std::shared_ptr<const Object>> out;
  auto i = core_->indexes.find(index);
  if (i == core_->indexes.end()) return out;
  auto v = i->second.find(value);
  if (v == i->second.end()) return out;
  out.reserve(v->second.size());
  for (const std::string& key : v->second) {
    if (auto o = core_->objects.find(key); o != core_->objects.end()) out.push_back(o->second);
  }
  return out;
}

size_t SharedInformer::Size() const {
  absl::ReaderMutexLock lock(&core_->cache_mu);
  return core_->objects.size();
}

bool SharedInformer::WaitForVersion(std::string_view resource_version,
                                    absl::Duration timeout) const {
  const uint64_t wanted = ParseResourceVersion(resource_version).value_or(0);
  Core& core = *core_;
  absl::MutexLock lock(&core.cache_mu);
  auto seen = [&core, wanted]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(core.cache_mu) { return core.version >= wanted; };
  return core.cache_mu.AwaitWithTimeout(absl::Condition(&seen), timeout);
}

// ---- InformerFactory ----

SharedInformer& InformerFactory::For(std::string_view resource) {
  absl::MutexLock lock(&mu_);
  for (const auto& informer : informers_) {
    if (informer->resource() == resource) return *informer;
  }
  informers_.push_back(std::make_unique<SharedInformer>(store_, resource));
  return *informers_.back();
}

absl::Status InformerFactory::Start() {
  std::vector<SharedInformer*> informers;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& informer : informers_) informers.push_back(informer.get());
  }
  for (SharedInformer* informer : informers) CLUSTERD_RETURN_IF_ERROR(informer->Start());
  return absl::OkStatus();
}

void InformerFactory::Stop() {
  std::vector<SharedInformer*> informers;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& informer : informers_) informers.push_back(informer.get());
  }
  for (auto it = informers.rbegin(); it != informers.rend(); ++it) (*it)->Stop();
}

}  // namespace clusterd::store
