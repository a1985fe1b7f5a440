#pragma once

// What the fault centre hands on per job (fault-pipeline.md §7.5, §7.6; recovery-protocol.md
// §8.1): the job's fault ranks, its fault devices and its health, and the interface the recovery
// controller implements to receive them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clusterd::cluster {

// Health states of a job (§7.5 HealthyState) and of Fault-service entries.
inline constexpr std::string_view kHealthy = "Healthy";
inline constexpr std::string_view kSubHealthy = "SubHealthy";
inline constexpr std::string_view kUnHealthy = "UnHealthy";

// Device types of fault devices (jobs-ranktable-diagnosis.md §4.4).
inline constexpr std::string_view kDeviceTypeNpu = "NPU";
inline constexpr std::string_view kDeviceTypeSwitch = "Switch";
inline constexpr std::string_view kDeviceTypeNode = "Node";

// One FaultDevice (§7.5): what the Fault service shows for a job.
struct FaultDevice {
  std::string server_name;  // node name
  std::string server_sn;
  std::string server_id;    // rank-table server id (pod UID or node IP)
  std::string host_ip;
  std::string device_id;    // physical id, "-1" for whole-node entries
  std::string device_type;  // NPU, Switch, Node, or the NodeD device type (CPU, PSU, ...)
  std::string code;
  std::string level;
  int64_t fault_time_ms = 0;
  std::string switch_chip_id;  // Switch only
  std::string switch_port_id;
  bool operator==(const FaultDevice&) const = default;
};

// One fault rank (§7.5 JobFaultRank).
struct FaultRankEntry {
  int64_t rank_id = 0;               // global rank
  std::string pod_uid;               // "" when unknown
  std::optional<int64_t> pod_rank;   // nullopt when unknown (no device annotation)
  std::string code;
  std::string level;
  int64_t fault_time_ms = 0;
  bool do_step_retry = false;
  bool do_restart_in_place = false;
  std::string device_id;  // "" for whole-node ranks (switch, node-info, not-ready)
  std::string node;
  bool operator==(const FaultRankEntry&) const = default;

  // The wire faultType of §7.6: "0" UCE step retry, "2" HCCL step retry, "1" everything else.
  std::string FaultType() const;
};

// A job's fault snapshot. Every level is included (subscribers filter: the recovery plane drops
// NotHandleFault and PreSeparateNPU ranks, the Fault service NotHandleFault).
struct JobFaultRanks {
  std::string job_id;
  std::string multi_instance_job_id;
  std::string app_type;
  std::vector<FaultRankEntry> ranks;
  std::vector<FaultDevice> devices;
  // Faults the CustomFilter stage hid (§7.3 step 2): only the Fault service shows them.
  std::vector<FaultDevice> filtered_devices;
  std::string health{kHealthy};
  bool operator==(const JobFaultRanks&) const = default;

  bool Empty() const { return ranks.empty() && devices.empty() && filtered_devices.empty(); }
};

// Implemented by the recovery controller. Called on the fault centre's worker thread whenever a
// job's snapshot changes (an empty snapshot when its faults cleared), and once for every job
// with faults after a (re)start. Must not block: copy what it needs and return.
class JobFaultSink {
 public:
  virtual ~JobFaultSink() = default;
  virtual void OnJobFaults(const JobFaultRanks& faults) = 0;
  // The job left the job registry: forget it.
  virtual void OnJobGone(const std::string& job_id) { (void)job_id; }
};

}  // namespace clusterd::cluster
