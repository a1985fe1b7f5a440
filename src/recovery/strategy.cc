#include "recovery/strategy.h"

#include <algorithm>

#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

bool PlatformAllows(const StrategyContext& c, std::string_view strategy) {
  return !c.config.platform_mode || c.plat_strategy == strategy;
}

bool CanScaleIn(const StrategyContext& c) {
  if (!ScaleInConfigured(c)) return false;
  if (!NeedsResourceWait(c)) return true;
  // Rescheduling is configured: scale in only when the resource wait failed.
  return c.resources_arrived.has_value() && !*c.resources_arrived;
}

StrategyDecision Pick(std::string_view strategy) { return {std::string(strategy), false, false}; }

// Walks `ladder` (in-place, recover, scale-in, dump, exit in that order, each optional).
StrategyDecision Ladder(const StrategyContext& c, bool in_place, bool recover, bool scale_in) {
  if (!c.only_dump_or_exit) {
    if (in_place && SupportInPlace(c)) return Pick(kStrategyRecoverInPlace);
    if (recover && SupportRecover(c)) return Pick(kStrategyRecover);
    if (scale_in && ScaleInConfigured(c)) {
      if (NeedsResourceWait(c) && !c.resources_arrived.has_value()) {
        return {"", true, false};
      }
      if (CanScaleIn(c)) return Pick(kStrategyDowngrade);
    }
  }
  if (SupportDump(c)) return Pick(kStrategyDump);
  return Pick(kStrategyExit);
}

}  // namespace

bool StrategyContext::AgentReported(std::string_view strategy) const {
  return std::find(agent_strategies.begin(), agent_strategies.end(), strategy) !=
         agent_strategies.end();
}

bool SupportRetry(const StrategyContext& c) {
  return c.config.Has(kStrategyRetry) && PlatformAllows(c, kStrategyRetry);
}

bool SupportRecover(const StrategyContext& c) {
  return c.config.Has(kStrategyRecover) && c.AgentReported(kStrategyRecover) &&
         PlatformAllows(c, kStrategyRecover);
}

bool SupportInPlace(const StrategyContext& c) {
  return c.restart_fault_process && c.config.Has(kStrategyRecoverInPlace) &&
         c.AgentReported(kStrategyRecover) && PlatformAllows(c, kStrategyRecover);
}

bool SupportDump(const StrategyContext& c) {
  return c.config.Has(kStrategyDump) && c.AgentReported(kStrategyDump) &&
         PlatformAllows(c, kStrategyDump);
}

bool ScaleInConfigured(const StrategyContext& c) {
  return !c.pod0_faulty && c.config.Has(kStrategyElasticTraining) &&
         c.AgentReported(kStrategyDowngrade);
}

bool NeedsResourceWait(const StrategyContext& c) {
  return c.config.JobRescheduling() || c.config.PodRescheduling();
}

bool DumpOnly(const StrategyContext& c) {
  if (!c.config.process_recover_enabled) return false;
  if (c.config.platform_mode) {
    return c.plat_strategy == kStrategyDump && c.config.Has(kStrategyDump);
  }
  return !c.config.strategies.empty() && c.config.strategies.front() == kStrategyDump;
}

bool DumpOnFault(const StrategyContext& c) {
  return DumpOnly(c) &&
         (c.health == kUnHealthy || (c.health == kSubHealthy && c.config.GraceExit()));
}

StrategyDecision Decide(const StrategyContext& c) {
  if (!c.last_result_strategy.has_value()) {
    if (!c.only_dump_or_exit && SupportRetry(c) && c.normal_cache_empty) {
      if (c.AgentReported(kStrategyRetry)) return Pick(kStrategyRetry);
      StrategyDecision d = Pick(SupportDump(c) ? kStrategyDump : kStrategyExit);
      d.retry_refused_by_agent = true;
      return d;
    }
    return Ladder(c, true, true, true);
  }
  const std::string& last = *c.last_result_strategy;
  if (last == kStrategyRetry) return Ladder(c, true, true, true);
  if (last == kStrategyRecover || last == kStrategyDowngrade || last == kStrategyUpgrade) {
    return Ladder(c, false, false, false);
  }
  return Pick(kStrategyExit);
}

}  // namespace clusterd::recovery
