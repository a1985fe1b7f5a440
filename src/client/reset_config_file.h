#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace clusterd::client {

// One entry of reset.json's RankList.
struct ResetRank {
  int64_t rank_id = 0;
  std::string status;  // "fault" when written by clusterd
  std::string policy;  // "" from clusterd; "reset"/"restart" in hot-reset mode
  bool operator==(const ResetRank&) const = default;
};

// reset.json as an agent reads it from the mounted reset ConfigMap
// (/user/restore/reset/config/reset.json, recovery-protocol.md §11.1).
struct ResetConfig {
  bool initializing = false;  // the body the ConfigMap is created with: {"status":"initializing"}
  std::vector<ResetRank> ranks;
  int64_t update_time = 0;
  int64_t retry_time = 0;
  bool fault_flushing = false;
  int64_t graceful_exit = 0;
  bool restart_fault_process = false;

  bool Lists(int64_t rank) const;
  // Some rank has Policy "reset" or "restart": hot-reset mode, which clusterd refuses to combine
  // with process recovery.
  bool HotResetMode() const;
  bool operator==(const ResetConfig&) const = default;
};

// Parses reset.json. Missing fields take their zero values (like Go's decoder); a field of the
// wrong JSON type, or text that is not a JSON object, is InvalidArgument.
absl::StatusOr<ResetConfig> ParseResetConfig(std::string_view reset_json);

// checkCode is the lower-case hex SHA-256 of the exact reset.json bytes. DataLoss on mismatch
// (the agent read a half-updated mount, or somebody edited one key only).
absl::Status VerifyResetCheckCode(std::string_view reset_json, std::string_view check_code);

// What the agent of a pod must do with its workers after reading reset.json (§11.1):
enum class ResetAction {
  kNone,                  // keep going
  kHoldWorkers,           // FaultFlushing, or own ranks listed at start-up: do not start workers
  kExit,                  // own ranks listed, RestartFaultProcess false: the agent exits
  kRestartFaultyWorkers,  // own ranks listed, RestartFaultProcess true: restart only those
  kRestartAllWorkers,     // RetryTime changed: restart every worker
};
std::string_view ResetActionName(ResetAction action);

struct ResetDirective {
  ResetAction action = ResetAction::kNone;
  std::vector<int64_t> ranks;  // the agent's own ranks that are listed
  bool operator==(const ResetDirective&) const = default;
};

// Pure. `previous` is the last body this agent acted on (nullopt at start-up); `own_ranks` are
// the global ranks of the agent's workers. Own ranks listed win over a RetryTime change, which
// wins over FaultFlushing. An agent that starts while its ranks are listed holds its workers
// (inferred: clusterd clears the list once the replacement pod is scheduled, §7.4 A_WAIT_RECOVER,
// which is what lets the new pod's agent start).
ResetDirective DecideResetAction(const std::optional<ResetConfig>& previous,
                                 const ResetConfig& current, const std::vector<int64_t>& own_ranks);

// The mounted ConfigMap: a directory holding the files reset.json and (optionally) checkCode, as
// kubelet projects the two data keys. Poll re-reads it; a body that did not change yields nothing.
class ResetConfigFile {
 public:
  explicit ResetConfigFile(std::string directory) : directory_(std::move(directory)) {}

  // Reads and parses the current body, checking checkCode when the file is there.
  absl::StatusOr<ResetConfig> Read() const;
  // The directive for a changed body, or nullopt when the body is the one seen last time.
  absl::StatusOr<std::optional<ResetDirective>> Poll(const std::vector<int64_t>& own_ranks);
  const std::optional<ResetConfig>& last() const { return last_; }

 private:
  absl::StatusOr<std::string> ReadRaw(std::string_view name, bool required) const;
  std::string directory_;
  std::string last_text_;
  std::optional<ResetConfig> last_;
};

}  // namespace clusterd::client
