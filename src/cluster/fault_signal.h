#pragma once

// The Fault service's messages (jobs-ranktable-diagnosis.md §4.3, §4.6) as plain data, and the
// pure functions that build them. The server turns them into fault.FaultMsgSignal.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/fault_job_faults.h"
#include "cluster/fault_types.h"

namespace clusterd::cluster {

inline constexpr std::string_view kSignalTypeFault = "fault";
inline constexpr std::string_view kSignalTypeNormal = "normal";
// The cluster-wide subscription's job id.
inline constexpr std::string_view kClusterJobId = "-1";

struct SwitchFaultSignalInfo {
  std::string fault_code;
  std::string switch_chip_id;
  std::string switch_port_id;
  std::string fault_time;  // ms, decimal
  std::string fault_level;
  bool operator==(const SwitchFaultSignalInfo&) const = default;
};

struct DeviceFaultSignalInfo {
  std::string device_id;
  std::string device_type;
  std::vector<std::string> fault_codes;
  std::string fault_level;  // state: Healthy / SubHealthy / UnHealthy
  std::vector<SwitchFaultSignalInfo> switch_fault_infos;
  std::vector<std::string> fault_levels;  // raw levels aligned with fault_codes
  bool operator==(const DeviceFaultSignalInfo&) const = default;
};

struct NodeFaultSignalInfo {
  std::string node_name;
  std::string node_ip;
  std::string node_sn;
  std::string fault_level;  // state
  std::vector<DeviceFaultSignalInfo> fault_devices;
  bool operator==(const NodeFaultSignalInfo&) const = default;
};

struct FaultMsgSignal {
  std::string uuid;
  std::string job_id;
  std::string signal_type;  // fault / normal
  std::vector<NodeFaultSignalInfo> nodes;
  // §4.2 equality: everything but the uuid.
  bool SameContent(const FaultMsgSignal& other) const {
    return job_id == other.job_id && signal_type == other.signal_type && nodes == other.nodes;
  }
};

// §4.3 level -> state: 0 Healthy, 1 SubHealthy, 2 UnHealthy.
int LevelStateRank(std::string_view level);
std::string_view StateName(int rank);

// §4.3: builds the message of `job_id` from its fault entries (uuid left empty).
FaultMsgSignal BuildFaultMsgSignal(const std::string& job_id,
                                   const std::vector<FaultDevice>& entries);
FaultMsgSignal NormalSignal(const std::string& job_id);

// The entries GetFaultMsgSignal shows for a job: its devices and the custom-filtered ones, every
// level (the original answers from the unfiltered fault ranks, NotHandleFault included).
std::vector<FaultDevice> FaultQueryEntries(const JobFaultRanks& faults);
// The entries the Fault service streams for a job: FaultQueryEntries with NotHandleFault dropped
// (§7.6).
std::vector<FaultDevice> FaultServiceEntries(const JobFaultRanks& faults);

// GetFaultMsgSignal's texts for one job (§4.1).
inline constexpr std::string_view kFaultQueryAllInfo = "all info returned";
std::string FaultQueryNotFoundInfo(const std::string& job_id);

struct JobFaultQueryAnswer {
  std::string info;
  std::optional<FaultMsgSignal> signal;  // uuid left empty: the caller stamps it
};
// GetFaultMsgSignal for one valid job id, as the original answers it: a job the registry does not
// know is "not found" with no signal; a known one gets "all info returned" with the message built
// from FaultQueryEntries(*faults) (null: the centre has no snapshot yet), which is `normal` with
// no nodes, like the stream's `normal` message, when the job has no entries.
JobFaultQueryAnswer AnswerJobFaultQuery(const std::string& job_id, bool job_known,
                                        const JobFaultRanks* faults);

// §4.6: one node's inputs to the cluster-wide view.
struct ClusterNodeFaults {
  std::string node_name;
  std::string node_ip;
  std::string node_sn;
  const DeviceRecord* device = nullptr;         // processed
  const SwitchRecord* switch_record = nullptr;  // processed
  const NodeRecord* node_record = nullptr;      // processed
  bool node_ready = true;
};
FaultMsgSignal BuildClusterFaultSignal(const std::vector<ClusterNodeFaults>& nodes);

}  // namespace clusterd::cluster
