#include "cluster/manual_separation.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/config_map_io.h"
#include "cluster/fault_centre_rejects.h"
#include "common/log.h"

namespace clusterd::cluster {
namespace {

constexpr char kManualSeparationLog[] = "fault-centre";

store::ObjectKey ManualConfigMap(std::string_view name) {
  return {std::string(store::kConfigMaps), std::string(kManualNamespace), std::string(name)};
}

}  // namespace

void ManualSeparation::Load() {
  absl::StatusOr<store::Object> manual = store_.Get(ManualConfigMap(kManualInfoName));
  if (!manual.ok()) return;
  std::vector<std::string> problems;
  ManualCache cache = ParseManualInfo(ConfigMapStringData(*manual), &problems);
  for (const auto& p : problems)
    LogWarn(kManualSeparationLog, "clusterd-manual-info-cm", {{"problem", p}});
  absl::MutexLock lock(&mu_);
  engine_.Load(std::move(cache));
}

bool ManualSeparation::ReadPolicy() {
  absl::StatusOr<store::Object> cm = store_.Get(ManualConfigMap(kManualConfigName));
  if (!cm.ok()) return false;  // a missing CM or key keeps the previous configuration
  auto data = ConfigMapStringData(*cm);
  auto it = data.find(std::string(kManualPolicyKey));
  if (it == data.end()) return false;
  absl::StatusOr<ManualSeparationPolicy> policy = ParseManualSeparationPolicy(it->second);
  if (!policy.ok()) {
    RejectFaultInput("manual-separation-config", "invalid",
                     absl::StrCat("manual separation policy rejected, previous kept: ",
                                  policy.status().message()));
    return false;
  }
  absl::MutexLock lock(&mu_);
  if (policy_applied_ms_ == 0) policy_applied_ms_ = NowMs();
  if (engine_.policy() == *policy) return false;
  policy_applied_ms_ = NowMs();
  const bool was = engine_.enabled();
  engine_.SetPolicy(*policy);
  LogInfo(kManualSeparationLog,
          "manual separation policy applied from cluster-system/clusterd-config-cm",
          {{"enabled", policy->enabled},
           {"threshold", policy->fault_threshold},
           {"window_hours", policy->fault_window_hours},
           {"free_hours", policy->fault_free_hours}});
  return was != policy->enabled;
}

std::set<std::string> ManualSeparation::Sync() {
  const store::ObjectKey key = ManualConfigMap(kManualInfoName);
  std::optional<ManualCache> now_cm;
  absl::StatusOr<store::Object> read = store_.Get(key);
  if (read.ok()) {
    now_cm = ParseManualInfo(ConfigMapStringData(*read), nullptr);
  } else if (absl::IsNotFound(read.status())) {
    now_cm = ManualCache{};
  }
  ManualSeparationEngine::SyncPlan plan;
  {
    absl::MutexLock lock(&mu_);
    plan = engine_.Sync(now_cm, NowMs());
  }
  if (plan.delete_cm) {
    if (read.ok()) {
      if (absl::Status s = store_.Delete(key); !s.ok() && !absl::IsNotFound(s)) {
        LogWarn(kManualSeparationLog, "deleting clusterd-manual-info-cm failed", {{"error", s}});
      }
    }
  } else if (plan.write.has_value()) {
    absl::Status s = WriteWholeConfigMap(store_, kManualNamespace, std::string(kManualInfoName),
                                         RenderManualInfo(*plan.write), {});
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      engine_.Written(*plan.write);
    } else {
      LogWarn(kManualSeparationLog, "writing clusterd-manual-info-cm failed", {{"error", s}});
    }
  }
  return std::move(plan.changed_nodes);
}

std::optional<int64_t> ManualSeparation::Submit(const std::vector<FaultOccurrence>& occurrences) {
  absl::MutexLock lock(&mu_);
  engine_.Submit(occurrences);
  return engine_.NextTriageDue();
}

std::set<std::string> ManualSeparation::Triage(
    const std::function<bool(const std::string&)>& pod_group_exists,
    std::optional<int64_t>* next_due_ms) {
  absl::MutexLock lock(&mu_);
  std::set<std::string> changed = engine_.Triage(NowMs(), pod_group_exists);
  *next_due_ms = engine_.NextTriageDue();
  return changed;
}

bool ManualSeparation::Enabled() const {
  absl::MutexLock lock(&mu_);
  return engine_.enabled();
}

std::vector<std::string> ManualSeparation::NpusOn(const std::string& node) const {
  absl::MutexLock lock(&mu_);
  return engine_.NpusOn(node);
}

ManualSeparation::View ManualSeparation::Configuration() const {
  absl::MutexLock lock(&mu_);
  return {engine_.policy(), policy_applied_ms_};
}

}  // namespace clusterd::cluster
