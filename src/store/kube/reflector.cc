#include "store/kube/reflector.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/background_thread.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "store/admission.h"
#include "store/strings.h"

namespace clusterd::store::kube {
namespace {

// A list of a big cluster (every pod) can be large; the per-object limit of etcd is 1.5 MiB.
constexpr size_t kMaxReflectorListBytes = size_t{1} << 30;
constexpr size_t kMaxEventBytes = size_t{64} << 20;
// A watch the server ended sooner than this did not really run: back off before the next.
constexpr absl::Duration kMinHealthyWatch = absl::Seconds(1);
// Continue tokens of a long paginated list can expire; start over at most this often.
constexpr int kMaxListRestarts = 3;

Counter& RelistCounter(std::string_view resource, std::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_kube_relists_total",
      "Complete lists of a resource by the kube store (reason: initial, expired, ...).",
      {{"resource", std::string(resource)}, {"reason", std::string(reason)}});
}

Counter& WatchEndCounter(std::string_view resource, std::string_view how) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_kube_watch_ends_total",
      "Watch streams of the kube store that ended, by how (timeout, expired, error).",
      {{"resource", std::string(resource)}, {"how", std::string(how)}});
}

}  // namespace

RelistPlan PlanRelist(const std::map<ObjectKey, uint64_t>& cached,
                      const std::map<ObjectKey, Object>& listed, uint64_t last, uint64_t list_rv) {
  RelistPlan plan;
  std::set<uint64_t> used;
  for (const auto& [key, object] : listed) {
    uint64_t rv = ResourceVersionNumber(object);
    auto it = cached.find(key);
    if (it != cached.end() && it->second == rv) continue;
    if (rv <= last || rv > list_rv) {
      ++plan.skipped;
      continue;
    }
    used.insert(rv);
    plan.steps.push_back(RelistStep{WatchEventType::kAdded, key, object, rv});
  }
  uint64_t candidate = list_rv;
  for (const auto& [key, rv] : cached) {
    if (listed.contains(key)) continue;
    while (candidate > last && used.contains(candidate)) --candidate;
    if (candidate <= last) {
      ++plan.unplaced_deletions;
      continue;
    }
    plan.steps.push_back(RelistStep{WatchEventType::kDeleted, key, Object(), candidate});
    used.insert(candidate);
    --candidate;
  }
  std::sort(plan.steps.begin(), plan.steps.end(), [](const RelistStep& a, const RelistStep& b) {
    return a.resource_version < b.resource_version;
  });
  return plan;
}

absl::Duration Backoff(int attempt, absl::Duration min, absl::Duration max, double unit) {
  absl::Duration d = min;
  for (int i = 0; i < attempt && d < max; ++i) d *= 2;
  d = std::min(d, max);
  unit = std::clamp(unit, 0.0, 1.0);
  return d / 2 + (d / 2) * unit;
}

Reflector::Reflector(Options options)
    : options_(std::move(options)), cache_(options_.history_limit), rng_(std::random_device{}()) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  thread_ = std::thread([this] {
    SetCurrentThreadName("kube-reflector");
    MarkCurrentThreadBackground();
    Run();
  });
}

void Reflector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  stream_control_.Stop();
  if (thread_.joinable()) thread_.join();
  cache_.StopWatches();
}

bool Reflector::synced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

uint64_t Reflector::seen_resource_version() const {
  absl::MutexLock lock(&mu_);
  return seen_rv_;
}

absl::Status Reflector::Health() const {
  absl::MutexLock lock(&mu_);
  return health_;
}

void Reflector::SetHealth(absl::Status status) {
  absl::MutexLock lock(&mu_);
  health_ = std::move(status);
}

bool Reflector::WaitForSync(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || synced_; };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return synced_ && !stopping_;
}

bool Reflector::WaitUntil(const std::function<bool()>& done, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || done(); };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return !stopping_ && done();
}

bool Reflector::WaitForVersion(uint64_t resource_version, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || seen_rv_ >= resource_version;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return !stopping_ && seen_rv_ >= resource_version;
}

bool Reflector::Pause(absl::Duration d) {
  // Ends early when the server answers again after an outage: the watch resumes then, not at
  // the end of a back-off that grew to its cap while the server was away.
  absl::MutexLock lock(&mu_);
  return PauseUntilAnswered(*options_.client, mu_, &stopping_, d);
}

std::string Reflector::ScopedPath() const {
  std::string path = Cat(options_.api->CollectionPath(options_.scope.ns), "?");
  if (!options_.scope.fields.Empty()) {
    path += Cat("fieldSelector=", QueryEscape(options_.scope.fields.ToString()), "&");
  }
  return path;
}

void Reflector::Changed() {
  absl::MutexLock lock(&mu_);
  ++generation_;
  seen_rv_ = std::max(seen_rv_, resume_rv_);
}

