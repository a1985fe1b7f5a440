#include "store/kube/kube_store.h"

#include <random>
#include <utility>

#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "store/admission.h"
#include "store/strings.h"

namespace clusterd::store::kube {
namespace {

constexpr size_t kMaxObjectBytes = size_t{64} << 20;
constexpr size_t kMaxListBytes = size_t{1} << 30;
// Attempts of an unconditional update of a custom resource (read, put, 409: read again).
constexpr int kUnconditionalUpdateAttempts = 5;
constexpr std::string_view kMergePatch = "application/merge-patch+json";

uint64_t VersionOf(const Object& o) {
  return ParseResourceVersion(ResourceVersionOf(o)).value_or(0);
}

Counter& QueuedWritesCounter(std::string_view outcome) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_kube_queued_writes_total",
      "Writes the kube store queued while the API server was unreachable (queued), and what "
      "became of them (applied, or dropped when the server refused them).",
      {{"outcome", std::string(outcome)}});
}

bool IsUnreachable(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

}  // namespace

KubeStore::KubeStore(Options options) : options_(std::move(options)) {
  ApiClient::Options client;
  client.config = options_.config;
  client.qps = options_.qps;
  client.burst = options_.burst;
  client.request_timeout = options_.request_timeout;
  client.connect_timeout = options_.connect_timeout;
  client.clock = options_.clock;
  client.user_agent = Cat("clusterd/", CLUSTERD_STORE_VERSION);
  client_ = std::make_unique<ApiClient>(std::move(client));
  writer_ = std::thread([this] {
    SetCurrentThreadName("kube-writer");
    WriterLoop();
  });
}

KubeStore::~KubeStore() {
  {
    absl::MutexLock lock(&queue_mu_);
    stopping_ = true;
    if (!queue_.empty()) {
      LogError("kube", "stopping with writes still queued for the API server; they are lost",
               {{"queued", queue_.size()}});
    }
  }
  client_->Shutdown();
  if (writer_.joinable()) writer_.join();
  std::map<std::string, std::unique_ptr<Reflector>, std::less<>> informers;
  std::map<std::string, std::map<std::string, std::unique_ptr<Reflector>>, std::less<>> scoped;
  {
    absl::MutexLock lock(&mu_);
    informers.swap(informers_);
    scoped.swap(scoped_);
  }
  for (auto& [name, reflector] : informers) reflector->Stop();
  for (auto& [resource, by_scope] : scoped) {
    for (auto& [key, reflector] : by_scope) reflector->Stop();
  }
}

absl::StatusOr<std::unique_ptr<KubeStore>> KubeStore::Open(Options options) {
  for (const std::string& r : options.eager_resources) {
    if (absl::Status s = CheckResource(r); !s.ok()) return s;
  }
  std::unique_ptr<KubeStore> store(new KubeStore(std::move(options)));
  // Fail at start, with the reason, when the server cannot be reached or refuses us.
  auto version = store->Send("GET", "/version", nullptr);
  if (!version.ok() || version->code != 200) {
    absl::Status why =
        version.ok() ? StatusFromResponse(*version, "GET /version") : version.status();
    return absl::UnavailableError(Cat("kube store: API server ", store->options_.config.server,
                                      " (", store->options_.config.source, "): ", why.message()));
  }
  std::vector<Reflector*> started;
  for (const std::string& r : store->options_.eager_resources) {
    started.push_back(store->StartedReflector(r, ReadScope{}));
  }
  absl::Time deadline = store->options_.clock->Now() + store->options_.sync_timeout;
  for (Reflector* reflector : started) {
    if (!reflector->WaitForSync(deadline - store->options_.clock->Now())) {
      return absl::UnavailableError(Cat(
          "kube store: API server ", store->options_.config.server, " (",
          store->options_.config.source, "): cannot list ", reflector->api().resource, " within ",
          absl::FormatDuration(store->options_.sync_timeout), ": ", reflector->Health().message()));
    }
  }
  LogInfo(
      "kube", "store open",
      {{"server", store->options_.config.server}, {"credentials", store->options_.config.source}});
  return store;
}

Reflector* KubeStore::FindReflector(std::string_view resource, const ReadScope& scope) {
  absl::MutexLock lock(&mu_);
  if (scope.ClusterWide()) {
    auto it = informers_.find(resource);
    return it == informers_.end() ? nullptr : it->second.get();
  }
  auto by_scope = scoped_.find(resource);
  if (by_scope == scoped_.end()) return nullptr;
  auto it = by_scope->second.find(scope.Key());
  return it == by_scope->second.end() ? nullptr : it->second.get();
}

