#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "faults/fault_customization.h"
#include "model/fault_level.h"
#include "model/reset_info.h"

namespace clusterd::faults {

// One NPU of a graceful-tolerance job on this node, as the engine sees it now.
struct GraceNpuView {
  int npu_id = 0;
  int rank_id = 0;
  model::FaultLevel level = model::FaultLevel::kNormalNPU;  // chip level
  std::vector<int64_t> error_codes;                         // current chip codes, decimal
  std::string error_code_hex;                               // upper-case, comma-joined
  int64_t fault_since_ms = 0;                               // earliest current code
  bool ring_idle = true;  // no other job holds an NPU of its reset ring
};

// The simulated driver's answer to a hot reset.
struct GraceResetOutcome {
  int npu_id = 0;
  bool success = true;
};

struct GraceCommands {
  bool write_reset_config = false;  // the RankList changed
  std::vector<int> hot_reset;       // reset these NPUs (and their rings) now
  std::vector<int> isolate;         // reset failed or fault persists: force isolation
};

// Graceful fault tolerance for one job on this node (the product's "(Optional) Graceful Fault
// Tolerance"; fault-pipeline.md §1.5 RankList, §3.6 policies, §5.1 GraceTolerance times). Pure.
//
// Per faulty rank: the RankList entry is written (Status unrecovered, Policy = InitialPolicy =
// §3.6 policy of the chip level); after WaitProcessReadCMTime the job's processes have read it
// and stopped. restart_request / restart faults get WaitFaultSelfHealingTime to go away
// (recovered) before escalating to reset; free_reset / reset faults are hot-reset once the ring
// is idle (and, except on 910B, once the fault has persisted > 60 s); the reset must finish
// within WaitDeviceResetTime. Success: Status recovered. Failure, timeout or isolate: Status
// failed with Policy isolate, and the NPU is isolated (the job falls back to rescheduling).
class GraceJobTracker {
 public:
  GraceJobTracker(GraceTolerance config, bool reset_without_persistence);

  GraceCommands Advance(const std::vector<GraceNpuView>& npus,
                        const std::vector<GraceResetOutcome>& outcomes, int64_t now_ms);

  // RankList entries by rank id (ErrorCode written as an array, never null, as the plugin does).
  std::vector<model::TaskDevInfo> RankList() const;
  std::optional<int64_t> NextDeadlineMs() const;
  void SetConfig(const GraceTolerance& config) { config_ = config; }

  static constexpr int64_t kPersistBeforeResetMs = 60000;

 private:
  enum class Stage { kWaitRead, kSelfHeal, kWaitReset, kResetting, kRecovered, kFailed };
  struct Rank {
    GraceNpuView view;
    Stage stage = Stage::kWaitRead;
    int64_t since_ms = 0;
    std::string policy;
    std::string initial_policy;
  };
  void Fail(Rank& rank, GraceCommands& out);
  // One stage step; true when the rank moved to a stage that may act at once.
  bool StepRank(Rank& rank, bool fault_gone, const GraceResetOutcome* outcome, int64_t now_ms,
                GraceCommands& out);

  GraceTolerance config_;
  bool reset_without_persistence_;
  std::vector<Rank> ranks_;
};

// The reset ring of an NPU (§3.4): 4 NPUs on 910A, 8 (16 on boards with more than 8 NPUs) on
// 910B training, the 4 dies of a card pair on A3, 1 on A5 and 310/310P.
std::vector<int> ResetRing(int npu_id, int num_npus, int ring_size);

}  // namespace clusterd::faults
