// The fault centre's node pipelines: a node's device-info (NPUs and switch), node-info (NodeD)
// and Kubernetes Node, each run through its processors and republished as the node's
// cluster-info entries.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_info_render.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_centre_rejects.h"
#include "cluster/node_object.h"
#include "common/json_util.h"

namespace clusterd::cluster {

bool FaultCentre::NodeReady(const NodeState* ns) const {
  if (ns != nullptr && ns->k8s_exists) return ns->k8s_ready;
  switch (options_.missing_node) {
    case Options::MissingNode::kNotReady:
      return false;
    case Options::MissingNode::kReady:
      return true;
    case Options::MissingNode::kAuto:
      return k8s_nodes_ == 0;
  }
  return true;
}

void FaultCentre::QueueJobsOn(const std::string& node, std::vector<std::string>* jobs) const {
  for (const std::string& id : index_.JobsOn(node)) jobs->push_back(id);
}

void FaultCentre::PrepareDeviceIntakes() {
  std::vector<std::pair<std::string, std::shared_ptr<const store::Object>>> pending;
  {
    absl::MutexLock lock(&pending_mu_);
    for (const auto& [encoded, object] : pending_) {
      std::optional<FaultCentreKey> key = FaultCentreKeyCodec::Decode(encoded);
      if (key.has_value() && key->kind == Kind::kDeviceInfo && object != nullptr) {
        pending.emplace_back(key->name, object);
      }
    }
  }
  // Each ConfigMap is decoded with the options alone (no state of the centre), so the decoding
  // runs unlocked; the results are handed over under mu_.
  std::vector<absl::StatusOr<DeviceIntake>> decoded(pending.size());
  const std::function<void(size_t)> decode = [&](size_t i) {
    decoded[i] = DeviceIntakeFromConfigMap(*pending[i].second, options_.intake, options_.naming);
  };
  if (options_.parallel_for) {
    options_.parallel_for(pending.size(), decode);
  } else {
    for (size_t i = 0; i < pending.size(); ++i) decode(i);
  }
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < pending.size(); ++i) {
    prepared_intakes_.insert_or_assign(
        pending[i].first, PreparedIntake{std::move(pending[i].second), std::move(decoded[i])});
  }
}

absl::StatusOr<DeviceIntake> FaultCentre::DecodeDeviceInfo(
    const std::string& node, const std::shared_ptr<const store::Object>& cm) {
  if (auto it = prepared_intakes_.find(node); it != prepared_intakes_.end()) {
    PreparedIntake prepared = std::move(it->second);
    prepared_intakes_.erase(it);
    if (prepared.config_map == cm) return std::move(prepared.intake);
  }
  return DeviceIntakeFromConfigMap(*cm, options_.intake, options_.naming);
}