Reflector* KubeStore::StartedReflector(std::string_view resource, const ReadScope& scope) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<Reflector>* slot = nullptr;
  if (scope.ClusterWide()) {
    slot = &informers_[std::string(resource)];
  } else {
    slot = &scoped_[std::string(resource)][scope.Key()];
  }
  if (*slot != nullptr) return slot->get();
  Reflector::Options o;
  o.api = FindApiResource(resource);
  o.scope = scope;
  o.client = client_.get();
  o.history_limit = options_.history_limit;
  o.page_size = options_.page_size;
  o.watch_timeout = options_.watch_timeout;
  o.min_backoff = options_.min_backoff;
  o.max_backoff = options_.max_backoff;
  o.clock = options_.clock;
  *slot = std::make_unique<Reflector>(o);
  Reflector* raw = slot->get();
  raw->Start();
  if (!scope.ClusterWide()) {
    LogDebug("kube", "scoped cache started", {{"resource", resource}, {"scope", scope.ToString()}});
  }
  return raw;
}

absl::StatusOr<Reflector*> KubeStore::ReflectorFor(std::string_view resource,
                                                   const ReadScope& scope) {
  if (absl::Status s = CheckResource(resource); !s.ok()) return s;
  // A reflector of exactly this scope first: a watch from the version of a list of this scope
  // finds that version in the history of the reflector the list started.
  Reflector* reflector = FindReflector(resource, scope);
  if (reflector == nullptr) reflector = FindReflector(resource, ReadScope{});
  if (reflector == nullptr) reflector = StartedReflector(resource, scope);
  if (!reflector->WaitForSync(options_.sync_timeout)) {
    std::string what(resource);
    if (!reflector->scope().ClusterWide()) what += Cat(" (", reflector->scope().ToString(), ")");
    return absl::UnavailableError(Cat("kube store: ", what, " not synced with ",
                                      options_.config.server, ": ", reflector->Health().message()));
  }
  return reflector;
}

Reflector* KubeStore::CoveringReflector(const ObjectKey& key) {
  std::vector<Reflector*> candidates;
  {
    absl::MutexLock lock(&mu_);
    auto by_scope = scoped_.find(key.resource);
    if (by_scope == scoped_.end()) return nullptr;
    for (auto& [scope_key, reflector] : by_scope->second) {
      if (reflector->scope().Covers(key)) candidates.push_back(reflector.get());
    }
  }
  for (Reflector* r : candidates) {
    if (r->synced()) return r;
  }
  return nullptr;
}

std::vector<Reflector*> KubeStore::ReflectorsSeeing(const ObjectKey& key, const Object* written) {
  std::vector<Reflector*> all;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = informers_.find(key.resource); it != informers_.end()) {
      all.push_back(it->second.get());
    }
    if (auto by_scope = scoped_.find(key.resource); by_scope != scoped_.end()) {
      for (auto& [scope_key, reflector] : by_scope->second) all.push_back(reflector.get());
    }
  }
  std::vector<Reflector*> seeing;
  for (Reflector* r : all) {
    if (!r->synced()) continue;
    // A write changes a scoped cache when the object is in it (MODIFIED, or DELETED when it
    // leaves the scope) or enters it; other scopes never see the write.
    if (r->scope().ClusterWide() || r->cache().Find(key) != nullptr ||
        (written != nullptr && r->scope().Holds(*written))) {
      seeing.push_back(r);
    }
  }
  return seeing;
}

absl::Status KubeStore::Ready() {
  if (size_t queued = queued_writes(); queued > 0) {
    return absl::UnavailableError(
        Cat("kube store: ", queued, " writes wait for the API server ", options_.config.server));
  }
  if (std::string throttled = client_->Throttled(); !throttled.empty()) {
    return absl::UnavailableError(Cat("kube store: the API server ", options_.config.server,
                                      " throttles this client (API Priority and Fairness); "
                                      "requests are sent again after its Retry-After: ",
                                      throttled));
  }
  std::vector<Reflector*> reflectors;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [name, r] : informers_) reflectors.push_back(r.get());
    for (auto& [resource, by_scope] : scoped_) {
      for (auto& [key, r] : by_scope) reflectors.push_back(r.get());
    }
  }
  for (Reflector* r : reflectors) {
    if (absl::Status h = r->Health(); !h.ok()) {
      std::string what(r->api().resource);
      if (!r->scope().ClusterWide()) what += Cat(" (", r->scope().ToString(), ")");
      return absl::UnavailableError(Cat("kube store: ", what, ": ", h.message()));
    }
  }
  if (!client_->Reachable()) {
    return absl::UnavailableError(Cat("kube store: ", client_->LastError()));
  }
  return absl::OkStatus();
}

