// The fault centre's glue to its public-fault part (public_fault_desk.h: the PubFault service,
// public-fault ConfigMaps, their expiry, statistic-fault-info, §9, §1.8) and its
// manual-separation part (manual_separation.h: triage, clusterd-manual-info-cm, the policy of
// clusterd-config-cm, §1.10): what each part says changed becomes keys of the centre.
#include "cluster/config_map_io.h"
#include "cluster/fault_centre.h"

namespace clusterd::cluster {

// ---- public faults ----

std::optional<std::string> FaultCentre::NodeBySerial(const std::string& sn) const {
  absl::MutexLock lock(&sn_mu_);
  auto it = node_by_sn_.find(sn);
  if (it == node_by_sn_.end()) return std::nullopt;
  return it->second;
}

void FaultCentre::FollowUp(const PublicFaultDesk::Outcome& outcome) {
  for (const std::string& node : outcome.changed_nodes) {
    controller_.Enqueue(FaultCentreKey::Device(node));
  }
  if (outcome.next_expiry_ms.has_value()) {
    ScheduleAt(FaultCentreKey::Of(Kind::kPublicFaultExpiry), *outcome.next_expiry_ms);
  }
  if (outcome.statistic_due_ms.has_value()) {
    ScheduleAt(FaultCentreKey::Of(Kind::kStatistic), *outcome.statistic_due_ms);
  }
}

PublicFaultVerdict FaultCentre::SendPublicFault(const PublicFaultRequest& request) {
  // The desk's own lock only: a request does not wait for the node pipelines.
  PublicFaultDesk::Outcome outcome = public_faults_.Apply(
      request, "grpc", [this](const std::string& sn) { return NodeBySerial(sn); });
  FollowUp(outcome);
  return std::move(outcome.verdict);
}

void FaultCentre::HandlePublicFaultCm(const std::string& ns_name) {
  PendingObject pending = TakePending(FaultCentreKey::PublicFaultCm(ns_name));
  // Deleting the CM does nothing: faults must be recovered explicitly (§1.8).
  if (!pending.has_value() || *pending == nullptr) return;
  FollowUp(
      public_faults_.ApplyConfigMap(ns_name, ConfigMapStringData(**pending),
                                    [this](const std::string& sn) { return NodeBySerial(sn); }));
}

std::optional<int64_t> FaultCentre::ExpirePublicFaults() {
  std::optional<int64_t> next_due;
  for (const std::string& node : public_faults_.Expire(&next_due)) {
    controller_.Enqueue(FaultCentreKey::Device(node));
  }
  controller_.Enqueue(FaultCentreKey::Of(Kind::kStatistic));
  return next_due;
}

// ---- manual separation ----

std::optional<int64_t> FaultCentre::RunManualTriage() {
  auto exists = [this](const std::string& job_id) {
    mu_.AssertHeld();
    const FaultJob* job = index_.Job(job_id);
    return job != nullptr && job->pod_group_exists;
  };
  std::optional<int64_t> next_due;
  for (const std::string& node : manual_.Triage(exists, &next_due)) {
    controller_.Enqueue(FaultCentreKey::Device(node));
  }
  return next_due;
}

void FaultCentre::RunManualConfig() {
  if (!manual_.ReadPolicy()) return;
  // Switched on or off: every node's pipeline runs again.
  absl::MutexLock lock(&mu_);
  for (const auto& [node, ns] : nodes_) {
    if (ns.device_original.has_value()) controller_.Enqueue(FaultCentreKey::Device(node));
  }
}

}  // namespace clusterd::cluster