std::optional<int64_t> FaultCentre::HandleDevice(const std::string& node,
                                                 std::vector<std::string>* jobs) {
  PendingObject pending = TakePending(FaultCentreKey::Device(node));
  NodeState& ns = nodes_[node];
  const int64_t now = NowMs();
  if (pending.has_value()) {
    if (*pending == nullptr) {  // deleted
      if (ns.device_original.has_value()) --device_records_;
      refused_device_nodes_.erase(node);
      refused_nodes_gauge_.Set(static_cast<double>(refused_device_nodes_.size()));
      if (ns.device_original.has_value()) {
        publisher_.Remove(ClusterInfoPublisher::Kind::kDevice, ns.device_original->cm_name);
      }
      if (ns.switch_original.has_value()) {
        publisher_.Remove(ClusterInfoPublisher::Kind::kSwitch, ns.switch_original->cm_name);
      }
      ns.device_original.reset();
      ns.device_out.reset();
      ns.switch_original.reset();
      ns.switch_out.reset();
      ns.device_state = DeviceCycleState{};
      device_nodes_gauge_.Set(static_cast<double>(device_records_));
      QueueJobsOn(node, jobs);
      return std::nullopt;
    }
    absl::StatusOr<DeviceIntake> intake = DecodeDeviceInfo(node, *pending);
    if (!intake.ok()) {
      RejectFaultInput("device-info", IntakeRejectionReason(intake.status()),
                       absl::StrCat("device-info ConfigMap ignored, last good state kept: ",
                                    intake.status().message()));
      return std::nullopt;
    }
    for (const std::string& d : intake->dropped) {
      RejectFaultInput("device-info", "invalid_entry",
                       absl::StrCat("configmap ", intake->device.cm_name, ": dropped ", d));
    }
    if (!ns.device_original.has_value() && device_records_ >= options_.max_device_records) {
      RejectFaultInput(
          "device-info", "too_many_records",
          absl::StrCat("configmap ", intake->device.cm_name, " ignored: the centre holds ",
                       device_records_, " device records (--max-nodes)"));
      refused_device_nodes_.insert(node);
      refused_nodes_gauge_.Set(static_cast<double>(refused_device_nodes_.size()));
      return std::nullopt;
    }
    if (refused_device_nodes_.erase(node) > 0) {
      refused_nodes_gauge_.Set(static_cast<double>(refused_device_nodes_.size()));
    }
    CarryReceiveTimes(ns.device_original ? &*ns.device_original : nullptr, intake->device, now);
    if (intake->switch_record.has_value()) {
      CarryReceiveTimes(ns.switch_original ? &*ns.switch_original : nullptr, *intake->switch_record,
                        now);
    } else if (ns.switch_original.has_value()) {
      publisher_.Remove(ClusterInfoPublisher::Kind::kSwitch, ns.switch_original->cm_name);
      ns.switch_out.reset();
    }
    if (!ns.device_original.has_value()) ++device_records_;
    // A node whose rank-0 pod runs a recover-in-place job decides for the job's other nodes.
    for (const std::string& id : index_.JobsOn(node)) {
      const FaultJob* job = index_.Job(id);
      if (job == nullptr || !job->policy.recover_in_place) continue;
      for (const FaultJobPod& p : job->pods) {
        if (p.rank == 0 && p.node == node) {
          for (const std::string& other : index_.NodesOf(*job)) {
            if (other != node) controller_.Enqueue(FaultCentreKey::Device(other));
          }
        }
      }
    }
    ns.device_original = std::move(intake->device);
    ns.switch_original = std::move(intake->switch_record);
    device_nodes_gauge_.Set(static_cast<double>(device_records_));
  }
  if (building_initial_view_) {  // the pipelines run once every key is in (Start)
    deferred_nodes_.insert(node);
    return std::nullopt;
  }
  return ProcessNode(node, ns, jobs);
}

std::optional<int64_t> FaultCentre::ProcessNode(const std::string& node, NodeState& ns,
                                                std::vector<std::string>* jobs) {
  const int64_t now = NowMs();
  ForgetOldRetryReports(now);
  PrepareNodeRun(node);
  return ApplyNodeRun(node, ns, ComputeNodeRun(node, ns, now), jobs);
}

void FaultCentre::RunDeferredNodePipelines() {
  std::vector<std::string> jobs;
  {
    absl::MutexLock lock(&mu_);
    building_initial_view_ = false;
    const int64_t now = NowMs();
    ForgetOldRetryReports(now);
    struct Item {
      const std::string* node;
      NodeState* state;
      NodeRun run;
    };
    std::vector<Item> items;
    items.reserve(deferred_nodes_.size());
    for (const std::string& node : deferred_nodes_) {
      auto it = nodes_.find(node);
      if (it == nodes_.end()) continue;
      PrepareNodeRun(node);
      items.push_back(Item{&node, &it->second, {}});
    }
    // Each item writes only its own node's cycle state and reads what PrepareNodeRun left; this
    // thread holds mu_ until every item is done, so the centre's state stays as it is.
    const std::function<void(size_t)> compute = [&](size_t i) {
      mu_.AssertReaderHeld();
      items[i].run = ComputeNodeRun(*items[i].node, *items[i].state, now);
    };
    if (options_.parallel_for) {
      options_.parallel_for(items.size(), compute);
    } else {
      for (size_t i = 0; i < items.size(); ++i) compute(i);
    }
    // Published in node order, as the keys would have been.
    for (Item& item : items) {
      if (std::optional<int64_t> due =
              ApplyNodeRun(*item.node, *item.state, std::move(item.run), &jobs)) {
        ScheduleAt(FaultCentreKey::Device(*item.node), *due);
      }
    }
    deferred_nodes_.clear();
    jobs.insert(jobs.end(), deferred_jobs_.begin(), deferred_jobs_.end());
    deferred_jobs_.clear();
  }
  for (std::string& id : jobs) controller_.Enqueue(FaultCentreKey::Job(std::move(id)));
}

