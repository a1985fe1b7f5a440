#include "recovery/job_config.h"

#include <algorithm>
#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

constexpr std::array<std::string_view, 6> kPriority = {kStrategyRetry,   kStrategyRecoverInPlace,
                                                       kStrategyRecover, kStrategyElasticTraining,
                                                       kStrategyDump,    kStrategyExit};

int PriorityOf(std::string_view name) {
  for (size_t i = 0; i < kPriority.size(); ++i) {
    if (kPriority[i] == name) return static_cast<int>(i);
  }
  return static_cast<int>(kPriority.size());
}

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::string ValueOr(const StringMap& map, std::string_view key, std::string_view fallback) {
  auto it = map.find(std::string(key));
  return it == map.end() ? std::string(fallback) : it->second;
}

bool JobConfig::Has(std::string_view strategy) const {
  return std::find(strategies.begin(), strategies.end(), strategy) != strategies.end();
}
bool JobConfig::HotSwitch() const { return sub_health_strategy == kSubHealthHotSwitch; }
bool JobConfig::GraceExit() const { return sub_health_strategy == kSubHealthGraceExit; }
bool JobConfig::JobRescheduling() const { return Has(kStrategyJobRescheduling); }
bool JobConfig::PodRescheduling() const { return Has(kStrategyPodRescheduling); }

void SortStrategies(std::vector<std::string>& strategies) {
  std::stable_sort(strategies.begin(), strategies.end(),
                   [](const std::string& a, const std::string& b) {
                     const int pa = PriorityOf(a);
                     const int pb = PriorityOf(b);
                     return pa != pb ? pa < pb : a < b;
                   });
}

JobConfig BuildJobConfig(const StringMap& labels, const StringMap& annotations) {
  JobConfig config;
  config.process_recover_enabled = ValueOr(labels, kLabelProcessRecoverEnable) == kProcessRecoverOn;
  std::vector<std::string> list;
  auto add = [&list](std::string_view name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.emplace_back(name);
  };
  const std::string configured = ValueOr(annotations, kAnnotationRecoverStrategy);
  for (absl::string_view item : absl::StrSplit(configured, ',')) {
    // Not trimmed: "retry, recover" keeps only "retry" (§9.1).
    const std::string_view name(item.data(), item.size());
    if (PriorityOf(name) < static_cast<int>(kPriority.size())) add(name);
  }
  const std::string fault_scheduling = ValueOr(labels, kLabelFaultScheduling);
  if (fault_scheduling == kFaultSchedulingGrace || fault_scheduling == kFaultSchedulingForce) {
    add(kStrategyJobRescheduling);
  }
  if (ValueOr(labels, kLabelPodRescheduling) == kProcessRecoverOn) add(kStrategyPodRescheduling);
  add(kStrategyExit);
  SortStrategies(list);
  config.strategies = std::move(list);

  const std::string sub_health = ValueOr(labels, kLabelSubHealthyStrategy);
  if (sub_health == kSubHealthGraceExit || sub_health == kSubHealthHotSwitch ||
      sub_health == kSubHealthIgnore) {
    config.sub_health_strategy = sub_health;
  }
  config.framework = ValueOr(labels, kLabelFramework);
  config.platform_mode = annotations.count(std::string(kAnnotationProcessRecoverStrategy)) > 0;
  return config;
}

bool InitAdmits(const JobConfig& config) {
  return config.process_recover_enabled || config.HotSwitch();
}

std::string InitRefusalInfo(std::string_view job_id) {
  return absl::StrCat("job(uid=", Absl(job_id),
                      ") process-recover-enable and subhealthy hotswtich not open:<nil>");
}

std::string InitSuccessInfo(std::string_view job_id) {
  return absl::StrCat("job(uid=", Absl(job_id), ") init success");
}

bool InPlaceGateOpen(const StringMap& live_labels, const StringMap& live_annotations) {
  if (ValueOr(live_labels, kLabelProcessRecoverEnable) != kProcessRecoverOn) return false;
  const std::string compact =
      absl::StrReplaceAll(ValueOr(live_annotations, kAnnotationRecoverStrategy), {{" ", ""}});
  return absl::StrContains(compact, Absl(kStrategyRecoverInPlace));
}

}  // namespace clusterd::recovery
