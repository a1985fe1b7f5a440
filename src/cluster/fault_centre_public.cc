// The fault centre's public faults (§9: the PubFault service and public-fault ConfigMaps, their
// expiry and statistic-fault-info, §1.8) and manual separation (§1.10: triage of repeated
// faults, clusterd-manual-info-cm, the policy of clusterd-config-cm).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cluster/config_map_io.h"
#include "cluster/fault_centre.h"
#include "common/log.h"

namespace clusterd::cluster {
namespace {

constexpr char kComponent[] = "fault-centre";

Counter& PublicFaultRequests(std::string_view source, int32_t code) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_public_fault_requests_total",
      "Public-fault requests by source (grpc, configmap) and result code (0, 409, 410).",
      {{"source", std::string(source)}, {"code", std::to_string(code)}});
}

}  // namespace

// ---- public faults ----

void FaultCentre::ApplyPublicFaults(const std::string& resource, const PublicFaultRequest& request,
                                    std::string_view source, PublicFaultVerdict* verdict) {
  const int64_t now = NowMs();
  if (!public_faults_.Admit(resource, now)) {
    verdict->code = kPubFaultRateLimited;
    verdict->info = std::string(kPubFaultRateLimitedInfo);
    PublicFaultRequests(source, verdict->code).Increment();
    Rejected("public-fault", "rate_limited").Increment();
    LogWarn(kComponent, "public fault request rate limited",
            {{"source", source}, {"resource", resource}, {"id", request.id}});
    return;
  }
  auto by_sn = [this](const std::string& sn) -> std::optional<std::string> {
    mu_.AssertHeld();
    auto it = node_by_sn_.find(sn);
    if (it == node_by_sn_.end()) return std::nullopt;
    return it->second;
  };
  *verdict = ValidatePublicFaultRequest(request, public_config_, by_sn);
  PublicFaultRequests(source, verdict->code).Increment();
  for (const std::string& d : verdict->dropped) {
    Rejected("public-fault", "invalid_entry").Increment();
    LogWarn(kComponent, "public fault dropped",
            {{"source", source}, {"id", request.id}, {"reason", d}});
  }
  if (verdict->code != kPubFaultOk) {
    Rejected("public-fault", "invalid").Increment();
    LogWarn(kComponent, "public fault request rejected",
            {{"source", source}, {"id", request.id}, {"info", verdict->info}});
    return;
  }
  size_t full = 0;
  for (const std::string& node : public_faults_.Apply(resource, verdict->accepted, now, &full)) {
    controller_.Enqueue(FaultCentreKey::Device(node));
  }
  if (full > 0) {
    Rejected("public-fault", "cache_full").Increment(full);
    LogWarn(kComponent, "public fault cache full", {{"dropped", full}});
  }
  if (auto due = public_faults_.NextDue()) {
    ScheduleAt(FaultCentreKey::Of(Kind::kPublicFaultExpiry), *due);
  }
  statistic_dirty_ = true;
  const int64_t next =
      std::max(now, absl::ToUnixMillis(last_statistic_write_ + options_.statistic_min_interval));
  ScheduleAt(FaultCentreKey::Of(Kind::kStatistic), next);
  public_faults_gauge_.Set(static_cast<double>(public_faults_.Size()));
}

PublicFaultVerdict FaultCentre::SendPublicFault(const PublicFaultRequest& request) {
  PublicFaultVerdict verdict;
  absl::MutexLock lock(&mu_);
  ApplyPublicFaults(request.resource, request, "grpc", &verdict);
  return verdict;
}

void FaultCentre::HandlePublicFaultCm(const std::string& ns_name) {
  std::optional<std::optional<store::Object>> pending =
      TakePending(FaultCentreKey::PublicFaultCm(ns_name));
  // Deleting the CM does nothing: faults must be recovered explicitly (§1.8).
  if (!pending.has_value() || !pending->has_value()) return;
  auto data = ConfigMapStringData(**pending);
  auto it = data.find(std::string(kPublicFaultKey));
  if (it == data.end()) {
    Reject("public-fault", "malformed",
           absl::StrCat("configmap ", ns_name, ": no PublicFault key"));
    return;
  }
  absl::StatusOr<PublicFaultRequest> request = ParsePublicFaultRequest(it->second);
  if (!request.ok()) {
    PublicFaultRequests("configmap", kPubFaultInvalid).Increment();
    Reject("public-fault", "malformed",
           absl::StrCat("configmap ", ns_name, ": ", request.status().message()));
    return;
  }
  PublicFaultVerdict verdict;
  ApplyPublicFaults(request->resource, *request, "configmap", &verdict);
}

// ---- manual separation ----

std::optional<int64_t> FaultCentre::ExpirePublicFaults() {
  for (const std::string& node : public_faults_.Expire(NowMs())) {
    controller_.Enqueue(FaultCentreKey::Device(node));
  }
  statistic_dirty_ = true;
  controller_.Enqueue(FaultCentreKey::Of(Kind::kStatistic));
  public_faults_gauge_.Set(static_cast<double>(public_faults_.Size()));
  return public_faults_.NextDue();
}