DeviceCycleInput FaultCentre::DeviceInputFor(const std::string& node, const NodeState& ns,
                                             int64_t now) const {
  const DeviceRecord& record = *ns.device_original;
  DeviceCycleInput in;
  in.now_ms = now;
  in.public_faults = public_faults_.OnNode(node);
  in.stress_test = stress_nodes_.count(node) != 0;
  in.manual_separation_enabled = manual_.Enabled();
  if (in.manual_separation_enabled) in.manual_npus = manual_.NpusOn(node);
  in.retry.switch_link_down_ms = ns.switch_state.link_down_ms;
  auto uses = index_.npus_by_node.find(node);
  if (uses == index_.npus_by_node.end()) return in;
  for (const auto& [id, use] : uses->second) {
    const std::string npu = record.NpuName(id);
    in.used_npus.insert(npu);
    in.job_of_npu[npu] = use.job_id;
    const FaultJob* job = index_.Job(use.job_id);
    if (job == nullptr) continue;
    const FaultJobPolicy& policy = job->policy;
    if (auto mindie = mindie_policies_.find(job->job_id); mindie != mindie_policies_.end()) {
      in.custom_filter.rules_by_npu[npu] = &mindie->second;  // PrepareNodeRun's
    } else if (!policy.code_rules.empty() || !policy.level_rules.empty()) {
      in.custom_filter.rules_by_npu[npu] = &policy;
    }
    if (policy.retry) {
      in.retry.retry_npus.insert(npu);
      const std::optional<int64_t> mark = NotRetryableSince(job->job_id, node, id);
      if (mark.has_value()) in.retry.not_retryable_ms[npu] = *mark;
      if (auto jr = retry_.find(job->job_id); jr != retry_.end()) {
        if (auto r = jr->second.find({node, id}); r != jr->second.end()) {
          // A report made before the pod was reported not retryable no longer counts for the
          // retry window; UceAccompany still correlates its AIC/AIV faults with it.
          if (!mark.has_value() || r->second.report_ms > *mark) in.retry.reports[npu] = r->second;
          if (r->second.type == 0) in.business_uce_ms[npu] = r->second.report_ms;
        }
      }
    }
    if (policy.recover_in_place && use.pod_rank.has_value()) {
      RecoverInPlaceNpu rip;
      rip.job_id = job->job_id;
      rip.pod_rank = *use.pod_rank;
      rip.pod_uid = use.pod_uid;
      rip.allow_sub_health = policy.sub_healthy_strategy == "ignore";
      // Reported not retryable after one of the pod's faults on this node arrived: the business
      // plane wants them reported (the same verdict for every NPU of the pod). Only a job with a
      // mark pays for the walk over its pods.
      static const std::vector<FaultJobPod> kNoPods;
      const bool marked = not_retryable_.contains(job->job_id);
      for (const FaultJobPod& p : marked ? job->pods : kNoPods) {
        if (p.uid != use.pod_uid || p.node != node) continue;
        for (int64_t pid : p.npus) {
          const std::optional<int64_t> mark = NotRetryableSince(job->job_id, node, pid);
          if (!mark.has_value()) continue;
          const std::string name = record.NpuName(pid);
          for (const NpuFault& f : record.faults) {
            if (f.npu_name == name && f.received_ms <= *mark) rip.report_requested = true;
          }
        }
      }
      for (const FaultJobPod& p : job->pods) {
        if (p.rank != 0 || p.uid == use.pod_uid || p.node.empty()) continue;
        auto n0 = nodes_.find(p.node);
        if (n0 == nodes_.end() || !n0->second.device_original.has_value()) continue;
        std::set<std::string> names;
        for (int64_t pid : p.npus) names.insert(n0->second.device_original->NpuName(pid));
        rip.rank0_eligible = PodEligibleForRecoverInPlace(*n0->second.device_original, names,
                                                          rip.allow_sub_health, now);
      }
      in.recover_in_place.npus[npu] = rip;
    }
  }
  return in;
}

