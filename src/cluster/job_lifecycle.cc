#include "cluster/job_lifecycle.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "cluster/job_status_derivation.h"
#include "common/canonical_json.h"

namespace clusterd::cluster {
namespace {

using model::JobStatus;
using model::PodInfo;

JobStep Unchanged(const char* transition) {
  JobStep step;
  step.transition = transition;
  return step;
}

std::string NonBlank(std::string s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos ? std::string() : s;
}

// pytorch only, once: distinct sharedTorIp of pods with isSharedTor="1" (a JSON array string),
// and the master address (Volcano Job: host IP of the first server; otherwise env MASTER_ADDR).
void InitSharedTorAndMaster(JobRecord& r, const std::vector<const PodInfo*>& pods) {
  if (r.framework != kFrameworkPytorch) return;
  if (!r.master_addr.empty() || !r.shared_tor_ip.empty()) return;
  std::set<std::string> tor_ips;
  for (const PodInfo* p : pods) {
    if (p->Annotation(model::kAnnotationIsSharedTor) == "1") {
      std::string ip = p->Annotation(model::kAnnotationSharedTorIp);
      if (!ip.empty()) tor_ips.insert(ip);
    }
  }
  if (!tor_ips.empty()) {
    std::string json = "[";
    for (const auto& ip : tor_ips) {
      if (json.size() > 1) json.push_back(',');
      json += QuoteGoString(ip);
    }
    json.push_back(']');
    r.shared_tor_ip = json;
  }
  if (r.kind == "Job") {
    if (r.rank_table.server_list.has_value() && !r.rank_table.server_list->empty()) {
      r.master_addr = r.rank_table.server_list->front().host_ip;
    }
  } else {
    for (const PodInfo* p : pods) {
      if (!p->master_addr_env.empty()) {
        r.master_addr = p->master_addr_env;
        break;
      }
    }
  }
}

// The job's replicas (§1.6 M) as of `obs`; without a PodGroup they never shrink.
int64_t ReplicasOf(const JobRecord& r, const JobObservation& obs) {
  if (obs.pod_group.has_value()) return JobReplicas(obs.pod_group->min_member, obs.pods);
  return std::max(r.replicas, JobReplicas(0, obs.pods));
}

std::string ScaleOutLabel(const JobObservation& obs) {
  return obs.pod_group.has_value() ? obs.pod_group->Label(model::kLabelScaleOutType) : "";
}

JobStep Init(const model::PodGroupInfo& pg, const std::vector<const PodInfo*>& pods,
             absl::Time now) {
  JobStep step;
  step.transition = "init";
  step.changes_record = true;
  JobRecord r = NewJobRecord(pg, pods, now);
  r.last_cm_write = now;
  r.pod_count = static_cast<int64_t>(pods.size());
  step.writes.push_back(InitSummaryWrite(r));
  step.signal = SummarySignal(r, model::kJobOperatorAdd, std::string(kInitHcclJson), now);
  step.record = std::move(r);
  return step;
}

JobStep Update(const std::string& job_id, const JobRecord* current, JobStatus status,
               const JobObservation& obs, absl::Time now) {
  JobStep step;
  step.transition = "update";
  step.changes_record = true;
  JobRecord r = current != nullptr ? *current : NewJobRecord(*obs.pod_group, obs.pods, now);
  r.job_id = job_id;
  r.status = status;
  r.pre_deleted = false;
  r.recovered = false;
  r.pod_count = static_cast<int64_t>(obs.pods.size());
  r.replicas = ReplicasOf(r, obs);
  const std::string scale_out = ScaleOutLabel(obs);
  std::vector<const PodInfo*> rank_pods = RankTablePods(obs.pods);
  RankTableBuild build =
      BuildJobRankTable(rank_pods, r.replicas, obs.serials, r.resource_type, scale_out);
  step.problems = std::move(build.problems);
  r.rank_table = std::move(build.table);
  if (r.framework.empty()) r.framework = JobFramework(nullptr, obs.pods);
  if (build.completed_pods == r.replicas) {
    r.previous_servers = *r.rank_table.server_list;
    r.node_names.clear();
    for (const PodInfo* p : rank_pods) r.node_names[p->uid] = p->node_name;
    InitSharedTorAndMaster(r, obs.pods);
  }
  std::vector<std::string> slices = SliceRankTable(r.rank_table);
  r.total_cm_num = std::max<int64_t>(1, static_cast<int64_t>(slices.size()));
  r.rank_table.total = r.total_cm_num;
  r.last_cm_write = now;
  step.writes = UpdateSummaryWrites(r, slices, now);
  step.signal =
      SummarySignal(r, model::kJobOperatorAdd, model::SerializeRankTable(r.rank_table), now);
  step.record = std::move(r);
  return step;
}

JobStep PreDelete(const JobRecord& current, absl::Time now) {
  JobStep step;
  step.transition = "pre-delete";
  step.changes_record = true;
  JobRecord r = current;
  r.pre_deleted = true;
  if (r.status != JobStatus::kComplete) r.status = JobStatus::kFailed;
  r.delete_time = now;
  r.last_cm_write = now;
  r.pod_count = 0;
  r.recovered = false;
  step.writes = PreDeleteSummaryWrites(r, SliceRankTable(r.rank_table));
  step.signal =
      SummarySignal(r, model::kJobOperatorDelete, model::SerializeRankTable(r.rank_table), now);
  step.record = std::move(r);
  return step;
}

// Which pod holds which rank-table place: pod UID -> node.
using TablePods = absl::flat_hash_map<std::string, std::string>;

TablePods PodsOfTable(const model::RankTable& table) {
  TablePods out;
  if (!table.server_list.has_value()) return out;
  for (const auto& s : *table.server_list) out.emplace(s.pod_uid, s.server_name);
  return out;
}

// The rank table no longer names the pods that hold the job's ranks now: a pod it names is gone
// or was replaced, by a hot-switch backup that took over or by a pod recreated faster than a
// reconcile (its deletion and its successor's creation coalesce, so the status never leaves
// `running`). The reference rebuilds on a status change or a hot switch only, which leaves such a
// job's fault mapping on the old node's NPUs (docs/compatibility.md).
bool RankTableOutdated(const JobRecord& current, const JobObservation& obs) {
  if (!current.rank_table.server_list.has_value()) return false;
  const TablePods built = PodsOfTable(current.rank_table);
  const std::vector<const PodInfo*> rank_pods = RankTablePods(obs.pods);
  TablePods now_used;
  for (const PodInfo* p : rank_pods) {
    if (p->allocation.has_value() && !p->allocation->devices.empty() && p->rank_index.has_value()) {
      now_used.emplace(p->uid, p->node_name);
    }
  }
  if (built == now_used) return false;
  // Only the builder knows which pods it leaves out (a duplicate or out-of-range rank index):
  // compare with what it would build, so that such a pod does not rebuild the table every time.
  const RankTableBuild build = BuildJobRankTable(rank_pods, ReplicasOf(current, obs), obs.serials,
                                                 current.resource_type, ScaleOutLabel(obs));
  return PodsOfTable(build.table) != built;
}

JobStep UpdateOperation(std::string_view job_id, const JobRecord* current,
                        const JobObservation& obs, absl::Time now) {
  const bool pg_present = obs.pod_group.has_value();
  if (current == nullptr && !pg_present) return Unchanged("ignored");
  std::optional<JobStatus> previous;
  if (current != nullptr) previous = current->status;
  DerivedJobStatus derived =
      DeriveJobStatus(pg_present, pg_present ? obs.pod_group->min_member : 0, obs.pods, previous);
  const bool rebuild =
      current != nullptr && (current->recovered || RankTableOutdated(*current, obs));
  if (current != nullptr && !rebuild && current->status == derived.status &&
      current->pre_deleted == derived.pre_deleted) {
    return Unchanged("unchanged");
  }
  if (derived.pre_deleted) {
    if (!current->pre_deleted) return PreDelete(*current, now);
    return Unchanged("unchanged");
  }
  if (derived.status == JobStatus::kPending &&
      (current == nullptr || current->status != JobStatus::kPending || current->recovered)) {
    if (pg_present) return Init(*obs.pod_group, obs.pods, now);
  }
  return Update(std::string(job_id), current, derived.status, obs, now);
}

}  // namespace

std::string_view ToString(JobOperation op) {
  switch (op) {
    case JobOperation::kAdd:
      return "add";
    case JobOperation::kUpdate:
      return "update";
    case JobOperation::kPreDelete:
      return "preDelete";
  }
  return "update";
}

std::string JobSid(const model::PodGroupInfo& pg, const std::vector<const PodInfo*>& pods,
                   std::string_view job_id) {
  auto from_labels = [](const auto& labels_owner) -> std::string {
    std::string custom_key = labels_owner.Label(model::kLabelCustomJobKey);
    if (!custom_key.empty()) {
      if (std::string v = NonBlank(labels_owner.Label(custom_key)); !v.empty()) return v;
    }
    return NonBlank(labels_owner.Label(model::kCustomJobId));
  };
  if (std::string v = from_labels(pg); !v.empty()) return v;
  for (const PodInfo* p : pods) {
    if (std::string v = from_labels(*p); !v.empty()) return v;
  }
  return std::string(job_id);
}

std::string JobFramework(const model::PodGroupInfo* pg, const std::vector<const PodInfo*>& pods) {
  if (pg != nullptr) {
    if (std::string f = pg->Label(model::kLabelFramework); !f.empty()) return f;
  }
  for (const PodInfo* p : pods) {
    if (std::string app = p->Label(model::kLabelApp); !app.empty()) return app;
  }
  return "";
}

JobRecord NewJobRecord(const model::PodGroupInfo& pg, const std::vector<const PodInfo*>& pods,
                       absl::Time now) {
  JobRecord r;
  if (pg.controller.has_value()) {
    r.job_id = pg.controller->uid;
    r.name = pg.controller->name;
    r.kind = pg.controller->kind;
    r.owner = *pg.controller;
  }
  r.ns = pg.ns;
  r.pod_group_name = pg.name;
  r.framework = JobFramework(&pg, pods);
  r.resource_type = pg.resource_type;
  r.sid = JobSid(pg, pods, r.job_id);
  r.custom_job_id = pg.Annotation(model::kCustomJobId);
  r.multi_instance_job_id = pg.Label(model::kLabelMindIeJobId);
  r.app_type = pg.Label(model::kLabelApp);
  r.replicas = JobReplicas(pg.min_member, pods);
  r.status = JobStatus::kPending;
  r.create_time = now;
  r.total_cm_num = 1;
  return r;
}

JobStep DecideJob(std::string_view job_id, const JobRecord* current, JobOperation op,
                  const JobObservation& obs, absl::Time now) {
  switch (op) {
    case JobOperation::kAdd: {
      if (obs.pod_group.has_value() && !obs.pods.empty()) {
        return UpdateOperation(job_id, current, obs, now);
      }
      JobStep step;
      if (current == nullptr) {
        if (!obs.pod_group.has_value()) return Unchanged("ignored");
        step = Init(*obs.pod_group, obs.pods, now);
      } else if (current->status == JobStatus::kPending && !current->recovered) {
        step = Unchanged("unchanged");
      } else {
        step = UpdateOperation(job_id, current, obs, now);
      }
      step.drop_records = obs.stale_same_name;
      return step;
    }
    case JobOperation::kPreDelete:
      if (current == nullptr || current->pre_deleted) {
        return Unchanged(current != nullptr ? "unchanged" : "ignored");
      }
      if (!obs.pods.empty() || obs.pod_group.has_value()) {
        return UpdateOperation(job_id, current, obs, now);
      }
      return PreDelete(*current, now);
    case JobOperation::kUpdate:
      return UpdateOperation(job_id, current, obs, now);
  }
  return Unchanged("ignored");
}

JobExpiry DecideExpiry(const JobRecord& record, absl::Time now, absl::Duration grace,
                       bool live_record_with_same_name) {
  JobExpiry expiry;
  if (!record.pre_deleted) return expiry;
  const absl::Duration age = now - record.delete_time;
  if (age < grace) {
    expiry.remaining = grace - age;
    return expiry;
  }
  expiry.due = true;
  if (!live_record_with_same_name) {
    for (int64_t i = 0; i < record.total_cm_num; ++i) {
      expiry.config_maps_to_delete.push_back(JobSummaryConfigMapName(record.name, i));
    }
  }
  return expiry;
}

}  // namespace clusterd::cluster
