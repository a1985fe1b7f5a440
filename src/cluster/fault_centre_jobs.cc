// The fault centre's job mapping: the index of which job uses which node and NPU (from the job
// registry), each job's fault snapshot for the sinks, the relation faults' pod labels, and the
// business plane's retry reports.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cluster/fault_centre.h"
#include "common/log.h"

namespace clusterd::cluster {
namespace {

constexpr char kComponent[] = "fault-centre";

}  // namespace

std::optional<int64_t> FaultCentre::HandleJob(const std::string& job_id,
                                              std::vector<JobFaultRanks>* deliveries,
                                              std::vector<PodLabelPatch>* patches) {
  const FaultJob* job = index_.Job(job_id);
  if (job == nullptr) return std::nullopt;
  const int64_t now = NowMs();
  JobState& st = jobs_[job_id];
  NodeViewFn view = [this](const std::string& node) {
    mu_.AssertHeld();
    return ViewOf(node);
  };
  RelationOutput relation;
  if (!job->servers.empty()) {
    relation = RunRelationFault(*job, relation_config_, view, st.relation, now);
  }
  for (const PodLabelPatch& p : relation.patches) patches->push_back(p);
  RetryBook book;
  if (auto r = retry_.find(job_id); r != retry_.end()) book = r->second;
  JobFaultRankResult result = ComputeJobFaultRanks(*job, view, relation, book, now);
  std::optional<int64_t> due = result.next_due_ms;
  if (relation.next_due_ms.has_value() && (!due.has_value() || *relation.next_due_ms < *due)) {
    due = relation.next_due_ms;
  }
  const bool deliver = st.delivered ? result.faults != st.last : !result.faults.Empty();
  if (!deliver) return due;
  for (const FaultCodeEvent& e : FaultCodeEvents(result.faults, &st.digest, now)) {
    LogInfo(kComponent, "Job Event",
            {{"job", job_id},
             {"faultCode", e.fault_code},
             {"timestamp", e.timestamp_ms},
             {"nodeName", e.node_name},
             {"deviceId", e.device_id},
             {"faultLevel", e.fault_level}});
  }
  st.last = result.faults;
  st.delivered = true;
  deliveries->push_back(std::move(result.faults));
  return due;
}

void FaultCentre::RefreshIndex(std::vector<std::string>* gone) {
  if (registry_ == nullptr) return;
  std::vector<JobRegistry::FaultSnapshotEntry> snapshot = registry_->FaultSnapshot();
  auto same = [](const JobRegistry::FaultSnapshotEntry& a,
                 const JobRegistry::FaultSnapshotEntry& b) {
    return a.record == b.record && a.pod_group == b.pod_group && a.pods == b.pods;
  };
  if (snapshot.size() == index_source_.size() &&
      std::equal(snapshot.begin(), snapshot.end(), index_source_.begin(), same)) {
    return;  // nothing the index is built from changed
  }
  std::vector<FaultJobSource> sources;
  sources.reserve(snapshot.size());
  for (const auto& e : snapshot) {
    FaultJobSource src;
    src.record = e.record.get();
    src.pod_group = e.pod_group.get();
    for (const auto& p : e.pods) src.pods.push_back(p.get());
    sources.push_back(std::move(src));
  }
  FaultJobIndex fresh = BuildFaultJobIndex(sources);
  index_source_ = std::move(snapshot);
  absl::MutexLock lock(&mu_);
  SwapIndex(std::move(fresh), gone);
}

void FaultCentre::SwapIndex(FaultJobIndex fresh, std::vector<std::string>* gone) {
  std::set<std::string> nodes_to_redo;
  for (const auto& [id, job] : fresh.jobs) {
    const FaultJob* old = index_.Job(id);
    if (old != nullptr && *old == job) continue;
    controller_.Enqueue(FaultCentreKey::Job(id));
    for (const std::string& n : fresh.NodesOf(job)) nodes_to_redo.insert(n);
    if (old != nullptr) {
      for (const std::string& n : index_.NodesOf(*old)) nodes_to_redo.insert(n);
    }
  }
  for (const auto& [id, job] : index_.jobs) {
    if (fresh.jobs.count(id) != 0) continue;
    gone->push_back(id);
    jobs_.erase(id);
    retry_.erase(id);
    mindie_policies_.erase(id);
    for (const std::string& n : index_.NodesOf(job)) nodes_to_redo.insert(n);
  }
  index_ = std::move(fresh);
  for (const std::string& n : nodes_to_redo) {
    if (auto it = nodes_.find(n); it != nodes_.end()) {
      if (it->second.device_original.has_value()) controller_.Enqueue(FaultCentreKey::Device(n));
      if (it->second.node_original.has_value()) controller_.Enqueue(FaultCentreKey::NodeInfo(n));
    }
  }
}

void FaultCentre::PatchPodLabels(const std::vector<PodLabelPatch>& patches) {
  std::vector<std::pair<std::string, std::string>> targets;  // (ns, name), value
  std::vector<std::string> values;
  {
    absl::MutexLock lock(&mu_);
    for (const PodLabelPatch& p : patches) {
      for (const auto& [id, job] : index_.jobs) {
        for (const FaultJobPod& pod : job.pods) {
          if (pod.uid == p.pod_uid) {
            targets.emplace_back(pod.ns, pod.name);
            values.push_back(p.value);
          }
        }
      }
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    store::Object patch;
    patch["metadata"]["labels"][std::string(kLabelFaultType)] = values[i];
    absl::Status last;
    for (int attempt = 0; attempt < 3; ++attempt) {
      last = store_.Patch({std::string(store::kPods), targets[i].first, targets[i].second}, patch)
                 .status();
      if (last.ok() || absl::IsNotFound(last)) break;
    }
    if (!last.ok()) {
      LogWarn(kComponent, "labelling pod failed",
              {{"pod", absl::StrCat(targets[i].first, "/", targets[i].second)}, {"error", last}});
    } else {
      LogInfo(kComponent, "pod labelled",
              {{"pod", absl::StrCat(targets[i].first, "/", targets[i].second)},
               {"fault-type", values[i]}});
    }
  }
}

// ---- the business plane (recovery-protocol.md §8.2, §8.3) ----

void FaultCentre::ReportBusinessRetry(const std::string& job_id, int64_t rank, int type) {
  absl::MutexLock lock(&mu_);
  const FaultJob* job = index_.Job(job_id);
  if (job == nullptr) return;
  for (const FaultJobServer& s : job->servers) {
    for (const FaultJobDevice& d : s.devices) {
      if (d.rank_id != rank) continue;
      retry_[job_id][{s.node, d.device_id}] = RetryReport{NowMs(), type, std::nullopt};
      controller_.Enqueue(FaultCentreKey::Device(s.node));
      controller_.Enqueue(FaultCentreKey::Job(job_id));
    }
  }
}

void FaultCentre::ReportRetryComplete(const std::string& job_id, int64_t rank) {
  absl::MutexLock lock(&mu_);
  const FaultJob* job = index_.Job(job_id);
  auto reports = retry_.find(job_id);
  if (job == nullptr || reports == retry_.end()) return;
  for (const FaultJobServer& s : job->servers) {
    for (const FaultJobDevice& d : s.devices) {
      if (d.rank_id != rank) continue;
      if (auto r = reports->second.find({s.node, d.device_id}); r != reports->second.end()) {
        r->second.complete_ms = NowMs();
        controller_.Enqueue(FaultCentreKey::Device(s.node));
        controller_.Enqueue(FaultCentreKey::Job(job_id));
      }
    }
  }
}

void FaultCentre::SetStressTestNodes(std::set<std::string> nodes) {
  absl::MutexLock lock(&mu_);
  for (const std::string& n : stress_nodes_) controller_.Enqueue(FaultCentreKey::Device(n));
  for (const std::string& n : nodes) controller_.Enqueue(FaultCentreKey::Device(n));
  stress_nodes_ = std::move(nodes);
}

}  // namespace clusterd::cluster
