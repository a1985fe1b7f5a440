#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "diagnosis/profiling_data.h"
#include "diagnosis/public_fault.h"
#include "nlohmann/json.hpp"

namespace clusterd::diagnosis {

// Slow-network diagnosis from pingmesh results (jobs-ranktable-diagnosis.md §7.1-§7.5). Pure
// parts: configuration and topology files, probe rows, the sliding window, faulty paths, root
// cause, suppression and the public faults. File and timer plumbing stay with the caller.

// §7.1: one entry of the `pingmesh-config` ConfigMap.
struct PingmeshEntry {
  bool activate = false;
  int64_t task_interval = 0;  // 1..60 s
  bool operator==(const PingmeshEntry&) const = default;
};
// Parses every data key; any bad value rejects the whole update (with the key and reason).
absl::StatusOr<std::map<std::string, PingmeshEntry>> ParsePingmeshConfig(
    const std::map<std::string, std::string>& data);
// The effective entry of super pod `id`: its own key, else `global`.
std::optional<PingmeshEntry> EffectiveEntry(const std::map<std::string, PingmeshEntry>& config,
                                            std::string_view super_pod_id);

// §7.2 cathelper.conf.
struct CathelperConf {
  int64_t suppressed_period = 0;
  int64_t network_type = 1;
  int64_t ping_type = 0;
  int64_t ping_times = 5;
  int64_t ping_interval = 1;
  int64_t period = 15;
  bool net_fault = false;
  bool operator==(const CathelperConf&) const = default;
};
// period = task_interval × 10 and netFault from `activate`; no entry: period 15, netFault off.
CathelperConf CathelperFor(const std::optional<PingmeshEntry>& entry);
std::string RenderCathelperConf(const CathelperConf& conf);
absl::StatusOr<CathelperConf> ParseCathelperConf(std::string_view text);

// The topology path of one NPU on A5 (§7.4 step 2: NPU -> rack -> L1 -> L2, in one network
// plane). `l1` / `l2` may be empty (a layer the super pod does not have); `l2` needs `l1`.
struct NpuNetPath {
  std::string plane;
  std::string rack;
  std::string l1;
  std::string l2;
  bool operator==(const NpuNetPath&) const = default;
};
// By probe address (the srcAddr / dstAddr of the ping rows).
using NetTopology = std::map<std::string, NpuNetPath>;

// §7.2 super-pod-<id>.json.
struct NpuLocation {
  std::string node_name;
  std::string server_id;
  std::string phy_id;
  std::string rack_id;
};
struct SuperPodTopology {
  std::string version;
  std::string super_pod_id;
  std::map<std::string, NpuLocation> npu_by_sdid;
  NetTopology paths;  // A5: from each node's RackID and NpuInfoMap
};
// A malformed NpuInfoMap (not an object, an entry without Addr or NetPlaneId, a non-string
// field, L2 without L1, a path on a node without RackID, an address twice) refuses the file:
// the error names `what` and the reason.
absl::StatusOr<SuperPodTopology> ParseSuperPodTopology(std::string_view text,
                                                       std::string_view what);

// §7.3: 192.<(sdid>>22)&0x3FF>.<2+((sdid>>16)&0x3)>.<199−(sdid&0xFFFF)>.
std::string SdidToAddress(uint32_t sdid);
// The server field of an SDID ((sdid >> 22) & 0x3FF).
uint32_t SdidServer(uint32_t sdid);

// One row of ping_result_<serverIndex>.csv.
struct PingRow {
  std::string task_id;
  int64_t src_type = 0;
  std::string src_addr;
  int64_t dst_type = 0;
  std::string dst_addr;
  double min_delay = 0, max_delay = 0, avg_delay = 0;
  double min_loss = 0, max_loss = 0, avg_loss = 0;  // fractions (0..1)
  int64_t timestamp = 0;                            // ms
  bool operator==(const PingRow&) const = default;
};
// Header `pingTaskId,srcType,srcAddr,dstType,dstAddr,minDelay,maxDelay,avgDelay,minLossRate,
// maxLossRate,avgLossRate,timestamp`; malformed rows and an unterminated last line are skipped
// and counted.
absl::StatusOr<std::vector<PingRow>> ParsePingResultCsv(std::string_view text,
                                                        ParseStats* stats = nullptr);

// §7.4 step 3: the sliding window of 10 periods.
class PingWindow {
 public:
  static constexpr int kPeriods = 10;
  explicit PingWindow(absl::Duration period) : period_ms_(absl::ToInt64Milliseconds(period)) {}

  // Rows read this round (re-reads of rows already seen are ignored).
  void Add(const std::vector<PingRow>& rows);
  // Starts the next round. False while the window spans fewer than 10 periods (no analysis).
  bool Advance();
  // Rows with t ∈ (t_max − 2P, t_max − P] and t ∈ (t_max − 10P, t_max − 2P].
  std::vector<PingRow> Current() const;
  std::vector<PingRow> Baseline() const;
  int64_t t_max() const { return t_max_; }
  bool started() const { return started_; }

