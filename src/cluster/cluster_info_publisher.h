#pragma once

// Publication of the fault centre's view (fault-pipeline.md §1.4): the cluster-info-device-<n>,
// cluster-info-switch-<n> and cluster-info-node-cm ConfigMaps in mindx-dl, labelled
// mx-consumer-volcano=true.
//
// The centre sets and removes per-node entries; placement is stable (cluster_info_shards.h), so
// a change to one node dirties one shard. The writer is a controller of its own with one key:
// it writes the dirty shards one at a time, each taking a token of a bucket of
// `max_writes_per_second` (the original's 5/s), coalescing whatever changed meanwhile into the
// shard's next write; out of tokens it asks to be woken when the next one is due, and a failed
// write is retried with back-off from 1 s. Production runs it on its thread (writer().Start());
// tests pump the same reconcile with FlushWrites().
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "cluster/cluster_info_shards.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/rate_limiter.h"
#include "runtime/controller.h"
#include "store/object_store.h"

namespace clusterd::cluster {

class ClusterInfoPublisher {
 public:
  struct Options {
    size_t shard_limit_bytes = ClusterInfoShards::kDefaultLimitBytes;
    double max_writes_per_second = 5;
    int64_t write_burst = 5;
  };
  // Which ConfigMap family an entry belongs to.
  enum class Kind { kDevice, kSwitch, kNode };

  ClusterInfoPublisher(store::ObjectStore& store, Clock& clock, Options options);
  ~ClusterInfoPublisher();
  ClusterInfoPublisher(const ClusterInfoPublisher&) = delete;
  ClusterInfoPublisher& operator=(const ClusterInfoPublisher&) = delete;

  // Sets (rendered JSON) or removes the entry `key` (the node's source ConfigMap name); the
  // writer is woken only when a shard's content changed.
  void Upsert(Kind kind, const std::string& key, std::string entry);
  void Remove(Kind kind, const std::string& key);
  // cluster-info-node-cm is written even when it holds no entry: the first publication.
  void PublishNodeShard();

  runtime::Controller& writer() { return writer_; }
  void Stop() { writer_.Stop(); }
  // Tests with a ManualClock: runs the writer's reconcile on the calling thread until it has
  // nothing to write, its tokens run out or a write fails; returns the shards written.
  size_t FlushWrites();

  // Rendered content of a cluster-info ConfigMap as held now ("" for an unknown name).
  std::string ShardContent(const std::string& cm_name) const;
  // The device shard holding `key`'s entry, or "".
  std::string DeviceShardOf(const std::string& key) const;
  size_t DeviceShardCount() const;

 private:
  ClusterInfoShards& ShardsOf(Kind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the shards' changes into the dirty sets; wakes the writer when there are any.
  void TakeDirty(Kind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A write of `cm_name` failed: write it again later (with the then-current content).
  void RemarkDirty(const std::string& cm_name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  runtime::Result ReconcileWrites() ABSL_LOCKS_EXCLUDED(mu_);

  store::ObjectStore& store_;

  mutable absl::Mutex mu_;
  ClusterInfoShards device_shards_ ABSL_GUARDED_BY(mu_);
  ClusterInfoShards switch_shards_ ABSL_GUARDED_BY(mu_);
  ClusterInfoShards node_shard_ ABSL_GUARDED_BY(mu_);
  std::set<size_t> device_dirty_ ABSL_GUARDED_BY(mu_);
  std::set<size_t> switch_dirty_ ABSL_GUARDED_BY(mu_);
  bool node_shard_dirty_ ABSL_GUARDED_BY(mu_) = false;
  TokenBucket write_bucket_;  // the writer's only

  Counter& writes_ok_;
  Counter& writes_failed_;
  Counter& bytes_written_;
  std::atomic<uint64_t> shard_writes_{0};  // successful shard writes (FlushWrites counts them)

  // Last: its worker calls ReconcileWrites, which uses everything above.
  runtime::Controller writer_;
};

}  // namespace clusterd::cluster
