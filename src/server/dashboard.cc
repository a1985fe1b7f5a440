#include "server/dashboard.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cluster/fault_centre.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/time_format.h"
#include "model/config_map_names.h"

namespace clusterd::server {
namespace {

constexpr int kMaxEventStreams = 4;  // each holds a producer thread
constexpr uint64_t kDefaultBacklog = 100;
constexpr char kClusterInfoNamespace[] = "mindx-dl";
// Above this many touched nodes, a ConfigMap change refreshes the whole view in one query.
constexpr size_t kNodesQueriedOneByOne = 256;

std::string Key(const std::string& node, const std::string& npu, const std::string& code) {
  return absl::StrCat(node, "|", npu, "|", code);
}

// The node an entry of a cluster-info ConfigMap describes (entries are named after the node's
// device-info, switch-info or node-info ConfigMap).
std::string NodeOfEntry(const std::string& entry) {
  for (std::string_view prefix :
       {model::kDeviceInfoPrefix, model::kSwitchInfoPrefix, model::kNodeInfoPrefix}) {
    if (entry.size() > prefix.size() && entry.compare(0, prefix.size(), prefix) == 0) {
      return entry.substr(prefix.size());
    }
  }
  return entry;
}

void AddRow(cluster::FaultViewRow& r, std::map<std::string, FaultFeed::State>* by_node) {
  FaultFeed::Entry e;
  e.node = std::move(r.node);
  e.npu = std::move(r.npu);
  e.code = std::move(r.code);
  e.level = std::move(r.level);
  e.source = std::move(r.source);
  e.jobs = std::move(r.jobs);
  std::string key = Key(e.node, e.npu, e.code);
  FaultFeed::State& state = (*by_node)[e.node];
  state.emplace(std::move(key), std::move(e));
}

}  // namespace

nlohmann::ordered_json FaultFeed::Entry::ToJson() const {
  return nlohmann::ordered_json{
      {"seq", seq},   {"at", Rfc3339Millis(at)}, {"change", change}, {"node", node}, {"npu", npu},
      {"code", code}, {"level", level},          {"source", source}, {"jobs", jobs}};
}

void FaultFeed::Diff(const State& before, const State& after, Changes* out) {
  for (const auto& [key, e] : after) {
    auto it = before.find(key);
    if (it == before.end() || it->second.level != e.level) out->occur[key] = e;
  }
  for (const auto& [key, e] : before) {
    if (after.count(key) == 0) out->clear[key] = e;
  }
}

FaultFeed::FaultFeed(store::ObjectStore& store, const cluster::FaultCentre& faults, size_t capacity,
                     store::InformerFactory* informers)
    : own_informers_(informers == nullptr ? std::make_unique<store::InformerFactory>(store)
                                          : nullptr),
      informers_(informers != nullptr ? informers : own_informers_.get()),
      faults_(faults),
      capacity_(capacity) {}

FaultFeed::~FaultFeed() { Stop(); }

absl::Status FaultFeed::Start() {
  store::SharedInformer& cms = informers_->For(store::kConfigMaps);
  if (absl::Status s = cms.Start(); !s.ok()) return s;
  registration_ =
      cms.AddHandler({.filter = {.ns = std::string(kClusterInfoNamespace),
                                 .predicate =
                                     [](const store::Object& cm) {
                                       return store::NameOf(cm).rfind("cluster-info-", 0) == 0;
                                     }},
                      .on_event =
                          [this](const store::WatchEvent& e) {
                            RefreshConfigMap(e.object(), e.type == store::WatchEventType::kDeleted);
                          },
                      // The shards already written are not read: the replay runs while the
                      // informer holds every ConfigMap change back, and at 50,000 nodes reading
                      // them (25 MB) held a device-info fault back for 0.3 s after a restart.
                      // The view at start is the fault centre's own (below); a shard's first
                      // change is diffed whole.
                      .on_replay = [](const store::WatchEvent&) {}});
  Refresh();
  return absl::OkStatus();
}

void FaultFeed::Stop() {
  registration_.reset();
  if (own_informers_ != nullptr) own_informers_->Stop();
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

void FaultFeed::Refresh() {
  absl::MutexLock lock(&refresh_mu_);
  RefreshNodes({}, /*all=*/true);
}

void FaultFeed::RefreshConfigMap(const store::Object& config_map, bool deleted) {
  const std::string name = store::NameOf(config_map);
  // The ConfigMap's per-node entries: each data value is a JSON map entry name -> entry ("" for
  // none).
  std::map<std::string, nlohmann::ordered_json> next;
  bool readable = true;
  auto data = config_map.find("data");
  if (!deleted && data != config_map.end() && data->is_object()) {
    for (const auto& value : *data) {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) continue;
      // ParseJson (simdjson): a shard is up to 1 MiB of entries, read on the ConfigMap
      // informer's delivery thread while every other ConfigMap change waits behind it.
      absl::StatusOr<nlohmann::ordered_json> parsed = ParseJson(
          value.get_ref<const std::string&>(), "cluster-info shard", store::kMaxConfigMapDataBytes);
      if (!parsed.ok() || !parsed->is_object()) {
        readable = false;
        break;
      }
      for (auto it = parsed->begin(); it != parsed->end(); ++it) {
        next.insert_or_assign(it.key(), std::move(it.value()));
      }
    }
  }
  absl::MutexLock lock(&refresh_mu_);
  if (!readable) {
    // Not what the fault centre writes: forget the ConfigMap and diff the whole view.
    LogWarn("dashboard", "unreadable cluster-info ConfigMap", {{"name", name}});
    shards_.erase(name);
    RefreshNodes({}, /*all=*/true);
    return;
  }
  std::map<std::string, nlohmann::ordered_json>& previous = shards_[name];
  std::set<std::string> touched;
  for (const auto& [entry, value] : next) {
    auto it = previous.find(entry);
    if (it == previous.end() || it->second != value) touched.insert(NodeOfEntry(entry));
  }
  for (const auto& [entry, value] : previous) {
    if (next.count(entry) == 0) touched.insert(NodeOfEntry(entry));
  }
  if (next.empty()) {
    shards_.erase(name);
  } else {
    previous = std::move(next);
  }
  // Many nodes (a shard first seen, a restart's replay): one query of the whole view costs
  // less than one query per node, and says the same of these nodes.
  if (touched.size() > kNodesQueriedOneByOne) {
    RefreshNodes({}, /*all=*/true);
  } else if (!touched.empty()) {
    RefreshNodes(touched, /*all=*/false);
  }
}

void FaultFeed::RefreshNodes(const std::set<std::string>& nodes, bool all) {
  std::map<std::string, State> fresh;
  if (all) {
    for (cluster::FaultViewRow& r : faults_.FaultRows("", "")) AddRow(r, &fresh);
    for (const auto& [node, state] : nodes_) fresh[node];
  } else {
    for (const std::string& node : nodes) {
      fresh[node];
      for (cluster::FaultViewRow& r : faults_.FaultRows(node, "")) AddRow(r, &fresh);
    }
  }
  // Occurrences then clearances, each in key order (as one diff of the whole view orders them).
  Changes changes;
  static const State kNone;
  for (auto& [node, state] : fresh) {
    auto it = nodes_.find(node);
    Diff(it == nodes_.end() ? kNone : it->second, state, &changes);
    if (!state.empty()) {
      nodes_[node] = std::move(state);
    } else if (it != nodes_.end()) {
      nodes_.erase(it);
    }
  }
  if (changes.occur.empty() && changes.clear.empty()) return;
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  auto append = [&](Entry e, const char* change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e.seq = ++seq_;
    e.at = now;
    e.change = change;
    entries_.push_back(std::move(e));
    if (entries_.size() > capacity_) entries_.pop_front();
  };
  for (auto& [key, e] : changes.occur) append(std::move(e), "occur");
  for (auto& [key, e] : changes.clear) append(std::move(e), "clear");
}

std::vector<FaultFeed::Entry> FaultFeed::Since(uint64_t after, absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_ || seq_ > after; };
  mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
  std::vector<Entry> out;
  for (const Entry& e : entries_) {
    if (e.seq > after) out.push_back(e);
  }
  return out;
}

