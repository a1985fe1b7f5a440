#pragma once

// The fault centre's public-fault part (fault-pipeline.md §9, §1.8): the configuration in force,
// the requests from the PubFault service and from public-fault ConfigMaps (the per-sender rate
// limit, validation, the cache), their expiry, and statistic-fault-info, the cache's durable
// copy. It owns that state under its own lock, so a PubFault request never waits for the
// centre's node pipelines; the pipelines read a node's public faults through OnNode.
//
// Lock order: the centre's lock, then this part's, then the node-serial lookup it is given.
// It queues nothing itself: each call says which nodes changed and when it wants to run again,
// and the centre turns that into keys.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/public_fault_cache.h"
#include "cluster/public_fault_request.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "store/object_store.h"

namespace clusterd::cluster {

class PublicFaultDesk {
 public:
  struct Options {
    // statistic-fault-info is rewritten at most this often.
    absl::Duration statistic_min_interval = absl::Seconds(1);
  };

  PublicFaultDesk(store::ObjectStore& store, Clock& clock, Options options);

  // ---- configuration ----
  // Applies a configuration read; an unchanged text and source is not applied again. Returns
  // whether it was applied.
  bool SetConfig(PublicFaultConfig config, std::string text, std::string source);
  // Whether any configuration was ever applied (without one every request is refused).
  bool Configured() const;
  std::string ConfigSource() const;
  std::set<std::string> ConfigResources() const;
  size_t ConfigCodes() const;

  // ---- requests ----
  struct Outcome {
    PublicFaultVerdict verdict;
    std::set<std::string> changed_nodes;      // their device pipelines run again
    std::optional<int64_t> next_expiry_ms;    // when Expire next has work
    std::optional<int64_t> statistic_due_ms;  // when statistic-fault-info may be written
  };
  // Rate limit (§9.2: 410 when the sender's bucket is empty), validation (409), application
  // (§9.4). `source` is "grpc" or "configmap" (metrics and logs).
  Outcome Apply(const PublicFaultRequest& request, std::string_view source,
                const NodeBySerialFn& node_by_serial);
  // The body of a public-fault ConfigMap (its `PublicFault` key, absent: nullopt); a body that
  // does not parse is refused with a reason (log, metric), nothing applied.
  Outcome ApplyConfigMap(const std::string& ns_name, const std::map<std::string, std::string>& data,
                         const NodeBySerialFn& node_by_serial);

  // Runs the removals that are due; returns the nodes that changed, and when to come back.
  std::set<std::string> Expire(std::optional<int64_t>* next_due_ms);

  // ---- reads (the node pipelines, the queries) ----
  std::vector<PublicFaultOnNode> OnNode(const std::string& node) const;
  size_t Size() const;

  // ---- statistic-fault-info (§1.8) ----
  // At start: loads the cache back from the ConfigMap, if there is one.
  void LoadStatistic();
  // Writes statistic-fault-info if it changed and its minimum interval has passed; otherwise
  // (and after a failed write) says when to try again.
  std::optional<absl::Duration> WriteStatistic();

 private:
  int64_t NowMs() const { return absl::ToUnixMillis(clock_.Now()); }
  void MarkStatisticDirty(Outcome* outcome) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::ObjectStore& store_;
  Clock& clock_;
  const Options options_;
  Gauge& size_gauge_;

  mutable absl::Mutex mu_;
  PublicFaultConfig config_ ABSL_GUARDED_BY(mu_);
  std::string config_text_ ABSL_GUARDED_BY(mu_);
  std::string config_source_ ABSL_GUARDED_BY(mu_);
  PublicFaultCache cache_ ABSL_GUARDED_BY(mu_);
  bool statistic_dirty_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_statistic_write_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace clusterd::cluster
