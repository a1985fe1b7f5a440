#pragma once

// NodeD's pingmesh prober for the simulated nodes (jobs-ranktable-diagnosis.md §7.3): for every
// super pod whose `cathelper.conf` says `netFault=on`, reads the ping lists clusterd writes
// (`<root>/cluster/super-pod-<id>/ping_list_<serverIndex>.json`) and appends one result row per
// listed path to `ping_result_<serverIndex>.csv` each probe round, rotating the file to
// `.csv-bak` every 45 s as NodeD does. Every path has a 1 ms delay and no loss, except the paths
// from or to an NPU whose link was made slow and, on A5, the paths through a slow rack -> L1 or
// L1 -> L2 link.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace clusterd::sim {

class SimPingmesh {
 public:
  static constexpr double kBaseDelayUs = 1000;                        // a healthy path: 1 ms
  static constexpr absl::Duration kProbeInterval = absl::Seconds(5);  // how often Probe runs

  // `root` is RAS_NET_ROOT_PATH (the files live under `<root>/cluster/`). `warmup` > 0: the
  // first round that finds a server's ping list also writes the rows of the probe rounds of the
  // `warmup` seconds after it (healthy, one per kProbeInterval), and every row is stamped
  // `warmup` ahead of the probe: clusterd's window runs on the stamps, so it fills at once.
  explicit SimPingmesh(std::filesystem::path root, absl::Duration warmup = absl::ZeroDuration());

  // Every path from or to the NPU with SDID `sdid` takes `delay_ms` (0: healthy again).
  void SetSlowNpu(uint32_t sdid, double delay_ms);

  // A5: where each probe address sits. A probe between two addresses of one plane crosses the
  // rack -> L1 links of both ends when their racks differ, and the L1 -> L2 links of both ends
  // when their L1 switches differ too.
  struct NetPath {
    std::string plane, rack, l1, l2;
  };
  void SetNetPaths(std::map<std::string, NetPath> paths);
  enum class Link { kRackToL1, kL1ToL2 };
  // Every path through the uplink of rack (kRackToL1) or L1 switch (kL1ToL2) `lower` of `plane`
  // takes `delay_ms` (0: healthy again).
  void SetSlowLink(Link link, const std::string& plane, const std::string& lower, double delay_ms);

  // One probe round at `now`. Super pods without a ping list yet are skipped.
  absl::Status Probe(absl::Time now);

  int64_t rows_written() const;

 private:
  absl::Status ProbeServer(const std::filesystem::path& dir, const std::string& server,
                           absl::Time now);
  // The delay of one probe (µs).
  double DelayUs(const std::string& src, const std::string& dst) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::filesystem::path root_;
  const absl::Duration warmup_;
  mutable absl::Mutex mu_;
  std::map<std::string, double> slow_delay_us_ ABSL_GUARDED_BY(mu_);  // SDID -> delay
  std::map<std::string, NetPath> paths_ ABSL_GUARDED_BY(mu_);
  // (link, plane, lower element) -> delay
  std::map<std::tuple<Link, std::string, std::string>, double> slow_links_us_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> warmed_up_ ABSL_GUARDED_BY(mu_);  // ping lists whose history is written
  std::map<std::string, absl::Time> file_started_ ABSL_GUARDED_BY(mu_);
  int64_t rows_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace clusterd::sim
