#pragma once

// Where the goodput bridge keeps its state in the store, and how it is split so that every
// ConfigMap stays under Kubernetes' 1 MiB limit at any number of jobs.
//
// `cluster-system/clusterd-goodput` holds offenders.json, episodes.json (both bounded) and
// goodput.json: `{"version":1,"jobs":[],"jobShards":N}`. The job records live in
// `cluster-system/clusterd-goodput-jobs-<i>` (i < N), key jobs.json, a JSON map of job id ->
// record, placed as the cluster-info shards are (cluster_info_shards.h: stable, 800 KiB each),
// so a save rewrites only the shards whose jobs changed. State saved before the split (every job
// in the main ConfigMap's goodput.json, no jobShards) still loads.
//
// Shards are written before the main ConfigMap that counts them. A crash between the two can
// lose the records of jobs that moved to a new shard in that save; they start afresh.
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/cluster_info_shards.h"
#include "common/metrics.h"
#include "nlohmann/json.hpp"
#include "store/object_store.h"

namespace clusterd::server {

inline constexpr std::string_view kGoodputJobShardPrefix = "clusterd-goodput-jobs-";

// clusterd_goodput_state_total{op=read|write, result}.
Counter& GoodputStateCounter(std::string_view op, std::string_view result);

class GoodputStateStore {
 public:
  struct State {
    nlohmann::json ledger;  // {"version":1,"jobs":[...]}: GoodputLedger::Save's shape
    std::string offenders;  // RepeatOffenders::Save, serialised ("" when absent)
    std::string episodes;   // FaultEpisodes::Save, serialised ("" when absent)
  };

  explicit GoodputStateStore(
      store::ObjectStore& store,
      size_t shard_limit_bytes = cluster::ClusterInfoShards::kDefaultLimitBytes);

  // The saved state; NotFound when none was ever saved. A missing or unreadable job shard is
  // logged and counted, and its jobs are left out.
  absl::StatusOr<State> Load();
  // What changed since the last write (GoodputLedger::TakeSaveDelta): the job records to set,
  // the jobs to drop (dropped first: a job pruned and seen again is set), and the whole offender
  // and episode texts. WriteChanges writes the shards whose records changed, then the main
  // ConfigMap; on an error the next write rewrites every shard.
  struct Changes {
    std::vector<std::pair<std::string, nlohmann::json>> records;  // job id -> record
    std::vector<std::string> removed;
    std::string offenders;
    std::string episodes;
  };
  absl::Status WriteChanges(const Changes& changes);

 private:
  store::ObjectStore& store_;
  absl::Mutex mu_;  // one WriteChanges at a time
  cluster::ClusterInfoShards shards_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::server