void FaultCentre::ForgetOldRetryReports(int64_t now) {
  // Forget business reports, and not-retryable reports, older than 60 s (recovery-protocol.md
  // §8.3, §9.8).
  for (auto& [job, reports] : retry_) {
    for (auto it = reports.begin(); it != reports.end();) {
      it = now - it->second.report_ms > kRetryReportForgetMs ? reports.erase(it) : std::next(it);
    }
  }
  for (auto job = not_retryable_.begin(); job != not_retryable_.end();) {
    for (auto it = job->second.begin(); it != job->second.end();) {
      it = now - it->second > kRetryReportForgetMs ? job->second.erase(it) : std::next(it);
    }
    job = job->second.empty() ? not_retryable_.erase(job) : std::next(job);
  }
}

void FaultCentre::PrepareNodeRun(const std::string& node) {
  // The custom filter of a MindIE server job whose instance is subscribed to the Fault service
  // also hides RestartRequest faults for 60 s (§7.3 step 2): its policy with that rule added.
  auto uses = index_.npus_by_node.find(node);
  if (uses == index_.npus_by_node.end()) return;
  const std::string* last = nullptr;
  for (const auto& [id, use] : uses->second) {
    if (last != nullptr && *last == use.job_id) continue;  // the same job's next NPU
    last = &use.job_id;
    const FaultJob* job = index_.Job(use.job_id);
    if (job == nullptr) continue;
    const FaultJobPolicy& policy = job->policy;
    const bool mindie_filter = policy.mindie_server && fault_subscribed_ &&
                               !job->multi_instance_job_id.empty() &&
                               fault_subscribed_(job->multi_instance_job_id);
    if (!mindie_filter) {
      mindie_policies_.erase(job->job_id);
      continue;
    }
    FaultJobPolicy& effective = mindie_policies_[job->job_id];
    effective = policy;
    effective.level_rules.push_back(
        CustomFilterRule{std::string(model::kLevelRestartRequest), kCustomFilterDefaultSeconds});
  }
}

FaultCentre::NodeRun FaultCentre::ComputeNodeRun(const std::string& node, NodeState& ns,
                                                 int64_t now) const {
  NodeRun run;
  // The switch first: the device pipeline's Retry stage reads the link-down time it keeps.
  if (ns.switch_original.has_value()) {
    SwitchCycleInput in;
    in.now_ms = now;
    for (const std::string& id : index_.JobsOn(node)) {
      if (const FaultJob* job = index_.Job(id);
          job != nullptr && (!job->policy.code_rules.empty() || !job->policy.level_rules.empty())) {
        in.policies.push_back(&job->policy);
      }
    }
    auto uses = index_.npus_by_node.find(node);
    in.any_npu_used = uses != index_.npus_by_node.end() && !uses->second.empty();
    SwitchCycleOutput out = RunSwitchCycle(*ns.switch_original, ns.switch_state, in);
    run.switch_entry = RenderSwitchEntry(out.record);
    run.switch_out = std::move(out);
  }
  if (ns.device_original.has_value()) {
    DeviceCycleInput input = DeviceInputFor(node, ns, now);
    DeviceCycleOutput out = RunDeviceCycle(*ns.device_original, ns.device_state, input);
    // A re-run that changes nothing keeps the UpdateTime of the previous result, so that a
    // node is not republished just because it was looked at again.
    if (ns.device_out.has_value() &&
        out.record.update_time_s != ns.device_original->update_time_s) {
      DeviceRecord same = out.record;
      same.update_time_s = ns.device_out->record.update_time_s;
      if (same == ns.device_out->record) out.record.update_time_s = same.update_time_s;
    }
    run.device_changed = !ns.device_out.has_value() || ns.device_out->record != out.record ||
                         ns.device_out->custom_hidden != out.custom_hidden ||
                         ns.device_out->in_place_hidden != out.in_place_hidden ||
                         ns.device_out->force_added != out.force_added;
    run.device_entry = RenderDeviceEntry(out.record);
    run.device_out = std::move(out);
  }
  return run;
}

