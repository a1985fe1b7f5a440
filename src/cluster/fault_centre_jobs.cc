// The fault centre's job mapping: the index of which job uses which node and NPU (from the job
// registry), each job's fault snapshot for the sinks, the relation faults' pod labels, and the
// business plane's retry reports.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_centre_rejects.h"
#include "common/log.h"

namespace clusterd::cluster {
namespace {

constexpr char kFaultCentreJobsLog[] = "fault-centre";

}  // namespace

std::optional<int64_t> FaultCentre::HandleJob(const std::string& job_id,
                                              std::vector<JobFaultRanks>* deliveries,
                                              std::vector<PodLabelPatch>* patches) {
  if (building_initial_view_) {  // after every node's pipelines (Start)
    deferred_jobs_.insert(job_id);
    return std::nullopt;
  }
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
  JobFaultRankResult result =
      ComputeJobFaultRanks(*job, view, relation, LiveRetryBook(job_id), now);
  std::optional<int64_t> due = result.next_due_ms;
  if (relation.next_due_ms.has_value() && (!due.has_value() || *relation.next_due_ms < *due)) {
    due = relation.next_due_ms;
  }
  const bool deliver = st.delivered ? result.faults != st.last : !result.faults.Empty();
  if (!deliver) return due;
  for (const FaultCodeEvent& e : FaultCodeEvents(result.faults, &st.digest, now)) {
    LogInfo(kFaultCentreJobsLog, "Job Event",
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
  // Only what changed since the last refresh is read: at 20,000 jobs, reading every job's entry
  // on each change took a fifth of clusterd's CPU while jobs registered, and held process-fault
  // reports back.
  JobRegistry::FaultViewChanges changes = registry_->FaultViewChangesSince(index_cursor_);
  index_cursor_ = changes.cursor;
  auto same = [](const JobRegistry::FaultSnapshotEntry& a,
                 const JobRegistry::FaultSnapshotEntry& b) {
    return a.record == b.record && a.pod_group == b.pod_group && a.pods == b.pods;
  };
  // A job is built again only when its registry objects changed (compared by pointer: the
  // registry replaces an object it changes).
  std::vector<FaultJobSource> sources;  // point into index_source_'s entries
  std::set<std::string> seen;
  for (JobRegistry::FaultSnapshotEntry& e : changes.jobs) {
    if (e.record == nullptr) continue;
    const std::string id = e.record->job_id;
    if (changes.everything) seen.insert(id);
    auto old = index_source_.find(id);
    if (old != index_source_.end() && same(old->second, e)) continue;
    FaultJobSource& src = sources.emplace_back();
    src.record = e.record.get();
    src.pod_group = e.pod_group.get();
    for (const auto& p : e.pods) src.pods.push_back(p.get());
    index_source_.insert_or_assign(id, std::move(e));
  }
  // Each job is built from its registry objects alone: the thousands of a start are built on
  // every core (the runner keeps a few on this thread).
  std::vector<FaultJob> changed(sources.size());
  const std::function<void(size_t)> build = [&](size_t i) {
    changed[i] = BuildFaultJob(sources[i]);
  };
  if (options_.parallel_for && sources.size() > 1) {
    options_.parallel_for(sources.size(), build);
  } else {
    for (size_t i = 0; i < sources.size(); ++i) build(i);
  }
  std::vector<std::string> removed;
  if (changes.everything) {
    for (const auto& [id, e] : index_source_) {
      if (!seen.contains(id)) removed.push_back(id);
    }
  } else {
    for (const std::string& id : changes.gone) {
      if (index_source_.contains(id)) removed.push_back(id);
    }
  }
  for (const std::string& id : removed) index_source_.erase(id);
  if (changed.empty() && removed.empty()) return;  // nothing the index is built from changed
  absl::MutexLock lock(&mu_);
  UpdateIndex(std::move(changed), removed, gone);
}

void FaultCentre::UpdateIndex(std::vector<FaultJob> changed,
                              const std::vector<std::string>& removed,
                              std::vector<std::string>* gone) {
  std::set<std::string> nodes_to_redo;
  for (FaultJob& job : changed) {
    const FaultJob* old = index_.Job(job.job_id);
    if (old != nullptr && *old == job) continue;
    controller_.Enqueue(FaultCentreKey::Job(job.job_id));
    for (const std::string& n : index_.NodesOf(job)) nodes_to_redo.insert(n);
    if (old != nullptr) {
      for (const std::string& n : index_.NodesOf(*old)) nodes_to_redo.insert(n);
    }
    index_.Put(std::move(job));
  }
  for (const std::string& id : removed) {
    const FaultJob* old = index_.Job(id);
    if (old == nullptr) continue;
    gone->push_back(id);
    jobs_.erase(id);
    retry_.erase(id);
    not_retryable_.erase(id);
    mindie_policies_.erase(id);
    for (const std::string& n : index_.NodesOf(*old)) nodes_to_redo.insert(n);
    index_.Erase(id);
  }
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
      LogWarn(kFaultCentreJobsLog, "labelling pod failed",
              {{"pod", absl::StrCat(targets[i].first, "/", targets[i].second)}, {"error", last}});
    } else {
      LogInfo(kFaultCentreJobsLog, "pod labelled",
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

RetryBook FaultCentre::LiveRetryBook(const std::string& job_id) const {
  RetryBook book;
  auto reports = retry_.find(job_id);
  if (reports == retry_.end()) return book;
  for (const auto& [npu, report] : reports->second) {
    const std::optional<int64_t> mark = NotRetryableSince(job_id, npu.first, npu.second);
    if (!mark.has_value() || report.report_ms > *mark) book.emplace(npu, report);
  }
  return book;
}

std::optional<int64_t> FaultCentre::NotRetryableSince(const std::string& job_id,
                                                      const std::string& node, int64_t id) const {
  auto job = not_retryable_.find(job_id);
  if (job == not_retryable_.end()) return std::nullopt;
  auto it = job->second.find({node, id});
  if (it == job->second.end()) return std::nullopt;
  return it->second;
}

void FaultCentre::ReportNotRetryable(const std::string& job_id,
                                     const std::vector<int64_t>& pod_ranks) {
  constexpr std::string_view kKind = "not-retryable";
  absl::MutexLock lock(&mu_);
  const FaultJob* job = index_.Job(job_id);
  if (job == nullptr) {
    RejectFaultInput(kKind, "unknown_job",
                     absl::StrCat("not-retryable report for job ", job_id,
                                  " refused: the fault centre does not know the job"));
    return;
  }
  const int64_t now = NowMs();
  std::vector<int64_t> marked;
  for (int64_t pod_rank : pod_ranks) {
    const FaultJobPod* pod = nullptr;
    for (const FaultJobPod& p : job->pods) {
      if (p.rank == pod_rank) pod = &p;
    }
    if (pod == nullptr) {
      RejectFaultInput(kKind, "unknown_rank",
                       absl::StrCat("not-retryable report for job ", job_id, " pod rank ", pod_rank,
                                    " refused: the job has no pod of that rank"));
      continue;
    }
    // Something to mark: a device fault on one of the pod's NPUs, or a business retry report.
    bool has_fault = false;
    auto ns = nodes_.find(pod->node);
    auto reports = retry_.find(job_id);
    for (int64_t id : pod->npus) {
      if (reports != retry_.end() && reports->second.count({pod->node, id}) != 0) has_fault = true;
      if (ns == nodes_.end() || !ns->second.device_original.has_value()) continue;
      const DeviceRecord& record = *ns->second.device_original;
      const std::string name = record.NpuName(id);
      for (const NpuFault& f : record.faults) {
        if (f.npu_name == name) has_fault = true;
      }
    }
    if (pod->node.empty() || !has_fault) {
      RejectFaultInput(kKind, "no_fault",
                       absl::StrCat("not-retryable report for job ", job_id, " pod rank ", pod_rank,
                                    " refused: the pod has no NPU fault to mark"));
      continue;
    }
    for (int64_t id : pod->npus) not_retryable_[job_id][{pod->node, id}] = now;
    controller_.Enqueue(FaultCentreKey::Device(pod->node));
    marked.push_back(pod_rank);
  }
  if (marked.empty()) return;
  controller_.Enqueue(FaultCentreKey::Job(job_id));
  LogInfo(kFaultCentreJobsLog, "pods reported not retryable",
          {{"job", job_id}, {"pods", absl::StrJoin(marked, ",")}});
}

void FaultCentre::SetStressTestNodes(std::set<std::string> nodes) {
  absl::MutexLock lock(&mu_);
  for (const std::string& n : stress_nodes_) controller_.Enqueue(FaultCentreKey::Device(n));
  for (const std::string& n : nodes) controller_.Enqueue(FaultCentreKey::Device(n));
  stress_nodes_ = std::move(nodes);
}

}  // namespace clusterd::cluster