std::optional<int64_t> FaultCentre::RunManualTriage() {
  auto exists = [this](const std::string& job_id) {
    mu_.AssertHeld();
    const FaultJob* job = index_.Job(job_id);
    return job != nullptr && job->pod_group_exists;
  };
  for (const std::string& node : manual_.Triage(NowMs(), exists)) {
    controller_.Enqueue(FaultCentreKey::Device(node));
  }
  return manual_.NextTriageDue();
}

void FaultCentre::RunManualSync() {
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(kManualNamespace),
                             std::string(kManualInfoName)};
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
    plan = manual_.Sync(now_cm, NowMs());
    for (const std::string& node : plan.changed_nodes)
      controller_.Enqueue(FaultCentreKey::Device(node));
  }
  if (plan.delete_cm) {
    if (read.ok()) {
      if (absl::Status s = store_.Delete(key); !s.ok() && !absl::IsNotFound(s)) {
        LogWarn(kComponent, "deleting clusterd-manual-info-cm failed", {{"error", s}});
      }
    }
  } else if (plan.write.has_value()) {
    absl::Status s = WriteWholeConfigMap(store_, kManualNamespace, std::string(kManualInfoName),
                                         RenderManualInfo(*plan.write), {});
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      manual_.Written(*plan.write);
    } else {
      LogWarn(kComponent, "writing clusterd-manual-info-cm failed", {{"error", s}});
    }
  }
}

void FaultCentre::RunManualConfig() {
  absl::StatusOr<store::Object> cm =
      store_.Get({std::string(store::kConfigMaps), std::string(kManualNamespace),
                  std::string(kManualConfigName)});
  if (!cm.ok()) return;  // a missing CM or key keeps the previous configuration
  auto data = ConfigMapStringData(*cm);
  auto it = data.find(std::string(kManualPolicyKey));
  if (it == data.end()) return;
  absl::StatusOr<ManualSeparationPolicy> policy = ParseManualSeparationPolicy(it->second);
  if (!policy.ok()) {
    Reject("manual-separation-config", "invalid",
           absl::StrCat("manual separation policy rejected, previous kept: ",
                        policy.status().message()));
    return;
  }
  absl::MutexLock lock(&mu_);
  if (manual_policy_applied_ms_ == 0) manual_policy_applied_ms_ = NowMs();
  if (manual_.policy() == *policy) return;
  manual_policy_applied_ms_ = NowMs();
  const bool was = manual_.enabled();
  manual_.SetPolicy(*policy);
  LogInfo(kComponent, "manual separation policy applied from cluster-system/clusterd-config-cm",
          {{"enabled", policy->enabled},
           {"threshold", policy->fault_threshold},
           {"window_hours", policy->fault_window_hours},
           {"free_hours", policy->fault_free_hours}});
  if (was != policy->enabled) {
    for (const auto& [node, ns] : nodes_) {
      if (ns.device_original.has_value()) controller_.Enqueue(FaultCentreKey::Device(node));
    }
  }
}

// ---- statistic-fault-info ----

std::optional<absl::Duration> FaultCentre::WriteStatistic() {
  std::map<std::string, std::string> data;
  {
    absl::MutexLock lock(&mu_);
    if (!statistic_dirty_) return std::nullopt;
    const absl::Time earliest = last_statistic_write_ + options_.statistic_min_interval;
    if (clock_.Now() < earliest) return earliest - clock_.Now();
    data = public_faults_.StatisticData();
    statistic_dirty_ = false;
    last_statistic_write_ = clock_.Now();
  }
  const std::map<std::string, std::string> labels = {{std::string(kStatisticLabel), "true"}};
  absl::Status s;
  if (data.count("PublicFaults") == 0) {
    // More than 4500 faults: only FaultNum and Description change (§1.8).
    store::Object patch;
    patch["data"]["FaultNum"] = data["FaultNum"];
    patch["data"]["Description"] = data["Description"];
    auto patched = store_.Patch({std::string(store::kConfigMaps), std::string(kStatisticNamespace),
                                 std::string(kStatisticName)},
                                patch);
    s = patched.ok() || !absl::IsNotFound(patched.status())
            ? patched.status()
            : WriteWholeConfigMap(store_, kStatisticNamespace, std::string(kStatisticName), data,
                                  labels);
  } else {
    s = WriteWholeConfigMap(store_, kStatisticNamespace, std::string(kStatisticName), data, labels);
  }
  if (!s.ok()) {
    LogWarn(kComponent, "writing statistic-fault-info failed", {{"error", s}});
    absl::MutexLock lock(&mu_);
    statistic_dirty_ = true;
    return absl::Seconds(1);
  }
  return std::nullopt;
}

}  // namespace clusterd::cluster