std::optional<int64_t> FaultCentre::ApplyNodeRun(const std::string& node, NodeState& ns,
                                                 NodeRun run, std::vector<std::string>* jobs) {
  std::optional<int64_t> due;
  const auto earliest = [&due](std::optional<int64_t> d) {
    if (d.has_value() && (!due.has_value() || *d < *due)) due = d;
  };
  if (run.switch_out.has_value()) {
    earliest(run.switch_out->next_due_ms);
    publisher_.Upsert(ClusterInfoPublisher::Kind::kSwitch, run.switch_out->record.cm_name,
                      std::move(run.switch_entry));
    ns.switch_out = std::move(run.switch_out->record);
  }
  if (run.device_out.has_value()) {
    DeviceCycleOutput& out = *run.device_out;
    if (!out.occurrences.empty()) {
      if (auto triage = manual_.Submit(out.occurrences)) {
        ScheduleAt(FaultCentreKey::Of(Kind::kManualTriage), *triage);
      }
    }
    earliest(out.next_due_ms);
    publisher_.Upsert(ClusterInfoPublisher::Kind::kDevice, out.record.cm_name,
                      std::move(run.device_entry));
    ns.device_out = std::move(out);
    if (run.device_changed) QueueJobsOn(node, jobs);
  }
  return due;
}

void FaultCentre::HandleNodeInfo(const std::string& node, std::vector<std::string>* jobs) {
  PendingObject pending = TakePending(FaultCentreKey::NodeInfo(node));
  NodeState& ns = nodes_[node];
  if (pending.has_value()) {
    if (*pending == nullptr) {
      if (ns.node_original.has_value()) {
        publisher_.Remove(ClusterInfoPublisher::Kind::kNode, ns.node_original->cm_name);
      }
      ns.node_original.reset();
      ns.node_out.reset();
      QueueJobsOn(node, jobs);
      return;
    }
    absl::StatusOr<NodeRecord> record = NodeRecordFromConfigMap(**pending, options_.intake);
    if (!record.ok()) {
      RejectFaultInput("node-info", IntakeRejectionReason(record.status()),
                       absl::StrCat("node-info ConfigMap ignored, last good state kept: ",
                                    record.status().message()));
      return;
    }
    ns.node_original = *std::move(record);
  }
  if (!ns.node_original.has_value()) return;
  const bool used = index_.npus_by_node.count(node) != 0 && !index_.npus_by_node.at(node).empty();
  NodeRecord out = RunNodeCycle(*ns.node_original, used);
  const bool changed = !ns.node_out.has_value() || *ns.node_out != out;
  publisher_.Upsert(ClusterInfoPublisher::Kind::kNode, out.cm_name, RenderNodeEntry(out));
  ns.node_out = std::move(out);
  if (changed) QueueJobsOn(node, jobs);
}

void FaultCentre::HandleK8sNode(const std::string& node, std::vector<std::string>* jobs) {
  PendingObject pending = TakePending(FaultCentreKey::K8sNode(node));
  if (!pending.has_value()) return;
  NodeState& ns = nodes_[node];
  const bool was_ready = NodeReady(&ns);
  if (!ns.sn.empty()) {
    absl::MutexLock sn_lock(&sn_mu_);
    node_by_sn_.erase(ns.sn);
  }
  if (*pending == nullptr) {
    if (ns.k8s_exists) --k8s_nodes_;
    ns.k8s_exists = false;
    ns.k8s_ready = false;
    ns.sn.clear();
  } else {
    if (!ns.k8s_exists) ++k8s_nodes_;
    ns.k8s_exists = true;
    ns.k8s_ready = NodeIsReady(**pending);
    ns.ip = NodeInternalIp(**pending);
    ns.sn = NodeSerial(**pending);
    if (!ns.sn.empty()) {
      absl::MutexLock sn_lock(&sn_mu_);
      node_by_sn_[ns.sn] = node;
    }
  }
  if (NodeReady(&ns) != was_ready) QueueJobsOn(node, jobs);
}

JobNodeView FaultCentre::ViewOf(const std::string& node) const {
  JobNodeView v;
  auto it = nodes_.find(node);
  v.node_ready = NodeReady(it == nodes_.end() ? nullptr : &it->second);
  if (it == nodes_.end()) return v;
  const NodeState& ns = it->second;
  if (ns.device_out.has_value()) {
    v.device = &ns.device_out->record;
    v.custom_hidden = &ns.device_out->custom_hidden;
    v.in_place_hidden = &ns.device_out->in_place_hidden;
    v.force_added = &ns.device_out->force_added;
  }
  if (ns.switch_out.has_value()) v.switch_record = &*ns.switch_out;
  if (ns.node_out.has_value()) v.node_record = &*ns.node_out;
  return v;
}

}  // namespace clusterd::cluster
