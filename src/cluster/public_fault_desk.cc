#include "cluster/public_fault_desk.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/config_map_io.h"
#include "cluster/fault_centre_rejects.h"
#include "common/log.h"

namespace clusterd::cluster {
namespace {

constexpr char kPublicFaultDeskLog[] = "fault-centre";

Counter& PublicFaultRequests(std::string_view source, int32_t code) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_public_fault_requests_total",
      "Public-fault requests by source (grpc, configmap) and result code (0, 409, 410).",
      {{"source", std::string(source)}, {"code", std::to_string(code)}});
}

}  // namespace

PublicFaultDesk::PublicFaultDesk(store::ObjectStore& store, Clock& clock, Options options)
    : store_(store),
      clock_(clock),
      options_(options),
      size_gauge_(MetricsRegistry::Default().GetGauge(
          "clusterd_public_faults", "Public faults held (per node and fault).")) {}

// ---- configuration ----

bool PublicFaultDesk::SetConfig(PublicFaultConfig config, std::string text, std::string source) {
  absl::MutexLock lock(&mu_);
  if (text == config_text_ && source == config_source_) return false;
  config_ = std::move(config);
  config_text_ = std::move(text);
  config_source_ = std::move(source);
  cache_.SetResources(config_.resources, NowMs());
  LogInfo(kPublicFaultDeskLog, "public fault configuration applied",
          {{"resources", config_.resources.size()},
           {"codes", config_.level_of_code.size()},
           {"source", config_source_}});
  return true;
}

bool PublicFaultDesk::Configured() const {
  absl::MutexLock lock(&mu_);
  return !config_text_.empty();
}

std::string PublicFaultDesk::ConfigSource() const {
  absl::MutexLock lock(&mu_);
  return config_source_;
}

std::set<std::string> PublicFaultDesk::ConfigResources() const {
  absl::MutexLock lock(&mu_);
  return config_.resources;
}

size_t PublicFaultDesk::ConfigCodes() const {
  absl::MutexLock lock(&mu_);
  return config_.level_of_code.size();
}

// ---- requests ----

void PublicFaultDesk::MarkStatisticDirty(Outcome* outcome) {
  statistic_dirty_ = true;
  outcome->statistic_due_ms = std::max(
      NowMs(), absl::ToUnixMillis(last_statistic_write_ + options_.statistic_min_interval));
}

PublicFaultDesk::Outcome PublicFaultDesk::Apply(const PublicFaultRequest& request,
                                                std::string_view source,
                                                const NodeBySerialFn& node_by_serial) {
  Outcome out;
  PublicFaultVerdict& verdict = out.verdict;
  absl::MutexLock lock(&mu_);
  const int64_t now = NowMs();
  if (!cache_.Admit(request.resource, now)) {
    verdict.code = kPubFaultRateLimited;
    verdict.info = std::string(kPubFaultRateLimitedInfo);
    PublicFaultRequests(source, verdict.code).Increment();
    FaultCentreRejected("public-fault", "rate_limited").Increment();
    LogWarn(kPublicFaultDeskLog, "public fault request rate limited",
            {{"source", source}, {"resource", request.resource}, {"id", request.id}});
    return out;
  }
  verdict = ValidatePublicFaultRequest(request, config_, node_by_serial);
  PublicFaultRequests(source, verdict.code).Increment();
  for (const std::string& d : verdict.dropped) {
    FaultCentreRejected("public-fault", "invalid_entry").Increment();
    LogWarn(kPublicFaultDeskLog, "public fault dropped",
            {{"source", source}, {"id", request.id}, {"reason", d}});
  }
  if (verdict.code != kPubFaultOk) {
    FaultCentreRejected("public-fault", "invalid").Increment();
    LogWarn(kPublicFaultDeskLog, "public fault request rejected",
            {{"source", source}, {"id", request.id}, {"info", verdict.info}});
    return out;
  }
  size_t full = 0;
  out.changed_nodes = cache_.Apply(request.resource, verdict.accepted, now, &full);
  if (full > 0) {
    FaultCentreRejected("public-fault", "cache_full").Increment(full);
    LogWarn(kPublicFaultDeskLog, "public fault cache full", {{"dropped", full}});
  }
  out.next_expiry_ms = cache_.NextDue();
  MarkStatisticDirty(&out);
  size_gauge_.Set(static_cast<double>(cache_.Size()));
  return out;
}

PublicFaultDesk::Outcome PublicFaultDesk::ApplyConfigMap(
    const std::string& ns_name, const std::map<std::string, std::string>& data,
    const NodeBySerialFn& node_by_serial) {
  auto it = data.find(std::string(kPublicFaultKey));
  if (it == data.end()) {
    RejectFaultInput("public-fault", "malformed",
                     absl::StrCat("configmap ", ns_name, ": no PublicFault key"));
    return {};
  }
  absl::StatusOr<PublicFaultRequest> request = ParsePublicFaultRequest(it->second);
  if (!request.ok()) {
    PublicFaultRequests("configmap", kPubFaultInvalid).Increment();
    RejectFaultInput("public-fault", "malformed",
                     absl::StrCat("configmap ", ns_name, ": ", request.status().message()));
    return {};
  }
  return Apply(*request, "configmap", node_by_serial);
}

std::set<std::string> PublicFaultDesk::Expire(std::optional<int64_t>* next_due_ms) {
  absl::MutexLock lock(&mu_);
  std::set<std::string> changed = cache_.Expire(NowMs());
  statistic_dirty_ = true;
  size_gauge_.Set(static_cast<double>(cache_.Size()));
  *next_due_ms = cache_.NextDue();
  return changed;
}

// ---- reads ----

std::vector<PublicFaultOnNode> PublicFaultDesk::OnNode(const std::string& node) const {
  absl::MutexLock lock(&mu_);
  return cache_.OnNode(node);
}

size_t PublicFaultDesk::Size() const {
  absl::MutexLock lock(&mu_);
  return cache_.Size();
}

// ---- statistic-fault-info ----

void PublicFaultDesk::LoadStatistic() {
  auto stat = store_.Get({std::string(store::kConfigMaps), std::string(kStatisticNamespace),
                          std::string(kStatisticName)});
  if (!stat.ok()) return;  // none yet (NotFound), or the store says why on the next write
  auto data = ConfigMapStringData(*stat);
  absl::MutexLock lock(&mu_);
  if (absl::Status s = cache_.LoadStatistic(data["PublicFaults"], NowMs()); !s.ok()) {
    LogWarn(kPublicFaultDeskLog, "statistic-fault-info not loaded", {{"error", s}});
  }
  size_gauge_.Set(static_cast<double>(cache_.Size()));
}

std::optional<absl::Duration> PublicFaultDesk::WriteStatistic() {
  std::map<std::string, std::string> data;
  {
    absl::MutexLock lock(&mu_);
    if (!statistic_dirty_) return std::nullopt;
    const absl::Time earliest = last_statistic_write_ + options_.statistic_min_interval;
    if (clock_.Now() < earliest) return earliest - clock_.Now();
    data = cache_.StatisticData();
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
    LogWarn(kPublicFaultDeskLog, "writing statistic-fault-info failed", {{"error", s}});
    absl::MutexLock lock(&mu_);
    statistic_dirty_ = true;
    return absl::Seconds(1);
  }
  return std::nullopt;
}

}  // namespace clusterd::cluster