// --- requests --------------------------------------------------------------------------------

absl::StatusOr<ApiClient::Response> KubeStore::Send(std::string method, std::string path,
                                                    const Object* body, std::string content_type) {
  ApiClient::Request request;
  request.method = std::move(method);
  request.path = std::move(path);
  if (body != nullptr) request.body = body->dump();
  request.content_type = std::move(content_type);
  return client_->Do(request);
}

absl::StatusOr<Object> KubeStore::ParseObject(const ApiResource& api,
                                              const ApiClient::Response& response,
                                              std::string_view what) {
  auto parsed = ParseJson(response.body, what, kMaxObjectBytes);
  if (!parsed.ok() || !parsed->is_object()) {
    return absl::UnavailableError(
        Cat("kube store: ", what, ": the API server's answer is not an object"));
  }
  return Normalize(api, *std::move(parsed));
}

absl::StatusOr<Object> KubeStore::GetFromServer(const ApiResource& api, const ObjectKey& key) {
  auto response = Send("GET", api.ObjectPath(key), nullptr);
  if (!response.ok()) return response.status();
  if (response->code == 404) return NotFoundError(key);
  if (response->code != 200) return StatusFromResponse(*response, Cat("get ", key.ToString()));
  return ParseObject(api, *response, Cat("get ", key.ToString()));
}

absl::Status KubeStore::Conflict(const ApiResource& api, const ObjectKey& key,
                                 std::string_view wanted, const ApiClient::Response& response) {
  if (wanted.empty()) return StatusFromResponse(response, key.ToString());
  // The server does not say which version it has: read it, for a message that helps.
  std::string stored = "unknown";
  if (auto fresh = GetFromServer(api, key); fresh.ok()) {
    stored = ResourceVersionOf(*fresh);
  } else if (fresh.status().code() == absl::StatusCode::kNotFound) {
    stored = "(deleted)";
  }
  return absl::AbortedError(Cat("409 Conflict: ", key.ToString(),
                                ": resourceVersion precondition \"", wanted,
                                "\" does not match the stored resourceVersion \"", stored, "\""));
}

void KubeStore::AwaitCache(const ObjectKey& key, const Object& written) {
  const uint64_t resource_version = VersionOf(written);
  if (resource_version == 0) return;
  for (Reflector* reflector : ReflectorsSeeing(key, &written)) {
    if (!reflector->WaitForVersion(resource_version, options_.write_sync_timeout)) {
      LogDebug("kube", "write not yet seen by the cache",
               {{"object", key.ToString()},
                {"scope", reflector->scope().ToString()},
                {"resourceVersion", resource_version}});
    }
  }
}

void KubeStore::AwaitDeletion(const ObjectKey& key, const std::string& uid) {
  for (Reflector* reflector : ReflectorsSeeing(key, nullptr)) {
    reflector->WaitUntil(
        [&] {
          auto cached = reflector->cache().Find(key);
          return cached == nullptr || (!uid.empty() && UidOf(*cached) != uid);
        },
        options_.write_sync_timeout);
  }
}

// --- reads -----------------------------------------------------------------------------------

absl::StatusOr<Object> KubeStore::Get(const ObjectKey& key) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  // Which cache answers. The cluster-wide one of the resource when there is one (clusterd's
  // informers keep one of every resource they read). Else a scoped one that alone decides the
  // key: an npu-agent watches its own ConfigMaps by name, and reads them on every cycle. Else,
  // for a store of scoped reads, none: the server answers the GET, so that reading one object
  // (a job's reset ConfigMap) does not cache every ConfigMap of the cluster on every node; the
  // price is a request per read and no answer while the server is unreachable. Else the
  // cluster-wide cache is started, as a process that reads whole resources wants.
  Reflector* reflector = FindReflector(key.resource, ReadScope{});
  if (reflector == nullptr) reflector = CoveringReflector(key);
  if (options_.scoped_reads) {
    if (reflector != nullptr && !reflector->synced()) reflector = nullptr;
  } else if (reflector == nullptr || reflector->scope().ClusterWide()) {
    auto started = ReflectorFor(key.resource, ReadScope{});  // waits until it is synced
    if (!started.ok()) return started.status();
    reflector = *started;
  }
  {
    absl::MutexLock lock(&queue_mu_);
    if (auto it = overlay_.find(key); it != overlay_.end()) {
      if (!it->second) return NotFoundError(key);
      return *it->second;
    }
  }
  if (reflector == nullptr) return GetFromServer(*FindApiResource(key.resource), key);
  return reflector->cache().Get(key);
}

