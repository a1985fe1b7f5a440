#include "recovery/cycle_log.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

constexpr char kRecoveryCycleLog[] = "recovery";

std::string Outcome(const std::string& status) {
  if (status.empty()) return "ended";
  constexpr std::string_view kSuccess = "-success";
  const bool success = status.size() > kSuccess.size() &&
                       std::string_view(status).substr(status.size() - kSuccess.size()) == kSuccess;
  if (success || status == kStatusExitCompleted) return "success";
  return "failed";
}

// The ProcessRecoverStatus a PodGroup patch writes, or "".
std::string StatusOf(const PatchPodGroup& patch) {
  auto metadata = patch.patch.find("metadata");
  if (metadata == patch.patch.end() || !metadata->is_object()) return "";
  auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return "";
  return StringOr(*annotations, std::string(kAnnotationProcessRecoverStatus), "");
}

void EndCycle(std::string_view job, const JobRecovery& after, std::string_view reason,
              absl::Time now, CycleTracking* cycle, CycleObserver* observer) {
  const std::string strategy = cycle->strategy.empty() ? "none" : cycle->strategy;
  const std::string outcome = Outcome(cycle->status);
  const double seconds = std::max(0.0, absl::ToDoubleSeconds(now - cycle->started));
  MetricsRegistry::Default()
      .GetCounter("clusterd_recovery_cycles_total",
                  "Recovery cycles that ended, by the strategy carried out and the outcome.",
                  {{"strategy", strategy}, {"outcome", outcome}})
      .Increment();
  MetricsRegistry::Default()
      .GetHistogram("clusterd_recovery_duration_seconds",
                    "From a cycle's first signal to its end, by strategy and outcome.",
                    {1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600},
                    {{"strategy", strategy}, {"outcome", outcome}})
      .Observe(seconds);
  LogInfo(kRecoveryCycleLog, "recovery cycle ended",
          {{"job", std::string(job)},
           {"job_id", after.job_id},
           {"cycle", cycle->uuid},
           {"strategy", strategy},
           {"outcome", outcome},
           {"status", cycle->status.empty() ? std::string("<none>") : cycle->status},
           {"reason", std::string(reason)},
           {"seconds", absl::StrFormat("%.3f", seconds)}});
  if (observer != nullptr) observer->OnCycleEnded(after.job_id, strategy, outcome, now);
  *cycle = CycleTracking{};
}

}  // namespace

std::string FaultRanksText(const std::vector<FaultRank>& ranks) {
  if (ranks.empty()) return "<none>";
  return absl::StrJoin(ranks, ",", [](std::string* out, const FaultRank& f) {
    absl::StrAppend(out, f.rank, ":", f.type);
  });
}

void LogCycleStep(std::string_view job, std::string_view before_decided, const JobRecovery& after,
                  const std::vector<Command>& commands, absl::Time now, CycleTracking* cycle,
                  CycleObserver* observer) {
  const bool running = cycle->started != absl::InfinitePast();
  for (const Command& command : commands) {
    if (const auto* patch = std::get_if<PatchPodGroup>(&command); patch != nullptr && running) {
      if (std::string status = StatusOf(*patch); !status.empty()) cycle->status = std::move(status);
    } else if (const auto* note = std::get_if<Note>(&command);
               note != nullptr && note->kind == "reset" && running) {
      std::string_view reason = note->message;
      constexpr std::string_view kPrefix = "controller reset: ";
      if (reason.substr(0, kPrefix.size()) == kPrefix) reason.remove_prefix(kPrefix.size());
      EndCycle(job, after, reason, now, cycle, observer);
    }
  }
  if (!after.uuid.empty() && after.uuid != cycle->uuid && cycle->started == absl::InfinitePast()) {
    cycle->started = now;
    cycle->uuid = after.uuid;
    LogInfo(kRecoveryCycleLog, "recovery cycle started",
            {{"job", std::string(job)},
             {"job_id", after.job_id},
             {"cycle", after.uuid},
             {"fault_ranks", FaultRanksText(after.caches.All())}});
    if (observer != nullptr) observer->OnCycleStarted(after.job_id, now);
  }
  if (cycle->started != absl::InfinitePast() && after.decided != before_decided &&
      !after.decided.empty()) {
    cycle->strategy = after.decided;
    LogInfo(
        kRecoveryCycleLog, "recovery strategy decided",
        {{"job", std::string(job)},
         {"job_id", after.job_id},
         {"cycle", cycle->uuid},
         {"strategy", after.decided},
         {"platform", after.plat_strategy.empty() ? std::string("<none>") : after.plat_strategy},
         {"offered", after.agent_strategies.empty() ? std::string("<none>")
                                                    : absl::StrJoin(after.agent_strategies, ",")},
         {"fault_ranks", FaultRanksText(after.caches.All())}});
    if (observer != nullptr) observer->OnStrategyDecided(after.job_id, after.decided, now);
  }
}

}  // namespace clusterd::recovery
