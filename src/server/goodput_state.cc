#include "server/goodput_state.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/config_map_io.h"
#include "common/log.h"

namespace clusterd::server {
namespace {

constexpr char kGoodputStateLog[] = "goodput";
constexpr char kNamespace[] = "cluster-system";
constexpr char kMainConfigMap[] = "clusterd-goodput";
constexpr char kGoodputKey[] = "goodput.json";
constexpr char kOffendersKey[] = "offenders.json";
constexpr char kEpisodesKey[] = "episodes.json";
constexpr char kJobsKey[] = "jobs.json";
constexpr char kShardCountField[] = "jobShards";
// A count beyond this is not one clusterd wrote (800 KiB x 4096 holds millions of jobs).
constexpr int64_t kMaxShards = 4096;

store::ObjectKey Key(std::string_view name) {
  return store::ObjectKey{std::string(store::kConfigMaps), std::string(kNamespace),
                          std::string(name)};
}

std::string DataString(const nlohmann::json& data, const char* key) {
  if (!data.is_object()) return "";
  auto it = data.find(key);
  return it != data.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::Status Put(store::ObjectStore& store, std::string_view name,
                 std::map<std::string, std::string> data) {
  return cluster::WriteWholeConfigMap(store, kNamespace, std::string(name), data,
                                      {{"app.kubernetes.io/part-of", "clusterd"}});
}

}  // namespace

Counter& GoodputStateCounter(std::string_view op, std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_goodput_state_total",
      "Reads and writes of the goodput state ConfigMaps, by operation and result.",
      {{"op", std::string(op)}, {"result", std::string(result)}});
}

GoodputStateStore::GoodputStateStore(store::ObjectStore& store, size_t shard_limit_bytes)
    : store_(store), shards_(std::string(kGoodputJobShardPrefix), shard_limit_bytes) {}

absl::StatusOr<GoodputStateStore::State> GoodputStateStore::Load() {
  absl::StatusOr<store::Object> main = store_.Get(Key(kMainConfigMap));
  if (!main.ok()) return main.status();
  const nlohmann::json data = main->value("data", nlohmann::json::object());
  State state;
  state.offenders = DataString(data, kOffendersKey);
  state.episodes = DataString(data, kEpisodesKey);
  state.ledger = nlohmann::json::parse(DataString(data, kGoodputKey), nullptr,
                                       /*allow_exceptions=*/false);
  if (!state.ledger.is_object() || !state.ledger.contains(kShardCountField)) return state;
  const nlohmann::json count = state.ledger[kShardCountField];
  state.ledger.erase(kShardCountField);
  if (!count.is_number_integer() || count.get<int64_t>() < 0 || count.get<int64_t>() > kMaxShards ||
      !state.ledger.contains("jobs") || !state.ledger["jobs"].is_array()) {
    // Refused by the ledger (logged and counted as malformed), as an unparsable state is.
    state.ledger = nlohmann::json(nlohmann::json::value_t::discarded);
    return state;
  }
  for (int64_t i = 0; i < count.get<int64_t>(); ++i) {
    const std::string name = absl::StrCat(std::string(kGoodputJobShardPrefix), i);
    absl::StatusOr<store::Object> shard = store_.Get(Key(name));
    nlohmann::json jobs = nlohmann::json::object();
    if (shard.ok()) {
      const std::string text = DataString(shard->value("data", nlohmann::json::object()), kJobsKey);
      if (!text.empty()) jobs = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    }
    if (!shard.ok() || !jobs.is_object()) {
      GoodputStateCounter("read", "shard_lost").Increment();
      LogWarn(kGoodputStateLog,
              "a job shard of the saved state is unreadable; its jobs start afresh",
              {{"configmap", absl::StrCat(kNamespace, "/", name)},
               {"error", shard.ok() ? absl::InvalidArgumentError("jobs.json is not a JSON map")
                                    : shard.status()}});
      continue;
    }
    for (auto& [id, record] : jobs.items()) state.ledger["jobs"].push_back(std::move(record));
  }
  return state;
}

absl::Status GoodputStateStore::WriteChanges(const Changes& changes) {
  absl::MutexLock lock(&mu_);
  for (const std::string& id : changes.removed) {
    shards_.Remove(id);
  }
  for (const auto& [id, job] : changes.records) {
    if (id.empty()) continue;
    std::string text = job.dump();
    if (text.size() > cluster::ClusterInfoShards::kDefaultLimitBytes) {
      // One job's timeline alone would break the 1 MiB limit: its totals are kept.
      nlohmann::json trimmed = job;
      trimmed["timeline"] = nlohmann::json::array();
      text = trimmed.dump();
      LogWarn(kGoodputStateLog, "a job's timeline is too large to save; left out", {{"job", id}});
    }
    shards_.Upsert(id, std::move(text));
  }
  for (size_t index : shards_.TakeDirty()) {
    if (absl::Status s = Put(store_, shards_.Name(index), {{kJobsKey, shards_.Render(index)}});
        !s.ok()) {
      shards_.MarkAllDirty();
      GoodputStateCounter("write", "error").Increment();
      return s;
    }
  }
  const nlohmann::json main = {
      {"version", 1}, {"jobs", nlohmann::json::array()}, {kShardCountField, shards_.Count()}};
  if (absl::Status s = Put(store_, kMainConfigMap,
                           {{kGoodputKey, main.dump()},
                            {kOffendersKey, changes.offenders},
                            {kEpisodesKey, changes.episodes}});
      !s.ok()) {
    shards_.MarkAllDirty();
    GoodputStateCounter("write", "error").Increment();
    return s;
  }
  GoodputStateCounter("write", "ok").Increment();
  return absl::OkStatus();
}

}  // namespace clusterd::server
