#pragma once

// The public-fault cache of fault-pipeline.md §9.4 with the per-sender rate limit of §9.2 and the
// statistic-fault-info ConfigMap of §1.8. Time is passed in (`now_ms`), so the whole thing is
// driven by a ManualClock in tests; the runtime calls Expire at NextDue. Not thread-safe: the
// fault centre guards it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/fault_stages.h"
#include "cluster/public_fault_request.h"

namespace clusterd::cluster {

inline constexpr int64_t kPublicFaultMinVisibleMs = 5000;
inline constexpr size_t kPublicFaultCacheLimit = 50000;
inline constexpr double kPublicFaultRatePerSecond = 1;
inline constexpr int64_t kPublicFaultBurst = 100;
// statistic-fault-info (§1.8).
inline constexpr std::string_view kStatisticNamespace = "cluster-system";
inline constexpr std::string_view kStatisticName = "statistic-fault-info";
inline constexpr std::string_view kStatisticLabel = "mc-statistic-fault";
inline constexpr size_t kStatisticDetailLimit = 4500;
inline constexpr std::string_view kStatisticTooManyText =
    "The current total number of faults is too large, and only a portion of the detailed fault "
    "data is displayed";

struct PublicFaultEntry {
  std::string resource;
  std::string fault_id;
  std::string fault_type;
  std::string fault_code;
  std::string level;
  std::vector<int32_t> device_ids;
  int64_t fault_time_s = 0;
  int64_t added_ms = 0;
  bool operator==(const PublicFaultEntry&) const = default;
};

class PublicFaultCache {
 public:
  PublicFaultCache(double rate_per_second = kPublicFaultRatePerSecond,
                   int64_t burst = kPublicFaultBurst, size_t limit = kPublicFaultCacheLimit);

  // Rebuilds the per-sender buckets (full) for `resources`; an unconfigured resource has none.
  void SetResources(const std::set<std::string>& resources, int64_t now_ms);
  // §9.2: takes a token of `resource`'s bucket; false (410) when it is empty or absent.
  bool Admit(const std::string& resource, int64_t now_ms);

  // Applies validated faults (§9.4). Returns the nodes whose faults changed now. `rejected`
  // counts faults dropped because the cache is full.
  std::set<std::string> Apply(const std::string& resource,
                              const std::vector<AcceptedPublicFault>& faults, int64_t now_ms,
                              size_t* rejected = nullptr);
  // Runs the removals that are due; returns the nodes that changed.
  std::set<std::string> Expire(int64_t now_ms);
  // When Expire next has something to do.
  std::optional<int64_t> NextDue() const;

  // The faults of a node as the PublicFault processor takes them.
  std::vector<PublicFaultOnNode> OnNode(const std::string& node) const;
  std::vector<std::string> Nodes() const;
  size_t Size() const { return size_; }

  // statistic-fault-info: the data to write (§1.8); when there are more than 4500 faults only
  // FaultNum and Description (the original patches just those keys; we write them and drop
  // PublicFaults, see docs/compatibility-faults.md).
  std::map<std::string, std::string> StatisticData() const;
  // Loads `PublicFaults` of statistic-fault-info back (as occur faults added at `now_ms`).
  absl::Status LoadStatistic(std::string_view public_faults_json, int64_t now_ms);

 private:
  struct Bucket {
    double tokens = 0;
    int64_t last_ms = 0;
  };
  struct Removal {
    int64_t due_ms;
    std::string node;
    std::string key;
    auto operator<=>(const Removal&) const = default;
  };
  static std::string KeyOf(const std::string& resource, const std::string& fault_id) {
    return resource + fault_id;
  }
  bool Insert(const std::string& node, const std::string& key, PublicFaultEntry entry);
  void Schedule(int64_t due_ms, const std::string& node, const std::string& key);

  const double rate_;
  const int64_t burst_;
  const size_t limit_;
  std::map<std::string, Bucket> buckets_;
  // node -> key -> entry
  std::map<std::string, std::map<std::string, PublicFaultEntry>> by_node_;
  std::set<Removal> removals_;
  size_t size_ = 0;
};

}  // namespace clusterd::cluster
