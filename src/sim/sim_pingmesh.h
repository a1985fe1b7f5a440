#pragma once

// NodeD's pingmesh prober for the simulated nodes (jobs-ranktable-diagnosis.md §7.3): for every
// super pod whose `cathelper.conf` says `netFault=on`, reads the ping lists clusterd writes
// (`<root>/cluster/super-pod-<id>/ping_list_<serverIndex>.json`) and appends one result row per
// listed path to `ping_result_<serverIndex>.csv` each probe round, rotating the file to
// `.csv-bak` every 45 s as NodeD does. Every path has a 1 ms delay and no loss, except the paths
// from or to an NPU whose link was made slow.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace clusterd::sim {

class SimPingmesh {
 public:
  static constexpr double kBaseDelayUs = 1000;                        // a healthy path: 1 ms
  static constexpr absl::Duration kProbeInterval = absl::Seconds(5);  // how often Probe runs

  // `root` is RAS_NET_ROOT_PATH (the files live under `<root>/cluster/`).
  explicit SimPingmesh(std::filesystem::path root);

  // Every path from or to the NPU with SDID `sdid` takes `delay_ms` (0: healthy again).
  void SetSlowNpu(uint32_t sdid, double delay_ms);

  // One probe round at `now`. Super pods without a ping list yet are skipped.
  absl::Status Probe(absl::Time now);

  int64_t rows_written() const;

 private:
  absl::Status ProbeServer(const std::filesystem::path& dir, const std::string& server,
                           absl::Time now);

  const std::filesystem::path root_;
  mutable absl::Mutex mu_;
  std::map<std::string, double> slow_delay_us_ ABSL_GUARDED_BY(mu_);  // SDID -> delay
  std::map<std::string, absl::Time> file_started_ ABSL_GUARDED_BY(mu_);
  int64_t rows_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace clusterd::sim
