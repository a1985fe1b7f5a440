#pragma once

// The fault centre's manual-separation part (fault-pipeline.md §1.10, §7.4): the policy of
// cluster-system/clusterd-config-cm, the triage of new fault occurrences, and the cache mirrored
// to cluster-system/clusterd-manual-info-cm. It owns the engine (manual_separation_engine.h)
// under its own lock and does the store I/O of both ConfigMaps; the node pipelines read the
// separated NPUs through NpusOn.
//
// Lock order: the centre's lock, then this part's. It queues nothing itself: each call says
// which nodes changed and when it wants to run again, and the centre turns that into keys.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "cluster/fault_stages.h"
#include "cluster/manual_separation_engine.h"
#include "common/clock.h"
#include "store/object_store.h"

namespace clusterd::cluster {

class ManualSeparation {
 public:
  ManualSeparation(store::ObjectStore& store, Clock& clock) : store_(store), clock_(clock) {}

  // At start: the cache of clusterd-manual-info-cm, whatever the policy says (§7.4).
  void Load();
  // Reads the policy of clusterd-config-cm (a missing ConfigMap or key keeps the previous one;
  // an invalid one is refused with the reason, and the previous one kept). Returns true when
  // it switched manual separation on or off (every node's pipeline must run again).
  bool ReadPolicy();
  // The 15 s sync with clusterd-manual-info-cm (§7.4); returns the nodes whose separated NPUs
  // changed.
  std::set<std::string> Sync();

  // The occurrences of a device pipeline pass (ignored while disabled); returns when the triage
  // is next due.
  std::optional<int64_t> Submit(const std::vector<FaultOccurrence>& occurrences);
  // The per-job triage; `pod_group_exists(job)` false discards that job's buffer. Returns the
  // nodes whose separated NPUs changed, and when to come back.
  std::set<std::string> Triage(const std::function<bool(const std::string&)>& pod_group_exists,
                               std::optional<int64_t>* next_due_ms);

  bool Enabled() const;
  // Separated NPUs of a node (sorted), for the ManualFault processor.
  std::vector<std::string> NpusOn(const std::string& node) const;

  struct View {
    ManualSeparationPolicy policy;
    int64_t applied_ms = 0;  // 0: never read from the ConfigMap
  };
  View Configuration() const;

 private:
  int64_t NowMs() const { return absl::ToUnixMillis(clock_.Now()); }

  store::ObjectStore& store_;
  Clock& clock_;

  mutable absl::Mutex mu_;
  ManualSeparationEngine engine_ ABSL_GUARDED_BY(mu_);
  int64_t policy_applied_ms_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace clusterd::cluster
