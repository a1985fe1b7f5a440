#include "sim/sim_profiling.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clusterd::sim {

SimProfilingFiles::SimProfilingFiles(std::filesystem::path root, std::string job_id, int ranks,
                                     int tp_size, uint64_t seed)
    : root_(std::move(root)),
      job_id_(std::move(job_id)),
      ranks_(ranks),
      tp_size_(tp_size < 1 ? 1 : tp_size),
      rng_(seed) {}

std::filesystem::path SimProfilingFiles::RankDir(int rank) const {
  return root_ / job_id_ / std::to_string(rank);
}

absl::Status SimProfilingFiles::Init() {
  std::string groups = "{";
  for (int g = 0; g * tp_size_ < ranks_; ++g) {
    std::vector<int> members;
    for (int r = g * tp_size_; r < (g + 1) * tp_size_ && r < ranks_; ++r) members.push_back(r);
    absl::StrAppend(&groups, g == 0 ? "" : ",", "\"group_", g,
                    "\":{\"group_name\":\"tp\",\"group_rank\":0,\"global_ranks\":[",
                    absl::StrJoin(members, ","), "]}");
  }
  groups += "}";
  for (int r = 0; r < ranks_; ++r) {
    const std::filesystem::path dir = RankDir(r);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return absl::InternalError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
    std::ofstream(dir / "parallel_group.json") << groups;
    std::ofstream(dir / "steptime.csv") << "step time,durations\n";
    std::ofstream comm(dir / "comm.csv");
    comm << "step_index,ZP_device,ZP_host,PP_device,PP_host,dataloader_host\n";
    if (!comm)
      return absl::InternalError(absl::StrCat("cannot write ", (dir / "comm.csv").string()));
  }
  return absl::OkStatus();
}

void SimProfilingFiles::SetSlowRank(int rank, double magnitude) {
  absl::MutexLock lock(&mu_);
  slow_rank_ = rank;
  magnitude_ = rank < 0 ? 0 : magnitude;
}

int64_t SimProfilingFiles::Ns(double ms) {
  return static_cast<int64_t>(ms * (1 + 0.01 * noise_(rng_)) * 1e6);
}

absl::Status SimProfilingFiles::Append(int64_t step, double step_ms) {
  absl::MutexLock lock(&mu_);
  if (step <= last_step_) return absl::OkStatus();
  last_step_ = step;
  const bool slow = slow_rank_ >= 0 && slow_rank_ < ranks_;
  const double zp_base = step_ms * 0.05;
  for (int r = 0; r < ranks_; ++r) {
    double zp = zp_base;
    if (slow && r / tp_size_ == slow_rank_ / tp_size_) {
      zp = r == slow_rank_ ? zp_base * 0.1 : zp_base + magnitude_ * step_ms * 0.5;
    }
    const double step_time = slow ? step_ms * (1 + magnitude_) : step_ms;
    std::ofstream st(RankDir(r) / "steptime.csv", std::ios::app);
    st << step << "," << Ns(step_time) << "\n";
    std::ofstream comm(RankDir(r) / "comm.csv", std::ios::app);
    comm << step << "," << Ns(zp) << "," << Ns(step_ms * 0.01) << ",0,0," << Ns(step_ms * 0.02)
         << "\n";
    if (!st || !comm) {
      return absl::InternalError(absl::StrCat("cannot append to ", RankDir(r).string()));
    }
  }
  return absl::OkStatus();
}

}  // namespace clusterd::sim
