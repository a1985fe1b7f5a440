#pragma once

// The node-side profiling files of a simulated training job (jobs-ranktable-diagnosis.md §6.3):
// per rank `<root>/<jobId>/<rank>/` with `parallel_group.json` (one TP group per pod),
// `steptime.csv` and `comm.csv`, one row appended per training step. A rank can be made slow:
// it then computes slowly, every rank's step takes longer, its TP peers wait for it in the
// collective (ZP_device rises) while it waits least (ZP_device collapses), which is what
// clusterd's slow-node detection looks for.
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace clusterd::sim {

class SimProfilingFiles {
 public:
  // `ranks` global ranks in TP groups of `tp_size` consecutive ranks; `seed` makes the 1 % noise
  // of every value repeatable.
  SimProfilingFiles(std::filesystem::path root, std::string job_id, int ranks, int tp_size,
                    uint64_t seed = 7);

  // Creates the rank directories, parallel_group.json and both CSVs with their header.
  absl::Status Init();
  // From the next step on, `rank` computes (1 + magnitude) times slower; rank -1: none.
  void SetSlowRank(int rank, double magnitude);
  // Appends step `step` (a step time of `step_ms` when no rank is slow) to every rank's CSVs,
  // one complete line per write. Steps at or below the last appended one are ignored (a job
  // that restarts from a checkpoint repeats step numbers; the files only grow).
  absl::Status Append(int64_t step, double step_ms);

  std::filesystem::path RankDir(int rank) const;

 private:
  int64_t Ns(double ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::filesystem::path root_;
  const std::string job_id_;
  const int ranks_;
  const int tp_size_;
  absl::Mutex mu_;
  int slow_rank_ ABSL_GUARDED_BY(mu_) = -1;
  double magnitude_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_step_ ABSL_GUARDED_BY(mu_) = 0;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  std::normal_distribution<double> noise_ ABSL_GUARDED_BY(mu_){0, 1};
};

}  // namespace clusterd::sim
