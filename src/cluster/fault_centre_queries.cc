// The fault centre's queries (any thread): the fault rows of `clusterctl get faults`, the
// cluster-wide fault signal (§4.6), job snapshots and the published shards.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cluster/fault_centre.h"
#include "model/config_map_names.h"

namespace clusterd::cluster {

// ---- queries ----

std::vector<FaultViewRow> FaultCentre::FaultRows(const std::string& node_filter,
                                                 const std::string& job_filter) const {
  absl::MutexLock lock(&mu_);
  std::vector<FaultViewRow> rows;
  const FaultJob* job = nullptr;
  if (!job_filter.empty()) {
    job = index_.Job(job_filter);
    if (job == nullptr) {
      for (const auto& [id, j] : index_.jobs) {
        if (j.name == job_filter || absl::StrCat(j.ns, "/", j.name) == job_filter) job = &j;
      }
    }
    if (job == nullptr) return rows;
  }
  auto jobs_of = [&](const std::string& node, std::optional<int64_t> npu)
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                       std::vector<std::string> out;
                       if (npu.has_value()) {
                         if (const NpuUse* use = index_.Use(node, *npu)) out.push_back(use->job_id);
                       } else {
                         for (const std::string& id : index_.JobsOn(node)) out.push_back(id);
                       }
                       return out;
                     };
  auto keep = [&](const FaultViewRow& r) {
    if (job == nullptr) return true;
    return std::find(r.jobs.begin(), r.jobs.end(), job->job_id) != r.jobs.end();
  };
  // One node's rows. A query for one node looks it up: the dashboard's feed asks node by node
  // for every node of a changed shard, which was quadratic in the nodes when each query scanned
  // them all (8 s of a 10,000-node start-up).
  auto node_rows = [&](const std::string& node,
                       const NodeState& ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (ns.device_out.has_value()) {
      for (const NpuFault& f : ns.device_out->record.faults) {
        FaultViewRow r;
        r.node = node;
        r.npu = f.npu_name;
        r.code = f.code == kPseudoCodeManuallySeparate ? "" : f.code;
        r.level = f.level;
        r.source = f.fault_type == model::kFaultTypePublicFault              ? "public"
                   : f.fault_type == model::kFaultTypeCardNetworkUnhealthy   ? "network"
                   : f.code.empty() || f.code == kPseudoCodeManuallySeparate ? "manual"
                                                                             : "device";
        r.since_ms = f.received_ms;
        r.jobs = jobs_of(node, ns.device_out->record.PhysicalIdOf(f.npu_name));
        if (keep(r)) rows.push_back(std::move(r));
      }
    }
    if (ns.switch_out.has_value()) {
      const auto& map = ns.switch_out->info.fault_time_and_level_map;
      for (const model::SwitchFaultEvent& e : ns.switch_out->events) {
        FaultViewRow r;
        r.node = node;
        r.npu = "-";
        r.code = e.assembled_fault_code;
        const std::string key =
            absl::StrCat(e.assembled_fault_code, "_", e.switch_chip_id, "_", e.switch_port_id);
        r.level = ns.switch_out->info.fault_level;
        if (map.has_value()) {
          if (auto it = map->find(key); it != map->end()) r.level = it->second.fault_level;
        }
        r.source = "switch";
        if (auto t = ns.switch_out->received_ms.find(key); t != ns.switch_out->received_ms.end()) {
          r.since_ms = t->second;
        }
        r.jobs = jobs_of(node, std::nullopt);
        if (keep(r)) rows.push_back(std::move(r));
      }
    }
    if (ns.node_out.has_value()) {
      for (const model::FaultDev& d : ns.node_out->info.fault_dev_list) {
        for (const std::string& code : d.fault_code) {
          FaultViewRow r;
          r.node = node;
          r.npu = absl::StrCat(d.device_type, "-", d.device_id);
          r.code = code;
          r.level = d.fault_level;
          r.source = "node";
          r.since_ms = ns.node_out->update_time_ms;
          r.jobs = jobs_of(node, std::nullopt);
          if (keep(r)) rows.push_back(std::move(r));
        }
      }
    }
  };
  if (!node_filter.empty()) {
    if (auto it = nodes_.find(node_filter); it != nodes_.end()) node_rows(it->first, it->second);
    return rows;
  }
  for (const auto& [node, ns] : nodes_) node_rows(node, ns);
  return rows;
}

FaultMsgSignal FaultCentre::ClusterSignal() const {
  absl::MutexLock lock(&mu_);
  std::vector<ClusterNodeFaults> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, ns] : nodes_) {
    ClusterNodeFaults n;
    n.node_name = name;
    n.node_ip = ns.ip;
    n.node_sn = ns.sn;
    if (ns.device_out.has_value()) n.device = &ns.device_out->record;
    if (ns.switch_out.has_value()) n.switch_record = &*ns.switch_out;
    if (ns.node_out.has_value()) n.node_record = &*ns.node_out;
    n.node_ready = NodeReady(&ns);
    nodes.push_back(n);
  }
  return BuildClusterFaultSignal(nodes);
}

std::optional<JobFaultRanks> FaultCentre::JobFaults(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.last;
}

bool FaultCentre::JobExists(const std::string& job_id) const {
  {
    absl::MutexLock lock(&mu_);
    if (index_.Job(job_id) != nullptr) return true;
  }
  return registry_ != nullptr && registry_->FindJob(job_id).has_value();
}

bool FaultCentre::JobKnown(const std::string& job_id, const std::string& role) const {
  if (JobExists(job_id)) return true;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, job] : index_.jobs) {
      if (job.multi_instance_job_id == job_id && job.app_type == role) return true;
    }
  }
  if (registry_ == nullptr) return false;
  for (const JobRecord& r : registry_->Jobs()) {
    if (r.multi_instance_job_id == job_id && r.app_type == role) return true;
  }
  return false;
}

std::string FaultCentre::ShardContent(const std::string& cm_name) const {
  return publisher_.ShardContent(cm_name);
}

std::string FaultCentre::ShardOfNode(const std::string& node) const {
  return publisher_.DeviceShardOf(model::DeviceInfoConfigMapName(node));
}

size_t FaultCentre::DeviceShardCount() const { return publisher_.DeviceShardCount(); }

size_t FaultCentre::DeviceNodeCount() const {
  absl::MutexLock lock(&mu_);
  return device_records_;
}

}  // namespace clusterd::cluster