 private:
  int64_t period_ms_;
  bool started_ = false;
  int64_t t_min_ = 0, t_max_ = 0;
  bool any_ = false;
  std::vector<PingRow> window_;
  std::deque<PingRow> queue_;  // rows newer than t_max once started
  std::set<std::string> seen_;
};

// A path (pingTaskId, srcType, srcAddr, dstType, dstAddr) whose current indicator reaches the
// baseline threshold mean + 3·max(std, 1) (§7.4 step 4).
struct FaultyPath {
  std::string task_id;
  int64_t src_type = 0;
  std::string src_addr;
  int64_t dst_type = 0;
  std::string dst_addr;
  bool loss = false;   // faulty on loss (percent)
  bool delay = false;  // faulty on delay (ms, rounded)
  double loss_indicator = 0, delay_indicator = 0;
  double min_loss = 0, max_loss = 0, min_delay = 0, max_delay = 0;  // over the current rows
  int64_t newest = 0;
};
// `evaluated` (optional) receives every path with a baseline, faulty or not: the topology
// attribution needs the healthy paths through an element too.
std::vector<FaultyPath> FindFaultyPaths(const std::vector<PingRow>& current,
                                        const std::vector<PingRow>& baseline,
                                        std::vector<FaultyPath>* evaluated = nullptr);

// §7.4 steps 5-6: object types and the alarm.
inline constexpr int64_t kObjectNpu = 0;
inline constexpr int64_t kObjectRackPlane = 3;
inline constexpr int64_t kObjectL1Plane = 5;
inline constexpr int64_t kObjectL2Plane = 6;
inline constexpr int64_t kObjectSuperPod = 7;

struct NetAlarm {
  std::string task_id;
  int64_t timestamp = 0;
  double min_loss = 0, max_loss = 0, avg_loss = 0;  // percent
  double min_delay = 0, max_delay = 0, avg_delay = 0;
  std::string src_id;
  int64_t src_type = 0;
  std::string dst_id;
  int64_t dst_type = 0;
  int64_t level = 0;       // 1 major (one NPU), 0 minor (a pair)
  int64_t fault_type = 0;  // 0 delay, 1 loss, 2 disconnect (loss ≥ 80 %)
  bool operator==(const NetAlarm&) const = default;
  // The fields of §7.5's description, in that order.
  nlohmann::ordered_json ToJson() const;
};
// Root cause over NPU-direct paths: the most frequent address(es) first; ties broken by
// ascending address (the original's order is hash-map order).
std::vector<NetAlarm> RootCause(const std::vector<FaultyPath>& faulty);
// The alarm over `contributing` (non-empty) for one kind of fault: taskId of the first, the
// newest timestamp, min / max / avg loss and delay (3 decimals), faultType. Ids, types and
// level are the caller's.
NetAlarm AlarmOver(const std::vector<const FaultyPath*>& contributing, bool loss);
// The NPU-direct root cause of one kind of fault, appended to `out`.
void NpuDirectRootCause(std::vector<const FaultyPath*> paths, bool loss,
                        std::vector<NetAlarm>& out);

// §7.4 step 7: one table shared by all super pods.
class AlarmSuppression {
 public:
  std::vector<NetAlarm> Filter(const std::vector<NetAlarm>& alarms, absl::Time now,
                               int64_t suppressed_period_s);

 private:
  std::map<std::string, absl::Time> seen_;
};

// §7.5: `Detection <n> result(Y-M-D h:m:s):` then the 2-space indented array (UTC).
std::string NetworkFaultLogEntry(int64_t n, absl::Time when, const std::vector<NetAlarm>& alarms);
// The public fault of one alarm (code by endpoint kinds, faultId, location, influence).
PublicFault AlarmToPublicFault(const NetAlarm& alarm);
PublicFaultReport NetFaultReport(const std::vector<NetAlarm>& alarms, absl::Time now,
                                 std::string id);

// One super pod's detection: the window, and one round every `period`.
class SuperPodNetDetector {
 public:
  // `topology`: the A5 path of each probe address (net_topology.h); empty: NPU-direct only.
  SuperPodNetDetector(std::string super_pod_id, const CathelperConf& conf,
                      NetTopology topology = {})
      : id_(std::move(super_pod_id)),
        conf_(conf),
        topology_(std::move(topology)),
        window_(absl::Seconds(conf.period)) {}
  // Feeds this round's rows and analyses; empty until the window is full.
  std::vector<NetAlarm> Round(const std::vector<PingRow>& rows, absl::Time now,
                              AlarmSuppression& suppression);
  int64_t rounds() const { return rounds_; }

 private:
  std::string id_;
  CathelperConf conf_;
  NetTopology topology_;
  PingWindow window_;
  int64_t rounds_ = 0;
};

}  // namespace clusterd::diagnosis
