#pragma once

// ClusterD's manual separation (fault-pipeline.md §1.10, §7.4): the policy of
// `cluster-system/clusterd-config-cm`, the software/hardware triage of new fault occurrences per
// job, the per-(node, NPU, code) counters, and the cache mirrored to
// `cluster-system/clusterd-manual-info-cm`. Time is passed in; not thread-safe (the fault centre
// guards it).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/fault_stages.h"
#include "model/fault_level.h"

namespace clusterd::cluster {

inline constexpr std::string_view kManualNamespace = "cluster-system";
inline constexpr std::string_view kManualConfigName = "clusterd-config-cm";
inline constexpr std::string_view kManualPolicyKey = "manually_separate_policy.conf";
inline constexpr std::string_view kManualInfoName = "clusterd-manual-info-cm";
inline constexpr int64_t kManualTriageWindowMs = 30000;
inline constexpr int64_t kManualCounterMaxAgeMs = 720LL * 3600 * 1000;

struct ManualSeparationPolicy {
  bool enabled = false;
  int64_t fault_window_hours = 24;  // 1..720
  int64_t fault_threshold = 3;      // 1..50
  int64_t fault_free_hours = 48;    // 1..240, or -1 = never release
  bool operator==(const ManualSeparationPolicy&) const = default;
};
// Parses the YAML of `manually_separate_policy.conf`. Any out-of-range value rejects the whole
// document (ranges are checked even when disabled); `enabled` absent means disabled; absent
// numbers keep the defaults above.
absl::StatusOr<ManualSeparationPolicy> ParseManualSeparationPolicy(std::string_view yaml);

struct ManualDetail {
  std::string fault_code;
  std::string fault_level{model::kLevelManuallySeparateNPU};
  int64_t last_separate_ms = 0;
  bool operator==(const ManualDetail&) const = default;
};
// node -> NPU -> details (Total = the NPU keys, sorted).
using ManualCache = std::map<std::string, std::map<std::string, std::vector<ManualDetail>>>;

// The CM's data (one key per node) and back. Unparsable node values are skipped and reported.
std::map<std::string, std::string> RenderManualInfo(const ManualCache& cache);
ManualCache ParseManualInfo(const std::map<std::string, std::string>& data,
                            std::vector<std::string>* problems);

class ManualSeparationEngine {
 public:
  // Applies a newly read policy. Disabling clears buffers, counters and the cache.
  void SetPolicy(const ManualSeparationPolicy& policy);
  const ManualSeparationPolicy& policy() const { return policy_; }
  bool enabled() const { return policy_.enabled; }

  // Loads the CM at start (whatever the policy says); it also becomes "last written".
  void Load(ManualCache cache);

  // IncrementFault's occurrences (ignored while disabled).
  void Submit(const std::vector<FaultOccurrence>& occurrences);
  // Runs the per-job triage for every job with buffered occurrences; returns the nodes whose
  // separated NPUs changed. `pod_group_exists(job)` false discards that job's buffer.
  std::set<std::string> Triage(int64_t now_ms, const std::function<bool(const std::string&)>& pod_group_exists);
  // When Triage next has work (the earliest buffered receive time + 30 s).
  std::optional<int64_t> NextTriageDue() const;

  struct SyncPlan {
    bool delete_cm = false;                     // the cache is empty: delete the CM
    std::optional<ManualCache> write;           // otherwise the content to write
    std::set<std::string> changed_nodes;        // nodes whose separated NPUs changed
  };
  // The 15 s sync (§7.4). `cm_now`: the CM as read now (an empty cache when it does not exist),
  // nullopt when reading failed (step 1 is skipped). Call Written() after a successful write.
  SyncPlan Sync(const std::optional<ManualCache>& cm_now, int64_t now_ms);
  void Written(const ManualCache& cache) { last_written_ = cache; }

  // Separated NPUs of a node (sorted), for the ManualFault processor.
  std::vector<std::string> NpusOn(const std::string& node) const;
  const ManualCache& cache() const { return cache_; }
  // Counter length of (node, NPU, code), for tests.
  size_t CountOf(const std::string& node, const std::string& npu, const std::string& code) const;

 private:
  // Counts one hardware occurrence; true when it separated the NPU.
  bool Count(const FaultOccurrence& o);

  ManualSeparationPolicy policy_;
  std::map<std::string, std::vector<FaultOccurrence>> buffers_;  // by job, arrival order
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<int64_t>> counters_;
  ManualCache cache_;
  ManualCache last_written_;
};

}  // namespace clusterd::cluster