absl::StatusOr<ObjectList> KubeStore::ListFromServer(const ApiResource& api,
                                                     const ListOptions& options) {
  ObjectList list;
  std::string cont;
  std::string selector = options.selector.ToString();
  std::string fields = options.fields.ToString();
  for (int restarts = 0;;) {
    std::string path = Cat(api.CollectionPath(options.ns), "?limit=", options_.page_size);
    if (!selector.empty()) path += Cat("&labelSelector=", QueryEscape(selector));
    if (!fields.empty()) path += Cat("&fieldSelector=", QueryEscape(fields));
    if (!cont.empty()) path += Cat("&continue=", QueryEscape(cont));
    auto response = Send("GET", path, nullptr);
    if (!response.ok()) return response.status();
    if (response->code == 410 && !cont.empty() && restarts++ < 3) {
      list = ObjectList();
      cont.clear();
      continue;
    }
    if (response->code != 200) {
      return StatusFromResponse(*response, Cat("list ", api.resource));
    }
    auto body = ParseJson(response->body, Cat("list ", api.resource), kMaxListBytes);
    if (!body.ok() || !body->is_object()) {
      return absl::UnavailableError(Cat("kube store: list ", api.resource, ": bad answer"));
    }
    const Object& meta = (*body)["metadata"];
    if (cont.empty()) list.resource_version = StringOr(meta, "resourceVersion", "");
    cont = StringOr(meta, "continue", "");
    if (auto items = body->find("items"); items != body->end() && items->is_array()) {
      for (Object& item : *items) list.items.push_back(Normalize(api, std::move(item)));
    }
    if (cont.empty()) return list;
  }
}

absl::StatusOr<ObjectList> KubeStore::List(std::string_view resource, const ListOptions& options) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  const ApiResource& api = *FindApiResource(resource);
  // The cache starts first, so that a watch from the version of this list is in its history.
  auto reflector = ReflectorFor(resource, ReadScope{options.ns, options.fields});
  if (!reflector.ok()) return reflector.status();
  bool queued = queued_writes() > 0;  // the server does not have them yet: list the cache
  if (client_->Reachable() && !queued) {
    auto listed = ListFromServer(api, options);
    if (listed.ok() || !IsUnreachable(listed.status())) return listed;
    LogDebug("kube", "list served from the cache",
             {{"resource", resource}, {"error", listed.status()}});
  }
  ObjectList list = (*reflector)->cache().List(resource, options);
  absl::MutexLock lock(&queue_mu_);
  OverlayLocked(resource, options, &list);
  return list;
}

absl::StatusOr<SharedObjectList> KubeStore::ListShared(std::string_view resource,
                                                       const ListOptions& options) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  // Synced: the reflector has just listed the server, or keeps up with it by its watch; a Watch
  // of the same options is served from the same cache.
  auto reflector = ReflectorFor(resource, ReadScope{options.ns, options.fields});
  if (!reflector.ok()) return reflector.status();
  if (queued_writes() > 0) return ObjectStore::ListShared(resource, options);
  return (*reflector)->cache().ListShared(resource, options);
}

absl::StatusOr<std::unique_ptr<WatchHandle>> KubeStore::Watch(std::string_view resource,
                                                              const WatchOptions& options,
                                                              WatchHandler handler) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  auto reflector = ReflectorFor(resource, ReadScope{options.ns, options.fields});
  if (!reflector.ok()) return reflector.status();
  if (options.resource_version.empty()) {
    return (*reflector)->cache().Watch(resource, options, std::move(handler));
  }
  std::optional<uint64_t> from = ParseResourceVersion(options.resource_version);
  if (!from) {
    return absl::InvalidArgumentError(Cat("watch ", resource, ": resourceVersion \"",
                                          options.resource_version, "\" is not a decimal number"));
  }
  // The version may come from a List answered by the server, ahead of the cache: changes the
  // cache has not caught up with yet and that the list already showed are not delivered.
  return (*reflector)
      ->cache()
      .Watch(resource, options, [from = *from, handler = std::move(handler)](const WatchEvent& e) {
        if (VersionOf(e.object()) > from) handler(e);
      });
}

