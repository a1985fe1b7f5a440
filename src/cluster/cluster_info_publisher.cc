#include "cluster/cluster_info_publisher.h"

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "cluster/cluster_info_render.h"
#include "cluster/config_map_io.h"
#include "common/log.h"
#include "common/sv.h"

namespace clusterd::cluster {
namespace {

constexpr char kClusterInfoPublisherLog[] = "fault-centre";
constexpr char kWriteKey[] = "#write";  // the writer's one key

// The shard number of `cm_name` when it is `prefix` followed by one.
std::optional<size_t> ShardIndex(const std::string& cm_name, std::string_view prefix) {
  if (!absl::StartsWith(cm_name, Sv(prefix))) return std::nullopt;
  return std::stoul(cm_name.substr(prefix.size()));
}

Counter& WritesCounter(const char* result) {
  return MetricsRegistry::Default().GetCounter("clusterd_fault_centre_cm_writes_total",
                                               "cluster-info ConfigMap writes by result.",
                                               {{"result", result}});
}

}  // namespace

ClusterInfoPublisher::ClusterInfoPublisher(store::ObjectStore& store, Clock& clock, Options options)
    : store_(store),
      device_shards_(std::string(kClusterInfoDevicePrefix), options.shard_limit_bytes),
      switch_shards_(std::string(kClusterInfoSwitchPrefix), options.shard_limit_bytes),
      node_shard_(std::string(kClusterInfoNodeName), SIZE_MAX),
      write_bucket_(options.max_writes_per_second, options.write_burst, clock),
      writes_ok_(WritesCounter("ok")),
      writes_failed_(WritesCounter("error")),
      bytes_written_(
          MetricsRegistry::Default().GetCounter("clusterd_fault_centre_cm_write_bytes_total",
                                                "Bytes of cluster-info ConfigMap values written.")),
      writer_({.name = "cluster_info_writer",
               .thread_name = "cluster-info",
               .base_retry_delay = absl::Seconds(1),
               .max_retry_delay = absl::Seconds(30),
               .background = true},
              clock, [this](const std::string&, int) { return ReconcileWrites(); }) {}

ClusterInfoPublisher::~ClusterInfoPublisher() { Stop(); }

ClusterInfoShards& ClusterInfoPublisher::ShardsOf(Kind kind) {
  switch (kind) {
    case Kind::kDevice:
      return device_shards_;
    case Kind::kSwitch:
      return switch_shards_;
    case Kind::kNode:
      break;
  }
  return node_shard_;
}

void ClusterInfoPublisher::Upsert(Kind kind, const std::string& key, std::string entry) {
  absl::MutexLock lock(&mu_);
  ShardsOf(kind).Upsert(key, std::move(entry));
  TakeDirty(kind);
}

void ClusterInfoPublisher::Remove(Kind kind, const std::string& key) {
  absl::MutexLock lock(&mu_);
  ShardsOf(kind).Remove(key);
  TakeDirty(kind);
}

void ClusterInfoPublisher::PublishNodeShard() {
  absl::MutexLock lock(&mu_);
  node_shard_dirty_ = true;
  writer_.Enqueue(kWriteKey);
}

void ClusterInfoPublisher::TakeDirty(Kind kind) {
  bool any = false;
  switch (kind) {
    case Kind::kDevice:
      for (size_t i : device_shards_.TakeDirty()) any = device_dirty_.insert(i).second || any;
      break;
    case Kind::kSwitch:
      for (size_t i : switch_shards_.TakeDirty()) any = switch_dirty_.insert(i).second || any;
      break;
    case Kind::kNode:
      if (!node_shard_.TakeDirty().empty()) {
        node_shard_dirty_ = true;
        any = true;
      }
      break;
  }
  if (any) writer_.Enqueue(kWriteKey);
}

void ClusterInfoPublisher::RemarkDirty(const std::string& cm_name) {
  if (auto i = ShardIndex(cm_name, kClusterInfoDevicePrefix)) {
    device_dirty_.insert(*i);
  } else if (auto j = ShardIndex(cm_name, kClusterInfoSwitchPrefix)) {
    switch_dirty_.insert(*j);
  } else {
    node_shard_dirty_ = true;
  }
}

size_t ClusterInfoPublisher::FlushWrites() {
  const uint64_t before = shard_writes_.load();
  writer_.RunUntilIdleForTest();
  return static_cast<size_t>(shard_writes_.load() - before);
}

// The writer's one key: the dirty shards one at a time, a token each; out of tokens, woken when
// the next one is due.
runtime::Result ClusterInfoPublisher::ReconcileWrites() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (device_dirty_.empty() && switch_dirty_.empty() && !node_shard_dirty_) {
        return runtime::Result::Done();
      }
    }
    if (!write_bucket_.TryAcquire()) {
      return runtime::Result::RequeueAfter(write_bucket_.TimeUntilAvailable());
    }
    std::pair<std::string, std::string> one;
    {
      absl::MutexLock lock(&mu_);
      if (!device_dirty_.empty()) {
        const size_t i = *device_dirty_.begin();
        device_dirty_.erase(device_dirty_.begin());
        one = {device_shards_.Name(i), device_shards_.Render(i)};
      } else if (!switch_dirty_.empty()) {
        const size_t i = *switch_dirty_.begin();
        switch_dirty_.erase(switch_dirty_.begin());
        one = {switch_shards_.Name(i), switch_shards_.Render(i)};
      } else if (node_shard_dirty_) {
        node_shard_dirty_ = false;
        one = {std::string(kClusterInfoNodeName), node_shard_.Render(0)};
      } else {
        return runtime::Result::Done();
      }
    }
    absl::Status s =
        WriteWholeConfigMap(store_, kClusterInfoNamespace, one.first, {{one.first, one.second}},
                            {{std::string(kConsumerVolcanoLabel), "true"}});
    if (!s.ok()) {
      writes_failed_.Increment();
      LogWarn(kClusterInfoPublisherLog,
              "writing cluster-info ConfigMap failed; retrying with back-off",
              {{"name", one.first}, {"error", s}});
      absl::MutexLock lock(&mu_);
      RemarkDirty(one.first);
      return runtime::Result::Retry(s);
    }
    writes_ok_.Increment();
    bytes_written_.Increment(one.second.size());
    shard_writes_.fetch_add(1);
  }
}

std::string ClusterInfoPublisher::ShardContent(const std::string& cm_name) const {
  absl::MutexLock lock(&mu_);
  if (cm_name == kClusterInfoNodeName) return node_shard_.Render(0);
  if (auto i = ShardIndex(cm_name, kClusterInfoDevicePrefix)) return device_shards_.Render(*i);
  if (auto i = ShardIndex(cm_name, kClusterInfoSwitchPrefix)) return switch_shards_.Render(*i);
  return "";
}

std::string ClusterInfoPublisher::DeviceShardOf(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  const long i = device_shards_.ShardOf(key);
  return i < 0 ? "" : device_shards_.Name(static_cast<size_t>(i));
}

size_t ClusterInfoPublisher::DeviceShardCount() const {
  absl::MutexLock lock(&mu_);
  return device_shards_.Count();
}

}  // namespace clusterd::cluster