void Reflector::Run() {
  std::string_view resource = options_.api->resource;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int attempt = 0;
  // A back-off that grew while the server was away starts again from the minimum once it is
  // back: a refusal then (503 or 429 while it starts up) is a new episode, not the outage's.
  uint64_t returns_seen = options_.client->returns();
  auto backoff = [&] {
    if (const uint64_t returns = options_.client->returns(); returns != returns_seen) {
      returns_seen = returns;
      attempt = 0;
    }
    return Backoff(attempt++, options_.min_backoff, options_.max_backoff, unit(rng_));
  };
  bool need_list = true;
  std::string_view list_reason = "initial";
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (need_list) {
      absl::Status s = ListAndCommit();
      if (!s.ok()) {
        SetHealth(s);
        LogWarn("kube", "list failed; retrying",
                {{"resource", resource}, {"scope", options_.scope.ToString()}, {"error", s}});
        if (!Pause(backoff())) {
          return;
        }
        continue;
      }
      RelistCounter(resource, list_reason).Increment();
      need_list = false;
      attempt = 0;
    }
    absl::Time started = options_.clock->Now();
    WatchEnd end = WatchOnce();
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    switch (end) {
      case WatchEnd::kResume:
        WatchEndCounter(resource, "timeout").Increment();
        if (options_.clock->Now() - started >= kMinHealthyWatch) {
          attempt = 0;
        } else if (!Pause(backoff())) {
          return;
        }
        break;
      case WatchEnd::kRelist:
        WatchEndCounter(resource, "expired").Increment();
        LogInfo("kube", "watch expired (410 Gone); listing again",
                {{"resource", resource}, {"resourceVersion", resume_rv_}});
        need_list = true;
        list_reason = "expired";
        break;
      case WatchEnd::kError:
        WatchEndCounter(resource, "error").Increment();
        if (!Pause(backoff())) {
          return;
        }
        break;
    }
  }
}

absl::Status Reflector::ListAndCommit() {
  const ApiResource& api = *options_.api;
  std::map<ObjectKey, Object> listed;
  std::string cont;
  uint64_t list_rv = 0;
  int restarts = 0;
  for (;;) {
    std::string path = Cat(ScopedPath(), "limit=", options_.page_size);
    if (!cont.empty()) path += Cat("&continue=", QueryEscape(cont));
    ApiClient::Request request;
    request.path = path;
    auto response = options_.client->Do(request);
    if (!response.ok()) return response.status();
    if (response->code == 410 && !cont.empty() && restarts++ < kMaxListRestarts) {
      listed.clear();  // the snapshot expired between pages: start over
      cont.clear();
      continue;
    }
    if (response->code != 200) {
      return StatusFromResponse(*response, Cat("list ", api.resource));
    }
    auto body = ParseJson(response->body, Cat("list ", api.resource), kMaxReflectorListBytes);
    if (!body.ok()) return absl::UnavailableError(body.status().message());
    const Object& meta = (*body)["metadata"];
    if (cont.empty())
      list_rv = ParseResourceVersion(StringOr(meta, "resourceVersion", "")).value_or(0);
    cont = StringOr(meta, "continue", "");
    if (auto items = body->find("items"); items != body->end() && items->is_array()) {
      for (Object& item : *items) {
        Object object = Normalize(api, std::move(item));
        ObjectKey key = KeyOf(api.resource, object);
        listed[key] = std::move(object);
      }
    }
    if (cont.empty()) break;
  }

  bool first;
  {
    absl::MutexLock lock(&mu_);
    first = !synced_;
  }
  if (first) {
    for (auto& [key, object] : listed) cache_.Load(key, std::move(object));
    cache_.Reset(list_rv);
    resume_rv_ = list_rv;
    {
      absl::MutexLock lock(&mu_);
      synced_ = true;
      health_ = absl::OkStatus();
    }
    Changed();
    return absl::OkStatus();
  }

  uint64_t last = cache_.LastResourceVersion();
  if (list_rv < last) {
    LogError("kube", "the API server's resourceVersion went back; the cache keeps its state",
             {{"resource", api.resource}, {"listed", list_rv}, {"cached", last}});
    resume_rv_ = list_rv;
    Changed();
    return absl::OkStatus();
  }
  std::map<ObjectKey, uint64_t> cached;
  for (const ObjectKey& key : cache_.Keys(api.resource)) {
    if (auto o = cache_.Find(key)) cached[key] = ResourceVersionNumber(*o);
  }
  RelistPlan plan = PlanRelist(cached, listed, last, list_rv);
  for (RelistStep& step : plan.steps) {
    Commit(step.type, step.key, std::move(step.object), step.resource_version);
  }
  if (plan.unplaced_deletions > 0 || plan.skipped > 0) {
    LogWarn("kube", "relist could not reconcile every object",
            {{"resource", api.resource},
             {"unplaced_deletions", plan.unplaced_deletions},
             {"skipped", plan.skipped}});
  }
  LogInfo(
      "kube", "relisted",
      {{"resource", api.resource}, {"resourceVersion", list_rv}, {"changes", plan.steps.size()}});
  resume_rv_ = list_rv;
  Changed();
  return absl::OkStatus();
}