// --- writes to the server --------------------------------------------------------------------

absl::StatusOr<Object> KubeStore::WriteStatus(const ApiResource& api, const ObjectKey& key,
                                              const Object& written, const Object& status) {
  Object body = written;
  body["status"] = status;
  auto response = Send("PUT", api.ObjectPath(key, "status"), &body);
  if (!response.ok()) return response.status();
  if (response->code == 409) return Conflict(api, key, ResourceVersionOf(written), *response);
  if (response->code != 200 && response->code != 201) {
    return StatusFromResponse(*response, Cat("update ", key.ToString(), "/status"));
  }
  return ParseObject(api, *response, Cat("update ", key.ToString(), "/status"));
}

absl::StatusOr<Object> KubeStore::CreateOnline(const ApiResource& api, const ObjectKey& key,
                                               const Object& object) {
  auto response = Send("POST", api.CollectionPath(key.ns), &object);
  if (!response.ok()) return response.status();
  if (response->code == 409 && ReasonOf(response->body) == "AlreadyExists") {
    return AlreadyExistsError(key);
  }
  if (response->code != 201 && response->code != 200) {
    return StatusFromResponse(*response, Cat("create ", key.ToString()));
  }
  auto created = ParseObject(api, *response, Cat("create ", key.ToString()));
  if (!created.ok()) return created.status();
  // The server sets the status of a new object itself; the store's contract keeps the given one.
  if (auto status = object.find("status"); api.status_subresource && status != object.end() &&
                                           created->value("status", Object()) != *status) {
    created = WriteStatus(api, key, *created, *status);
    if (!created.ok()) return created.status();
  }
  AwaitCache(key, *created);
  return created;
}

absl::StatusOr<Object> KubeStore::UpdateOnline(const ApiResource& api, const ObjectKey& key,
                                               Object object) {
  std::string wanted = ResourceVersionOf(object);
  // Custom resources and Leases refuse an update without a resourceVersion: read, put, and on
  // a conflict read again, which is what "unconditional" means.
  bool emulate_unconditional = wanted.empty() && api.update_needs_version;
  absl::StatusOr<ApiClient::Response> response;
  for (int attempt = 0;; ++attempt) {
    if (emulate_unconditional) {
      auto fresh = GetFromServer(api, key);
      if (!fresh.ok()) return fresh.status();
      SetMetadataField(object, "resourceVersion", ResourceVersionOf(*fresh));
    }
    response = Send("PUT", api.ObjectPath(key), &object);
    if (!response.ok()) return response.status();
    if (!(emulate_unconditional && response->code == 409 &&
          attempt + 1 < kUnconditionalUpdateAttempts)) {
      break;
    }
  }
  if (response->code == 404) return NotFoundError(key);
  if (response->code == 409) return Conflict(api, key, wanted, *response);
  if (response->code != 200 && response->code != 201) {
    return StatusFromResponse(*response, Cat("update ", key.ToString()));
  }
  auto updated = ParseObject(api, *response, Cat("update ", key.ToString()));
  if (!updated.ok()) return updated.status();
  if (auto status = object.find("status"); api.status_subresource && status != object.end() &&
                                           updated->value("status", Object()) != *status) {
    updated = WriteStatus(api, key, *updated, *status);
    if (!updated.ok()) return updated.status();
  }
  AwaitCache(key, *updated);
  return updated;
}