uint64_t FaultFeed::last_seq() const {
  absl::MutexLock lock(&mu_);
  return seq_;
}

bool FaultFeed::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

void InstallDashboard(HttpTransport& server, FaultFeed* feed) {
  auto page = [](const HttpRequest&, HttpResponse& res) {
    res.set_content(DashboardHtml(), "text/html; charset=utf-8");
  };
  server.Get("/", page);
  server.Get("/dashboard", page);
  // The backlog: the newest `limit` entries (default 100, at most the feed's capacity), oldest
  // first, and the sequence number to follow the stream from (?after=).
  server.Get("/api/clusterd/v1/events/recent", [feed](const HttpRequest& req, HttpResponse& res) {
    if (feed == nullptr) {
      res.status = 503;
      res.set_content("no fault feed\n", "text/plain");
      return;
    }
    uint64_t limit = kDefaultBacklog;
    if (req.has_param("limit")) {
      const std::string text = req.get_param_value("limit");
      char* end = nullptr;
      limit = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || limit == 0 || limit > 100000) {
        res.status = 400;
        res.set_content(
            nlohmann::json{{"error", "limit: " + text + " is not a number in 1..100000"}}.dump(),
            "application/json");
        return;
      }
    }
    const uint64_t last = feed->last_seq();
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const FaultFeed::Entry& e :
         feed->Since(last > limit ? last - limit : 0, absl::ZeroDuration())) {
      if (e.seq > last) break;
      items.push_back(e.ToJson());
    }
    res.set_content(
        nlohmann::ordered_json{{"kind", "FaultEventList"}, {"lastSeq", last}, {"items", items}}
            .dump(),
        "application/json");
  });
  static std::atomic<int> streams{0};
  server.Get("/api/clusterd/v1/events", [feed](const HttpRequest& req, HttpResponse& res) {
    Counter& refused = MetricsRegistry::Default().GetCounter(
        "clusterd_dashboard_event_streams_refused_total",
        "Event-stream requests refused because the limit of open streams was reached");
    if (feed == nullptr) {
      res.status = 503;
      res.set_content("no fault feed\n", "text/plain");
      return;
    }
    if (streams.fetch_add(1) >= kMaxEventStreams) {
      streams.fetch_sub(1);
      refused.Increment();
      LogWarn("dashboard", "event stream refused", {{"reason", "too many open streams"}});
      res.status = 503;
      res.set_content("too many open event streams\n", "text/plain");
      return;
    }
    // A reconnecting EventSource names the last entry it saw; a new one starts from `after`
    // (the page passes the last entry of the backlog it loaded), else from now.
    uint64_t start = feed->last_seq();
    if (req.has_header("Last-Event-ID")) {
      start = std::strtoull(req.get_header_value("Last-Event-ID").c_str(), nullptr, 10);
    } else if (req.has_param("after")) {
      start = std::min<uint64_t>(start,
                                 std::strtoull(req.get_param_value("after").c_str(), nullptr, 10));
    }
    struct Cursor {
      uint64_t seq;
      int quiet_seconds = 0;
    };
    auto cursor = std::make_shared<Cursor>(Cursor{start});
    res.set_header("Cache-Control", "no-cache");
    // The producer runs on a thread of the stream's own; it waits a second at a time so that
    // a stream whose client left ends within a second, and says "keep-alive" every 10 s.
    res.set_stream(
        "text/event-stream",
        [feed, cursor](std::string* out) {
          if (feed->stopped()) return false;
          std::vector<FaultFeed::Entry> entries = feed->Since(cursor->seq, absl::Seconds(1));
          if (feed->stopped()) return false;
          for (const FaultFeed::Entry& e : entries) {
            absl::StrAppend(out, "id: ", e.seq, "\nevent: fault\ndata: ", e.ToJson().dump(),
                            "\n\n");
            cursor->seq = e.seq;
          }
          if (!entries.empty()) {
            cursor->quiet_seconds = 0;
          } else if (++cursor->quiet_seconds >= 10) {
            cursor->quiet_seconds = 0;
            *out = ": keep-alive\n\n";
          }
          return true;  // an empty piece: nothing to send yet
        },
        [] { streams.fetch_sub(1); });
  });
}

}  // namespace clusterd::server
