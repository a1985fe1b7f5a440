#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "recovery/fault_rank.h"
#include "recovery/job_recovery.h"
#include "recovery/reset_config.h"
#include "recovery/signal.h"
#include "store/object_store.h"

namespace clusterd::recovery {

// Outputs of the machine, carried out by the executor in order.

// Write `signal` to the job's ProcessManageSignal stream. When `await_result` is set the
// machine waits for SignalWritten{id}; otherwise the result is only logged (§6.4 exceptions).
struct SendSignal {
  uint64_t id = 0;
  Signal signal;
  bool await_result = true;
};
// Push SwitchRankList{rankID, op, jobId} on the SubscribeNotifySwitch stream (§12).
struct PushSwitchRankList {
  uint64_t id = 0;
  std::string job_id;
  NicSwitchParams params;
};
// Push StressTestRankParams{stressParam: rank -> ops, jobId} on SubscribeNotifyExecStressTest.
struct PushStressTestParams {
  uint64_t id = 0;
  std::string job_id;
  std::map<int64_t, std::vector<int64_t>> params;
};
// Queue an OM message for SubscribeSwitchNicSignal / SubscribeStressTestResponse.
struct OmMessage {
  OmKind kind = OmKind::kSwitchNic;
  std::string text;
};

// Rewrite reset-config-<jobName> (§11.1) with `op`, up to `attempts` tries (0/1/2 s apart).
// id 0: nobody waits for the result.
struct WriteResetConfig {
  uint64_t id = 0;
  ResetOperation op = ResetOperation::kClear;
  std::vector<int64_t> ranks;
  bool restart_fault_process = false;
  int attempts = 3;
};
// JSON merge patch of the job's PodGroup metadata (labels / annotations), up to `attempts`.
struct PatchPodGroup {
  uint64_t id = 0;
  store::Object patch;
  int attempts = 4;
};
// JSON merge patch of a pod of the job (by name, in the job's namespace).
struct PatchPod {
  std::string pod_name;
  store::Object patch;
  int attempts = 4;
};
// JSON merge patch of a node (cluster scoped).
struct PatchNode {
  std::string node;
  store::Object patch;
  int attempts = 3;
};
// §11.5: record the job's faulty super-pod nodes (pods `pod_ranks`) in
// cluster-system/fault-job-info, or (remove) delete the job's key after `delay`.
struct UpdateFaultJobInfo {
  std::vector<int64_t> pod_ranks;
  bool remove = false;
  absl::Duration delay = absl::ZeroDuration();
};

// Arm (or re-arm) timer `kind` to fire TimerFired{kind, at} at `at`.
struct ArmTimer {
  TimerKind kind = TimerKind::kStep;
  absl::Time at;
};

// Answer the RPC holding `ticket` with Status{code, info}.
struct ReplyReport {
  uint64_t ticket = 0;
  int32_t code = 0;
  std::string info;
};

// To the fault centre: business-plane retry reports (§8.2 step 5).
struct ReportRetryFaults {
  std::vector<FaultRank> faults;
  absl::Time at;
};
// To the fault centre: these pods' faults are not retryable (§9.8).
struct ReportNotRetryable {
  std::vector<int64_t> pod_ranks;
};
// To the fault centre: ignore (or stop ignoring) AIC stress-test faults on these nodes (§13).
struct IgnoreStressTestFaults {
  std::vector<std::string> nodes;
  bool ignore = true;
};

// End every subscription stream of the job (ProcessManageSignal and the OM notify streams)
// except `keep_stream_id`, and drop queued OM messages. Emitted by every reset (§6.6).
struct EndStreams {
  uint64_t keep_stream_id = 0;
};
// The job is gone: drop the controller and its durable record (§6.1).
struct ForgetJob {};
// A log line for an unusual but handled situation (order mix, stale report, quirk fixed...).
// The executor logs it and counts clusterd_recovery_notes_total{kind}.
struct Note {
  std::string kind;  // short, metric label: "order_mix", "stall", "reset", ...
  std::string message;
};

using Command =
    std::variant<SendSignal, PushSwitchRankList, PushStressTestParams, OmMessage, WriteResetConfig,
                 PatchPodGroup, PatchPod, PatchNode, UpdateFaultJobInfo, ArmTimer, ReplyReport,
                 ReportRetryFaults, ReportNotRetryable, IgnoreStressTestFaults, EndStreams,
                 ForgetJob, Note>;

// A one-line rendering for logs and test failure messages.
std::string DebugString(const Command& command);

}  // namespace clusterd::recovery
