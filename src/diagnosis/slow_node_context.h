#pragma once

// Private to the slow-node controller's two files: what slow_node_controller.cc (the
// ConfigMap and job intake, the views) and slow_node_rounds.cc (a job's detection rounds) share.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/metrics.h"
#include "diagnosis/slow_node_controller.h"

namespace clusterd::diagnosis {

inline constexpr std::string_view kSlowNodeLogComponent = "diagnosis";
// The job's controller key: its period and polls are this key's RequeueAfter.
inline constexpr std::string_view kSlowNodeJobKeyPrefix = "job/";

// Slow-node inputs rejected or skipped, by kind (one metric for the intake and the rounds).
inline Counter& SlowNodeBadInput(std::string_view kind) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_diagnosis_bad_input_total",
      "Slow-node inputs rejected or skipped (FeatConf, profiling files).",
      {{"kind", std::string(kind)}});
}

inline std::string SlowNodeJobKey(const std::string& ns, const std::string& name) {
  return ns + "/" + name;
}

// What the controller keeps per watched job (ns/job), under SlowNodeController::mu_.
struct SlowNodeController::Context {
  std::string cm_key;
  std::string key;  // ns/job
  FeatConf conf;
  SlowNodeJob job;
  bool running = false;
  int step = 0;
  std::string state = "waiting-for-job";
  std::string reason;
  absl::Time started_at = absl::InfinitePast();
  absl::Time first_ready_at = absl::InfinitePast();
  absl::Time next_round = absl::InfinitePast();
  // Layout: node -> ranks (ascending).
  std::map<std::string, std::vector<int64_t>> nodes;
  bool layout_from_directories = false;
  std::set<std::string> ready_nodes;
  ParallelGroups global_groups;
  std::map<std::string, RankSeriesState> node_state;
  std::map<int64_t, std::unique_ptr<RankProfileReader>> readers;
  std::map<int64_t, SlowNodeRankView> rank_views;
  std::optional<ClusterResult> last_result;
  DegradationState degradation;
  int64_t rounds = 0;
  struct PendingReport {
    PublicFaultReport report;
    int attempts = 0;
  };
  std::deque<PendingReport> reports;

  RankProfileReader& Reader(ProfilingDataSource& source, int64_t rank, size_t max_samples) {
    auto& r = readers[rank];
    if (!r) r = source.OpenRank(job.job_id, rank, max_samples);
    return *r;
  }
};

}  // namespace clusterd::diagnosis