absl::StatusOr<Object> KubeStore::PatchOnline(const ApiResource& api, const ObjectKey& key,
                                              const Object& merge_patch) {
  std::string wanted;
  if (auto meta = merge_patch.find("metadata"); meta != merge_patch.end() && meta->is_object()) {
    wanted = StringOr(*meta, "resourceVersion", "");
  }
  Object main = merge_patch;
  Object status_patch;
  bool has_status = api.status_subresource && merge_patch.contains("status");
  if (has_status) {
    status_patch["status"] = merge_patch["status"];
    main.erase("status");
    // Only a precondition left for the main resource: let the status write carry it.
    bool precondition_only = main.size() == 1 && main.contains("metadata") &&
                             main["metadata"].is_object() && main["metadata"].size() == 1 &&
                             !wanted.empty();
    if (main.empty() || precondition_only) {
      if (!wanted.empty()) status_patch["metadata"]["resourceVersion"] = wanted;
      main = Object();
    }
  }
  absl::StatusOr<Object> patched = absl::UnknownError("nothing patched");
  for (auto [body, sub] : {std::pair<const Object*, std::string_view>{&main, ""},
                           std::pair<const Object*, std::string_view>{&status_patch, "status"}}) {
    if (body->is_null()) continue;
    auto response = Send("PATCH", api.ObjectPath(key, sub), body, std::string(kMergePatch));
    if (!response.ok()) return response.status();
    if (response->code == 404) return NotFoundError(key);
    if (response->code == 409) return Conflict(api, key, wanted, *response);
    if (response->code != 200 && response->code != 201) {
      return StatusFromResponse(*response, Cat("patch ", key.ToString()));
    }
    patched = ParseObject(api, *response, Cat("patch ", key.ToString()));
    if (!patched.ok()) return patched.status();
    wanted.clear();
  }
  AwaitCache(key, *patched);
  return patched;
}

absl::Status KubeStore::DeleteOnline(const ApiResource& api, const ObjectKey& key,
                                     std::string_view resource_version) {
  Object options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!resource_version.empty()) {
    options["preconditions"]["resourceVersion"] = std::string(resource_version);
  }
  auto response = Send("DELETE", api.ObjectPath(key), &options);
  if (!response.ok()) return response.status();
  if (response->code == 404) return NotFoundError(key);
  if (response->code == 409) return Conflict(api, key, resource_version, *response);
  if (response->code != 200 && response->code != 202) {
    return StatusFromResponse(*response, Cat("delete ", key.ToString()));
  }
  std::string uid;
  // The server answers a Pod's delete with the object, any other's with a Status whose
  // details carry the uid (without it, a name created again before the cache saw the delete
  // made AwaitDeletion wait out its timeout).
  if (auto last = ParseJson(response->body, "delete", kMaxObjectBytes);
      last.ok() && last->is_object()) {
    if (StringOr(*last, "kind", "") != "Status") {
      uid = UidOf(*last);
    } else if (auto details = last->find("details");
               details != last->end() && details->is_object()) {
      uid = StringOr(*details, "uid", "");
    }
  }
  AwaitDeletion(key, uid);
  return absl::OkStatus();
}

// --- the ObjectStore writes: online, or queued while the server is unreachable ----------------

absl::StatusOr<Object> KubeStore::Create(std::string_view resource, Object object) {
  if (absl::Status s = ValidateObject(resource, object); !s.ok()) return s;
  const ApiResource& api = *FindApiResource(resource);
  Object& meta = object["metadata"];
  meta.erase("resourceVersion");
  if (!api.namespaced) meta.erase("namespace");
  object = Normalize(api, std::move(object));
  ObjectKey key = KeyOf(resource, object);
  QueuedWrite write{WriteOp::kCreate, key, object, "", false};
  {
    absl::MutexLock lock(&queue_mu_);
    if (Queueing()) {
      auto queued = EnqueueLocked(std::move(write), &object);
      if (!queued.ok()) return queued.status();
      return **queued;
    }
  }
  auto created = CreateOnline(api, key, object);
  if (created.ok() || !NotSent(created.status())) return created;
  absl::MutexLock lock(&queue_mu_);
  auto queued = EnqueueLocked(std::move(write), &object);
  if (!queued.ok()) return queued.status();
  return **queued;
}

absl::StatusOr<Object> KubeStore::Update(std::string_view resource, Object object) {
  if (absl::Status s = ValidateObject(resource, object); !s.ok()) return s;
  const ApiResource& api = *FindApiResource(resource);
  if (!api.namespaced) object["metadata"].erase("namespace");
  object = Normalize(api, std::move(object));
  ObjectKey key = KeyOf(resource, object);
  QueuedWrite write{WriteOp::kUpdate, key, object, "", false};
  {
    absl::MutexLock lock(&queue_mu_);
    if (Queueing()) {
      auto queued = EnqueueLocked(std::move(write), &object);
      if (!queued.ok()) return queued.status();
      return **queued;
    }
  }
  auto updated = UpdateOnline(api, key, object);
  if (updated.ok() || !NotSent(updated.status())) return updated;
  absl::MutexLock lock(&queue_mu_);
  auto queued = EnqueueLocked(std::move(write), &object);
  if (!queued.ok()) return queued.status();
  return **queued;
}

