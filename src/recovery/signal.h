#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recovery/fault_rank.h"
#include "recovery/states.h"

namespace clusterd::recovery {

// A ProcessManageSignal (§2.2) as the machine builds it; the stream adapter copies it field by
// field into the proto. faultRanks and nodeRankIds come out in ascending order (the reference
// leaves the order undefined and clients treat them as sets).
struct Signal {
  std::string uuid;
  std::string job_id;
  std::string signal_type;
  std::vector<std::string> actions;
  std::vector<FaultRank> fault_ranks;
  std::string change_strategy;
  int64_t timeout = 0;  // seconds
  std::vector<int64_t> node_rank_ids;
  std::string extra_params;
  bool operator==(const Signal&) const = default;
};

// §6.4: the event raised after the signal was written (ok) or could not be (not ok), or
// nullopt when the send result raises nothing (keep-alive, pauseStartAgent, preExitProcess,
// extraParams dump_exit). killMaster raises `finish` either way.
std::optional<MachineEvent> SendResultEvent(const Signal& signal, bool ok);

// The §5.6 shapes. `uuid` is supplied by the caller (new or current, as §6.7 says).
Signal KeepAliveSignal(const std::string& job_id, const std::string& uuid);
Signal StopSignal(const std::string& job_id, const std::string& uuid,
                  const std::vector<FaultRank>& faults);
Signal PauseSignal(const std::string& job_id, const std::string& uuid, int64_t timeout);
Signal GlobalFaultSignal(const std::string& job_id, const std::string& uuid,
                         const std::vector<FaultRank>& faults, bool fault_nodes_exit,
                         bool fault_nodes_restart, const std::vector<int64_t>& node_ranks);
Signal ChangeStrategySignal(const std::string& job_id, const std::string& uuid,
                            const std::string& strategy, const std::vector<FaultRank>& faults,
                            const std::vector<int64_t>& node_ranks);
Signal SaveAndExitSignal(const std::string& job_id, const std::string& uuid,
                         const std::vector<int64_t>& node_ranks);
Signal CleanUpExitSignal(const std::string& job_id, const std::string& uuid,
                         const std::vector<int64_t>& node_ranks);
Signal KillMasterSignal(const std::string& job_id, const std::string& uuid);
Signal FaultNodesExitSignal(const std::string& job_id, const std::string& uuid,
                            const std::vector<int64_t>& node_ranks);
Signal PreExitSignal(const std::string& job_id, const std::string& uuid,
                     const std::vector<FaultRank>& faults, const std::vector<int64_t>& node_ranks);
Signal HotSwitchSignal(const std::string& job_id, const std::string& uuid, std::string_view action,
                       const std::vector<FaultRank>& faults);
Signal StartAgentSignal(const std::string& job_id, const std::string& uuid, bool pause);

// A one-line rendering for logs and test failure messages.
std::string DebugString(const Signal& signal);

}  // namespace clusterd::recovery
