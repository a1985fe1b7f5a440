#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "recovery/fault_rank.h"
#include "recovery/job_recovery.h"
#include "recovery/job_view.h"
#include "recovery/reports.h"

namespace clusterd::recovery {

// Inputs of the machine. Each RPC-borne input carries a `ticket` that the machine's
// ReplyReport command answers (possibly later, when the report was blocked on a full mailbox).

// SubscribeProcessManageSignal opened stream `stream_id` (ids are never reused).
struct Subscribed {
  uint64_t stream_id = 0;
};
// The client side of stream `stream_id` went away (not an end the machine asked for).
struct StreamClosed {
  uint64_t stream_id = 0;
};
// The job's PodGroup was deleted (§6.1).
struct JobDeleted {};

// ReportProcessFault, with its faultRanks already parsed (the adapter rejects non-integers).
struct ProcessFaultReported {
  std::vector<FaultRank> faults;
  uint64_t ticket = 0;
};
// ReportStopComplete; a missing status is code 0 (quirk 18).
struct StopCompleteReported {
  std::optional<int32_t> code;
  uint64_t ticket = 0;
};
struct RecoverStrategyReported {
  std::vector<std::string> strategies;
  uint64_t ticket = 0;
};
// ReportRecoverStatus; isolateRankIds parsed (non-integers dropped by the adapter).
struct RecoverStatusReported {
  std::optional<int32_t> code;
  std::string strategy;
  std::vector<int64_t> isolate_rank_ids;
  uint64_t ticket = 0;
};

// One fault rank of a fault-centre delivery (§8.1), after the pre-filter of step 1.
struct HardwareFault {
  int64_t rank = 0;
  std::string pod_uid;
  std::optional<int64_t> pod_rank;
  std::string fault_code;
  std::string fault_level;
  bool do_step_retry = false;
  bool do_restart_in_place = false;
};
// The fault centre's snapshot for this job (about once a second).
struct HardwareFaultsPublished {
  std::vector<HardwareFault> faults;
  std::string health{"Healthy"};  // Healthy / SubHealthy / UnHealthy
};

// The executor wrote (ok) or failed to write the signal or OM push with this id.
struct SignalWritten {
  uint64_t id = 0;
  bool ok = false;
};
// The executor finished the store write with this id.
struct WriteDone {
  uint64_t id = 0;
  bool ok = false;
};
// A timer armed with ArmTimer is due.
struct TimerFired {
  TimerKind kind = TimerKind::kStep;
  absl::Time deadline;
};
// The job's PodGroup or pods changed; the whole current view.
struct JobViewChanged {
  JobView view;
};

// SwitchNicTrack after the §12 request checks passed (ranks/ops aligned node by node).
struct SwitchNicRequested {
  NicSwitchParams params;
  uint64_t ticket = 0;
};
struct SwitchNicResultReplied {
  bool result = false;
  uint64_t ticket = 0;
};
// StressTest after the §13 request checks passed.
struct StressTestRequested {
  StressParams params;
  uint64_t ticket = 0;
};
struct StressTestResultReplied {
  StressResults results;
  uint64_t ticket = 0;
};

using Event =
    std::variant<Subscribed, StreamClosed, JobDeleted, ProcessFaultReported, StopCompleteReported,
                 RecoverStrategyReported, RecoverStatusReported, HardwareFaultsPublished,
                 SignalWritten, WriteDone, TimerFired, JobViewChanged, SwitchNicRequested,
                 SwitchNicResultReplied, StressTestRequested, StressTestResultReplied>;

// A short name for logs ("RecoverStatusReported").
std::string_view EventName(const Event& event);

}  // namespace clusterd::recovery