absl::StatusOr<Object> KubeStore::Patch(const ObjectKey& key, const Object& merge_patch) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (!merge_patch.is_object()) {
    return absl::InvalidArgumentError(Cat(
        key.ToString(), ": a merge patch must be a JSON object, not ", merge_patch.type_name()));
  }
  const ApiResource& api = *FindApiResource(key.resource);
  QueuedWrite write{WriteOp::kPatch, key, merge_patch, "", false};
  {
    absl::MutexLock lock(&queue_mu_);
    if (Queueing()) {
      auto queued = EnqueueLocked(std::move(write), &merge_patch);
      if (!queued.ok()) return queued.status();
      return **queued;
    }
  }
  auto patched = PatchOnline(api, key, merge_patch);
  if (patched.ok() || !NotSent(patched.status())) return patched;
  absl::MutexLock lock(&queue_mu_);
  auto queued = EnqueueLocked(std::move(write), &merge_patch);
  if (!queued.ok()) return queued.status();
  return **queued;
}

absl::Status KubeStore::Delete(const ObjectKey& key, std::string_view resource_version) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  const ApiResource& api = *FindApiResource(key.resource);
  QueuedWrite write{WriteOp::kDelete, key, Object(), std::string(resource_version), false};
  {
    absl::MutexLock lock(&queue_mu_);
    if (Queueing()) return EnqueueLocked(std::move(write), nullptr).status();
  }
  absl::Status deleted = DeleteOnline(api, key, resource_version);
  if (deleted.ok() || !NotSent(deleted)) return deleted;
  absl::MutexLock lock(&queue_mu_);
  return EnqueueLocked(std::move(write), nullptr).status();
}

// --- the queue -------------------------------------------------------------------------------

size_t KubeStore::queued_writes() {
  absl::MutexLock lock(&queue_mu_);
  return queue_.size();
}

bool KubeStore::Queueing() { return !queue_.empty() || !client_->Reachable(); }

std::optional<Object> KubeStore::CurrentLocked(const ObjectKey& key) {
  if (auto it = overlay_.find(key); it != overlay_.end()) return it->second;
  Reflector* reflector = FindReflector(key.resource, ReadScope{});
  if (reflector == nullptr || !reflector->synced()) reflector = CoveringReflector(key);
  if (reflector == nullptr || !reflector->synced()) return std::nullopt;
  auto cached = reflector->cache().Find(key);
  if (cached == nullptr) return std::nullopt;
  return *cached;
}

absl::StatusOr<std::optional<Object>> KubeStore::EnqueueLocked(QueuedWrite write,
                                                               const Object* object) {
  if (queue_.size() >= options_.max_queued_writes) {
    return absl::UnavailableError(
        Cat("kube store: ", queue_.size(), " writes already wait for the API server ",
            options_.config.server, "; ", write.key.ToString(), " not written"));
  }
  std::optional<Object> current = CurrentLocked(write.key);
  // The write's own rules, against the state it will apply to (admission.h, as the memory
  // and dir stores apply them).
  std::optional<Object> next;
  switch (write.op) {
    case WriteOp::kCreate: {
      if (current) return AlreadyExistsError(write.key);
      auto admitted = AdmitCreate(write.key.resource, *object, options_.clock->Now());
      if (!admitted.ok()) return admitted.status();
      (*admitted)["metadata"].erase("uid");  // the server assigns it
      next = *std::move(admitted);
      break;
    }
    case WriteOp::kUpdate: {
      if (!current) return NotFoundError(write.key);
      auto admitted = AdmitUpdate(write.key.resource, *current, *object);
      if (!admitted.ok()) return admitted.status();
      // A precondition on a version the server has is kept; the state of an earlier queued
      // write has no version, and the write then applies over it unconditionally.
      if (ResourceVersionOf(*current).empty()) write.body["metadata"].erase("resourceVersion");
      next = *std::move(admitted);
      break;
    }
    case WriteOp::kPatch: {
      if (!current) return NotFoundError(write.key);
      auto admitted = AdmitPatch(write.key, *current, *object);
      if (!admitted.ok()) return admitted.status();
      next = *std::move(admitted);
      break;
    }
    case WriteOp::kDelete: {
      if (!current) return NotFoundError(write.key);
      if (absl::Status s = AdmitDelete(write.key, *current, write.precondition); !s.ok()) return s;
      if (ResourceVersionOf(*current).empty()) write.precondition.clear();
      break;
    }
  }
  // The outage itself is logged once, by the client; each write is a debug line and a count.
  LogDebug("kube", "API server unreachable; write queued",
           {{"object", write.key.ToString()}, {"queued", queue_.size() + 1}});
  QueuedWritesCounter("queued").Increment();
  overlay_[write.key] = next;
  ++queued_per_key_[write.key];
  queue_.push_back(std::move(write));
  return next;
}

