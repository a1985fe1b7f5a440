#pragma once

#include <optional>
#include <string>
#include <vector>

#include "recovery/job_config.h"

namespace clusterd::recovery {

// Everything the strategy decision (§9.3-§9.5) looks at, gathered by the machine.
struct StrategyContext {
  JobConfig config;                           // the Init snapshot
  std::string plat_strategy;                  // platform mode only
  std::vector<std::string> agent_strategies;  // last ReportRecoverStrategy (server may prune)
  bool restart_fault_process = false;         // §9.8
  bool normal_cache_empty = true;
  bool pod0_faulty = false;  // pod rank 0 is in faultPod (§9.7)
  std::string health;        // Healthy / SubHealthy / UnHealthy
  // The reported strategy of the last RecoverStatus of the cycle; nullopt = first decision.
  std::optional<std::string> last_result_strategy;
  // Outcome of the scale-in resource wait (§9.3 canScaleIn) when it was needed: nullopt = not
  // run yet; true = a replacement pod showed up (no scale-in); false = it did not.
  std::optional<bool> resources_arrived;
  // After a failed RankTableReady wait in platform mode only dump or exit remain (§7.4 A_DECIDE).
  bool only_dump_or_exit = false;

  bool AgentReported(std::string_view strategy) const;
};

// §9.3 predicates.
bool SupportRetry(const StrategyContext& c);
bool SupportRecover(const StrategyContext& c);
bool SupportInPlace(const StrategyContext& c);
bool SupportDump(const StrategyContext& c);
// The part of canScaleIn that does not need the resource wait; NeedsResourceWait says whether
// the rest depends on it (job- or pod-rescheduling configured).
bool ScaleInConfigured(const StrategyContext& c);
bool NeedsResourceWait(const StrategyContext& c);
bool DumpOnly(const StrategyContext& c);
bool DumpOnFault(const StrategyContext& c);

struct StrategyDecision {
  // A strategy of §5.3 ("retry", "recover-in-place", "recover", "downgrade", "dump", "exit"),
  // or "" when the resource wait must run first (then call Decide again with its outcome).
  std::string strategy;
  bool needs_resource_wait = false;
  // §9.4 step 1: retry was the candidate but the agent did not report it; the retry faults are
  // to be moved to the normal class before the dump/exit signal is built (quirk 15, fixed).
  bool retry_refused_by_agent = false;
};

// The first decision (§9.4) when no result is recorded in the cycle, else the re-decision
// ladder of §9.5 chosen by the last result's reported strategy.
StrategyDecision Decide(const StrategyContext& c);

}  // namespace clusterd::recovery