void Reflector::Commit(WatchEventType type, const ObjectKey& key, Object object, uint64_t rv) {
  if (type == WatchEventType::kDeleted) {
    cache_.Remove(key, rv);
  } else {
    cache_.Put(key, std::move(object), rv);
  }
}

Reflector::WatchEnd Reflector::WatchOnce() {
  const ApiResource& api = *options_.api;
  std::uniform_real_distribution<double> jitter(1.0, 1.25);
  int64_t timeout_s = std::max<int64_t>(
      1, static_cast<int64_t>(absl::ToDoubleSeconds(options_.watch_timeout) * jitter(rng_)));
  std::string path =
      Cat(ScopedPath(), "watch=1&allowWatchBookmarks=true&resourceVersion=", resume_rv_,
          "&timeoutSeconds=", timeout_s);
  long status = 0;
  std::string error_body;
  WatchEnd end = WatchEnd::kResume;
  ApiClient::Request request;
  request.path = path;
  absl::Status s = options_.client->Stream(
      request,
      [&](long code) {
        status = code;
        if (code == 200) SetHealth(absl::OkStatus());
      },
      [&](std::string_view line) { return ApplyLine(line, &end); }, &error_body, &stream_control_,
      absl::Seconds(timeout_s) + absl::Seconds(30));
  if (stream_control_.stopped()) return WatchEnd::kResume;
  if (!s.ok()) {
    SetHealth(s);
    LogDebug("kube", "watch failed", {{"resource", api.resource}, {"error", s}});
    return WatchEnd::kError;
  }
  if (status == 410) return WatchEnd::kRelist;
  if (status != 200) {
    absl::Status error =
        status == 0 ? absl::UnavailableError(Cat("watch ", api.resource, ": no response"))
                    : StatusFromResponse({status, error_body}, Cat("watch ", api.resource));
    SetHealth(error);
    // 429 and 503 are the server putting it off (its cache still filling or its paths not yet
    // installed after a restart, API Priority and Fairness): retried like any refusal, and no
    // cause for a warning.
    if (status == 429 || status == 503) {
      LogInfo("kube", "watch put off by the API server; retrying",
              {{"resource", api.resource}, {"scope", options_.scope.ToString()}, {"error", error}});
    } else {
      LogWarn("kube", "watch refused",
              {{"resource", api.resource}, {"scope", options_.scope.ToString()}, {"error", error}});
    }
    return WatchEnd::kError;
  }
  return end;
}

bool Reflector::ApplyLine(std::string_view line, WatchEnd* end) {
  const ApiResource& api = *options_.api;
  auto event = ParseJson(line, Cat("watch event of ", api.resource), kMaxEventBytes);
  if (!event.ok() || !event->is_object()) {
    SetHealth(absl::UnavailableError(Cat("watch ", api.resource, ": bad event")));
    *end = WatchEnd::kError;
    return false;
  }
  std::string type = StringOr(*event, "type", "");
  auto obj_it = event->find("object");
  if (obj_it == event->end() || !obj_it->is_object()) {
    *end = WatchEnd::kError;
    return false;
  }
  if (type == "ERROR") {
    int64_t code = obj_it->value("code", int64_t{0});
    if (code == 410) {
      *end = WatchEnd::kRelist;
    } else {
      SetHealth(absl::UnavailableError(
          Cat("watch ", api.resource, ": ", code, " ", StringOr(*obj_it, "message", ""))));
      *end = WatchEnd::kError;
    }
    return false;
  }
  uint64_t rv = ResourceVersionNumber(*obj_it);
  if (type == "BOOKMARK") {
    if (rv > resume_rv_) {
      resume_rv_ = rv;
      Changed();
    }
    return true;
  }
  WatchEventType kind;
  if (type == "ADDED" || type == "MODIFIED") {
    kind = WatchEventType::kAdded;
  } else if (type == "DELETED") {
    kind = WatchEventType::kDeleted;
  } else {
    return true;  // unknown event types are skipped, as client-go does
  }
  if (rv == 0 || rv <= cache_.LastResourceVersion()) return true;  // already seen
  Object object = Normalize(api, std::move(*obj_it));
  ObjectKey key = KeyOf(api.resource, object);
  Commit(kind, key, std::move(object), rv);
  resume_rv_ = std::max(resume_rv_, rv);
  Changed();
  return true;
}

}  // namespace clusterd::store::kube