absl::Status KubeStore::Replay(const QueuedWrite& write) {
  const ApiResource& api = *FindApiResource(write.key.resource);
  switch (write.op) {
    case WriteOp::kCreate: {
      absl::Status s = CreateOnline(api, write.key, write.body).status();
      if (write.attempted && s.code() == absl::StatusCode::kAlreadyExists) return absl::OkStatus();
      return s;
    }
    case WriteOp::kUpdate:
      return UpdateOnline(api, write.key, write.body).status();
    case WriteOp::kPatch:
      return PatchOnline(api, write.key, write.body).status();
    case WriteOp::kDelete: {
      absl::Status s = DeleteOnline(api, write.key, write.precondition);
      if (write.attempted && s.code() == absl::StatusCode::kNotFound) return absl::OkStatus();
      return s;
    }
  }
  return absl::OkStatus();
}

void KubeStore::WriterLoop() {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int attempt = 0;
  uint64_t returns_seen = client_->returns();  // as the reflectors' back-off (reflector.cc)
  int64_t applied_since_empty = 0;
  for (;;) {
    QueuedWrite write;
    {
      absl::MutexLock lock(&queue_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
        return stopping_ || !queue_.empty();
      };
      queue_mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      write = queue_.front();
    }
    absl::Status s = Replay(write);
    if (IsUnreachable(s)) {
      if (!NotSent(s)) {
        absl::MutexLock lock(&queue_mu_);
        if (!queue_.empty()) queue_.front().attempted = true;
      }
      if (const uint64_t returns = client_->returns(); returns != returns_seen) {
        returns_seen = returns;
        attempt = 0;
      }
      absl::Duration wait =
          Backoff(attempt++, options_.min_backoff, options_.max_backoff, unit(rng));
      // Queued writes go as soon as the server answers again, not at the end of a back-off
      // that grew while it was away (20 s after a 30 s outage, before this waited there).
      absl::MutexLock lock(&queue_mu_);
      if (!PauseUntilAnswered(*client_, queue_mu_, &stopping_, wait)) return;
      continue;
    }
    attempt = 0;
    absl::MutexLock lock(&queue_mu_);
    queue_.pop_front();
    if (--queued_per_key_[write.key] == 0) {
      queued_per_key_.erase(write.key);
      overlay_.erase(write.key);
    }
    if (s.ok()) {
      QueuedWritesCounter("applied").Increment();
      ++applied_since_empty;
      LogDebug("kube", "queued write applied",
               {{"object", write.key.ToString()}, {"remaining", queue_.size()}});
      if (queue_.empty()) {
        LogInfo("kube", "every queued write applied", {{"applied", applied_since_empty}});
        applied_since_empty = 0;
      }
    } else {
      QueuedWritesCounter("dropped").Increment();
      LogError("kube", "queued write refused by the API server; dropped",
               {{"object", write.key.ToString()}, {"error", s}});
    }
  }
}

void KubeStore::OverlayLocked(std::string_view resource, const ListOptions& options,
                              ObjectList* list) {
  if (overlay_.empty()) return;
  std::map<ObjectKey, Object> merged;
  for (Object& o : list->items) {
    ObjectKey key = KeyOf(resource, o);
    merged.emplace(std::move(key), std::move(o));
  }
  for (const auto& [key, state] : overlay_) {
    if (key.resource != resource || (!options.ns.empty() && key.ns != options.ns)) continue;
    merged.erase(key);
    if (state && options.selector.Matches(*state) && options.fields.Matches(*state)) {
      merged.emplace(key, *state);
    }
  }
  list->items.clear();
  for (auto& [key, o] : merged) list->items.push_back(std::move(o));
}

}  // namespace clusterd::store::kube
