#include "cluster/job_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cluster/job_summary.h"
#include "cluster/job_uuid.h"
#include "cluster/node_object.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "store/admission.h"

namespace clusterd::cluster {
namespace {

// The record a decided step leaves the job with, for the fault view: the one it decided, the
// current one when the step keeps it, null when the step drops it.
std::shared_ptr<const JobRecord> RecordAfter(JobStep& step,
                                             const std::shared_ptr<const JobRecord>& current) {
  if (!step.changes_record) return current;
  if (!step.record.has_value()) return nullptr;
  return std::make_shared<const JobRecord>(*std::move(step.record));
}

using model::PodGroupInfo;
using model::PodInfo;

constexpr char kJobRegistryLog[] = "job-registry";

Counter& RejectedCounter(std::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_job_registry_rejected_total",
      "Objects or parts of objects the job registry could not use, by reason.",
      {{"reason", std::string(reason)}});
}

Counter& ReconcileCounter(std::string_view transition) {
  return MetricsRegistry::Default().GetCounter("clusterd_job_registry_reconciles_total",
                                               "Job reconciles by transition (init, update, "
                                               "pre-delete, delete, unchanged, ignored, failed).",
                                               {{"transition", std::string(transition)}});
}

std::string KeyOf(const store::Object& o) {
  return absl::StrCat(store::NamespaceOf(o), "/", store::NameOf(o));
}

// Pods that are obviously meant to be part of a training job, for which a missing owner is worth
// an info line rather than a debug one.
bool LooksLikeJobPod(const PodInfo& p) {
  return p.needs_npu || p.allocation_annotation_present ||
         !p.Annotation(model::kAnnotationRankIndex).empty() || p.rank_index.has_value() ||
         !p.rank_index_problem.empty();
}

}  // namespace

JobRegistry::JobRegistry(store::ObjectStore& store, Clock& clock, Options options,
                         store::InformerFactory* informers)
    : store_(store),
      own_informers_(informers == nullptr ? std::make_unique<store::InformerFactory>(store)
                                          : nullptr),
      informers_(informers != nullptr ? informers : own_informers_.get()),
      clock_(clock),
      options_(options),
      bucket_(options.reconcile_rate, options.reconcile_burst, clock),
      jobs_gauge_(MetricsRegistry::Default().GetGauge("clusterd_job_registry_jobs",
                                                      "Job records held by the registry.")),
      pods_gauge_(MetricsRegistry::Default().GetGauge(
          "clusterd_job_registry_pods", "Pods cached by the registry (owned by some job).")),
      signals_add_(MetricsRegistry::Default().GetCounter(
          "clusterd_job_registry_signals_total", "Job-summary signals emitted, by operator.",
          {{"operator", "add"}})),
      signals_delete_(MetricsRegistry::Default().GetCounter(
          "clusterd_job_registry_signals_total", "Job-summary signals emitted, by operator.",
          {{"operator", "delete"}})),
      write_failures_(MetricsRegistry::Default().GetCounter(
          "clusterd_job_registry_configmap_write_failures_total",
          "Job-summary ConfigMap writes or deletes that failed (the job is retried).")),
      reconcile_seconds_(MetricsRegistry::Default().GetHistogram(
          "clusterd_job_registry_reconcile_seconds", "Time to reconcile one job.",
          MetricsRegistry::LatencyBounds())),
      controller_({.name = "job_registry",
                   .thread_name = "job-registry",
                   .base_retry_delay = absl::Milliseconds(500),
                   .max_retry_delay = absl::Seconds(60),
                   .background = true},
                  clock, [this](const std::string& key, int) { return Reconcile(key); }) {}

JobRegistry::~JobRegistry() { Stop(); }

void JobRegistry::AddSignalListener(SignalListener listener) {
  listeners_.push_back(std::move(listener));
}

void JobRegistry::AddViewListener(std::function<void()> listener) {
  view_listeners_.push_back(std::move(listener));
}

void JobRegistry::NotifyView() {
  {
    absl::MutexLock lock(&mu_);
    if (view_notified_ == view_seq_) return;  // nothing a reader would see
    view_notified_ = view_seq_;
  }
  for (const auto& listener : view_listeners_) listener();
}

void JobRegistry::AddPodListener(PodListener listener) {
  pod_listeners_.push_back(std::move(listener));
}

void JobRegistry::AddInstanceListener(InstanceListener listener) {
  instance_listeners_.push_back(std::move(listener));
}

void JobRegistry::NotifyInstance(const PodInfo& pod) {
  const std::string app = pod.Label(model::kLabelApp);
  const std::string instance = pod.Label(model::kLabelMindIeJobId);
  if (instance.empty() || (app != "mindie-ms-controller" && app != "mindie-ms-coordinator")) return;
  for (const auto& listener : instance_listeners_) listener(instance);
}

absl::Status JobRegistry::Start() {
  // Registered nodes first, then pods, then PodGroups: a PodGroup owned by a soft-share pod is
  // recognised only once the pod is cached (IgnoredSoftSharePodGroup).
  const std::pair<std::string_view, void (JobRegistry::*)(const store::WatchEvent&)> feeds[] = {
      {store::kNodes, &JobRegistry::OnNodeEvent},
      {store::kPods, &JobRegistry::OnPodEvent},
      {store::kPodGroups, &JobRegistry::OnPodGroupEvent}};
  for (const auto& [resource, handler] : feeds) {
    store::SharedInformer& informer = informers_->For(resource);
    if (absl::Status s = informer.Start(); !s.ok()) {
      return Annotate(s, absl::StrCat("job registry: watching ", Sv(resource)));
    }
    if (resource == store::kPods) PreparePods(informer.List());
    registrations_.push_back(informer.AddHandler(
        {.on_event = [this, h = handler](const store::WatchEvent& e) { (this->*h)(e); }}));
  }
  {
    absl::MutexLock lock(&mu_);
    prepared_pods_.clear();  // those of pods changed between the list and the replay
  }
  store::ListOptions summaries;
  summaries.selector =
      *store::LabelSelector::Parse(absl::StrCat(Sv(kLabelOutsideJobInfo), "=true"));
  absl::StatusOr<store::ObjectList> cms = store_.List(store::kConfigMaps, summaries);
  if (!cms.ok()) return Annotate(cms.status(), "job registry: listing job-summary configmaps");
  {
    absl::MutexLock lock(&mu_);
    for (const auto& cm : cms->items) RecoverFromSummary(cm);
    UpdateGaugesLocked();
  }
  const size_t decided = DecideStartJobs();
  LogInfo(kJobRegistryLog, "started",
          {{"podgroups", informers_->For(store::kPodGroups).Size()},
           {"pods", informers_->For(store::kPods).Size()},
           {"nodes", informers_->For(store::kNodes).Size()},
           {"job_summaries", cms->items.size()},
           {"jobs_decided", decided}});
  controller_.EnqueueAfter(std::string(kConsistencyKey), options_.consistency_period);
  return absl::OkStatus();
}

void JobRegistry::Stop() {
  registrations_.clear();
  controller_.Stop();
  if (own_informers_ != nullptr) own_informers_->Stop();
}

// ---- intake ----

void JobRegistry::Reject(std::string_view reason, std::string_view message, bool loud) {
  RejectedCounter(reason).Increment();
  if (loud) {
    LogWarn(kJobRegistryLog, message, {{"reason", reason}});
  } else {
    LogDebug(kJobRegistryLog, message, {{"reason", reason}});
  }
}

void JobRegistry::QueueOperation(const std::string& job_id, JobOperation op) {
  pending_[job_id] = op;  // latest operation wins
  ++generation_[job_id];
  // Every change of the job's PodGroup or pods queues it: the fault view's entry of the job
  // (its pods, its PodGroup) changed with it.
  MarkViewLocked(job_id);
  controller_.Enqueue(job_id);
}

void JobRegistry::OnPodGroupEvent(const store::WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  ApplyPodGroup(event.type, event.object());
  UpdateGaugesLocked();
}

void JobRegistry::PreparePods(std::vector<std::shared_ptr<const store::Object>> pods) {
  std::vector<absl::StatusOr<PodInfo>> decoded(pods.size());
  const std::function<void(size_t)> decode = [&](size_t i) {
    decoded[i] = model::PodInfoFromObject(*pods[i], options_.naming);
  };
  if (options_.parallel_for) {
    options_.parallel_for(pods.size(), decode);
  } else {
    for (size_t i = 0; i < pods.size(); ++i) decode(i);
  }
  absl::MutexLock lock(&mu_);
  prepared_pods_.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    const store::Object* at = pods[i].get();
    prepared_pods_.insert_or_assign(at, PreparedPod{std::move(pods[i]), std::move(decoded[i])});
  }
}

absl::StatusOr<PodInfo> JobRegistry::DecodePod(const store::Object& object) {
  if (auto it = prepared_pods_.find(&object); it != prepared_pods_.end()) {
    absl::StatusOr<PodInfo> pod = std::move(it->second.pod);
    prepared_pods_.erase(it);
    return pod;
  }
  return model::PodInfoFromObject(object, options_.naming);
}

void JobRegistry::OnPodEvent(const store::WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  ApplyPod(event.type, event.object());
  UpdateGaugesLocked();
}

void JobRegistry::OnNodeEvent(const store::WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  ApplyNode(event.type, event.object());
}

bool JobRegistry::IgnoredSoftSharePodGroup(const PodGroupInfo& pg) const {
  if (pg.controller.has_value() && pg.controller->kind == "Pod") {
    auto uid = pod_by_uid_.find(pg.controller->uid);
    if (uid == pod_by_uid_.end()) return false;  // kept if the pod is not cached
    auto pod = pods_.find(uid->second);
    return pod != pods_.end() && pod->second.pod->IsSoftShare();
  }
  return pg.IsSoftShare();
}

void JobRegistry::ApplyPodGroup(store::WatchEventType type, const store::Object& object) {
  const std::string key = KeyOf(object);
  absl::StatusOr<PodGroupInfo> decoded = model::PodGroupInfoFromObject(object, options_.naming);
  if (!decoded.ok()) {
    Reject("malformed_podgroup", absl::StrCat("podgroup ", key, ": ", decoded.status().message()),
           true);
    return;
  }
  auto previous = pod_groups_.find(key);
  std::string previous_job;
  if (previous != pod_groups_.end() && previous->second->controller.has_value()) {
    previous_job = previous->second->controller->uid;
  }
  if (type == store::WatchEventType::kDeleted) {
    if (previous == pod_groups_.end()) return;
    pod_groups_.erase(previous);
    if (!previous_job.empty()) {
      if (auto it = pod_group_of_job_.find(previous_job);
          it != pod_group_of_job_.end() && it->second == key) {
        pod_group_of_job_.erase(it);
      }
      QueueOperation(previous_job, JobOperation::kPreDelete);
    }
    return;
  }
  if (!decoded->controller.has_value()) {
    Reject("podgroup_without_owner",
           absl::StrCat("podgroup ", key, " has no controller ownerReference; it defines no job"),
           true);
    if (previous != pod_groups_.end()) {
      pod_groups_.erase(previous);
      if (!previous_job.empty()) {
        pod_group_of_job_.erase(previous_job);
        QueueOperation(previous_job, JobOperation::kPreDelete);
      }
    }
    return;
  }
  if (IgnoredSoftSharePodGroup(*decoded)) {
    LogDebug(kJobRegistryLog, "soft-share podgroup ignored", {{"podgroup", key}});
    return;
  }
  const std::string job_id = decoded->controller->uid;
  if (!previous_job.empty() && previous_job != job_id) {
    // The owner changed: the old job lost its PodGroup.
    pod_group_of_job_.erase(previous_job);
    QueueOperation(previous_job, JobOperation::kPreDelete);
  }
  pod_groups_[key] = std::make_shared<const PodGroupInfo>(*std::move(decoded));
  pod_group_of_job_[job_id] = key;
  QueueOperation(
      job_id, type == store::WatchEventType::kAdded ? JobOperation::kAdd : JobOperation::kUpdate);
}

void JobRegistry::RemovePod(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const std::string job_id = it->second.job_id;
  if (auto u = pod_by_uid_.find(it->second.pod->uid); u != pod_by_uid_.end() && u->second == key) {
    pod_by_uid_.erase(u);
  }
  if (auto j = pods_of_job_.find(job_id); j != pods_of_job_.end()) {
    j->second.erase(it->second.pod->name);
    if (j->second.empty()) pods_of_job_.erase(j);
  }
  std::shared_ptr<const PodInfo> removed = std::move(it->second.pod);
  pods_.erase(it);
  for (const auto& listener : pod_listeners_) listener(key, nullptr, job_id);
  QueueOperation(job_id, JobOperation::kUpdate);
  NotifyInstance(*removed);
}

void JobRegistry::ApplyPod(store::WatchEventType type, const store::Object& object) {
  const std::string key = KeyOf(object);
  if (type == store::WatchEventType::kDeleted) {
    RemovePod(key);
    return;
  }
  absl::StatusOr<PodInfo> decoded = DecodePod(object);
  if (!decoded.ok()) {
    Reject("malformed_pod", absl::StrCat("pod ", key, ": ", decoded.status().message()), true);
    RemovePod(key);
    return;
  }
  if (decoded->IsSoftShare()) {
    RemovePod(key);
    return;
  }
  if (!decoded->controller.has_value()) {
    Reject("pod_without_owner",
           absl::StrCat("pod ", key, " has no controller ownerReference; it belongs to no job"),
           LooksLikeJobPod(*decoded));
    RemovePod(key);
    return;
  }
  const std::string job_id = decoded->controller->uid;
  if (auto it = pods_.find(key); it != pods_.end() && it->second.job_id != job_id) RemovePod(key);
  auto pod = std::make_shared<const PodInfo>(*std::move(decoded));
  if (!pod->uid.empty()) pod_by_uid_[pod->uid] = key;
  pods_of_job_[job_id][pod->name] = pod;
  pods_[key] = PodEntry{pod, job_id};
  for (const auto& listener : pod_listeners_) listener(key, pod.get(), job_id);
  QueueOperation(job_id, JobOperation::kUpdate);
  NotifyInstance(*pod);
}

void JobRegistry::ApplyNode(store::WatchEventType type, const store::Object& object) {
  const std::string name = store::NameOf(object);
  const std::string ip = NodeInternalIp(object);
  if (type == store::WatchEventType::kDeleted) {
    node_serial_.erase(name);
    if (!ip.empty()) node_serial_by_ip_.erase(ip);
    return;
  }
  const std::string sn = NodeSerial(object);
  node_serial_[name] = sn;
  if (!ip.empty()) node_serial_by_ip_[ip] = sn;
}

void JobRegistry::RecoverFromSummary(const store::Object& cm) {
  auto data_it = cm.find("data");
  if (data_it == cm.end() || !data_it->is_object()) return;
  const store::Object& data = *data_it;
  auto get = [&](std::string_view k) { return StringOr(data, k, ""); };
  if (get(kKeyCmIndex) != "0") return;
  const std::string job_id = get(kKeyJobId);
  if (job_id.empty() || records_.contains(job_id)) return;
  JobRecord r;
  r.job_id = job_id;
  r.name = get(kKeyJobName);
  r.ns = store::NamespaceOf(cm);
  if (JobSummaryConfigMapName(r.name, 0) != store::NameOf(cm)) return;  // not ours
  r.framework = get(kKeyFramework);
  r.sid = get(kKeySid);
  r.status = model::ParseJobStatus(get(kKeyJobStatus)).value_or(model::JobStatus::kPending);
  r.pre_deleted = get(kKeyOperator) == model::kJobOperatorDelete;
  int64_t n = 0;
  if (absl::SimpleAtoi(get(kKeyTotal), &n) && n > 0) r.total_cm_num = n;
  if (absl::SimpleAtoi(get(kKeyTime), &n)) r.create_time = absl::FromUnixSeconds(n);
  if (absl::SimpleAtoi(get(kKeyDeleteTime), &n)) r.delete_time = absl::FromUnixSeconds(n);
  if (r.pre_deleted && get(kKeyDeleteTime).empty()) r.delete_time = clock_.Now();
  r.shared_tor_ip = get(kKeySharedTorIp);
  r.master_addr = get(kKeyMasterAddr);
  r.last_cm_write = clock_.Now();
  r.recovered = true;
  std::string labels_ring;
  if (auto md = cm.find("metadata"); md != cm.end() && md->is_object()) {
    if (auto labels = md->find("labels"); labels != md->end()) {
      labels_ring = StringOr(*labels, kLabelRingController, "");
    }
  }
  r.resource_type = labels_ring.empty() ? std::string(model::kResourceTypeNpu) : "";
  records_[job_id] = std::make_shared<const JobRecord>(std::move(r));
  MarkViewLocked(job_id);
  if (!pending_.contains(job_id)) QueueOperation(job_id, JobOperation::kUpdate);
}

// ---- reconcile ----

JobObservation JobRegistry::Observe(const std::string& job_id, JobOperation op,
                                    std::vector<std::shared_ptr<const PodInfo>>* keep_alive,
                                    const PreDeletedByName* pre_deleted) const {
  JobObservation obs;
  if (auto pg = pod_group_of_job_.find(job_id); pg != pod_group_of_job_.end()) {
    if (auto it = pod_groups_.find(pg->second); it != pod_groups_.end())
      obs.pod_group = *it->second;
  }
  if (auto pods = pods_of_job_.find(job_id); pods != pods_of_job_.end()) {
    obs.pods.reserve(pods->second.size());
    for (const auto& [name, pod] : pods->second) {
      obs.pods.push_back(pod.get());
      keep_alive->push_back(pod);
      if (!pod->node_name.empty()) {
        if (auto sn = node_serial_.find(pod->node_name); sn != node_serial_.end()) {
          obs.serials.by_node_name[pod->node_name] = sn->second;
        }
      } else if (pod->allocation.has_value()) {
        const std::string& ip = pod->allocation->host_ip;
        if (auto sn = node_serial_by_ip_.find(ip); sn != node_serial_by_ip_.end()) {
          obs.serials.by_host_ip[ip] = sn->second;
        }
      }
    }
  }
  if (op == JobOperation::kAdd && obs.pod_group.has_value() && obs.pod_group->controller) {
    if (pre_deleted != nullptr) {
      auto same =
          pre_deleted->find(absl::StrCat(obs.pod_group->ns, "/", obs.pod_group->controller->name));
      if (same != pre_deleted->end()) {
        for (const std::string& id : same->second) {
          if (id != job_id) obs.stale_same_name.push_back(id);
        }
      }
    } else {
      for (const auto& [id, r] : records_) {
        if (id != job_id && r->pre_deleted && r->ns == obs.pod_group->ns &&
            r->name == obs.pod_group->controller->name) {
          obs.stale_same_name.push_back(id);
        }
      }
    }
  }
  return obs;
}

JobRegistry::PreDeletedByName JobRegistry::PreDeletedRecordsLocked() const {
  PreDeletedByName out;
  for (const auto& [id, r] : records_) {
    if (r->pre_deleted) out[absl::StrCat(r->ns, "/", r->name)].push_back(id);
  }
  return out;
}

runtime::Result JobRegistry::Reconcile(const std::string& key) {
  if (key == kConsistencyKey) return RunConsistencyCheck();
  const absl::Time start = clock_.Now();
  JobOperation op = JobOperation::kUpdate;
  std::shared_ptr<const JobRecord> current;
  JobObservation obs;
  // `obs.pods` points into these: the cache may drop its references meanwhile.
  std::vector<std::shared_ptr<const PodInfo>> keep_alive;
  bool expiry_check = false;
  bool has_op = false;
  {
    absl::ReleasableMutexLock lock(&mu_);
    auto pending = pending_.find(key);
    if (pending == pending_.end()) {
      token_due_.erase(key);  // a reservation outlived its operation: its token goes unused
      auto record = records_.find(key);
      expiry_check = record != records_.end() && record->second->pre_deleted;
    } else if (std::optional<absl::Duration> wait = WaitForTokenLocked(key); wait.has_value()) {
      const JobOperation waiting = pending->second;
      const uint64_t generation = generation_[key];
      auto ahead = provisional_.find(key);
      if (ahead == provisional_.end() || ahead->second.generation != generation) {
        lock.Release();
        return DecideAhead(key, waiting, generation, *wait);
      }
      return runtime::Result::RequeueAfter(*wait);
    } else {
      op = pending->second;
      has_op = true;
      pending_.erase(pending);
      if (auto record = records_.find(key); record != records_.end()) current = record->second;
      obs = Observe(key, op, &keep_alive);
    }
  }
  if (!has_op) return expiry_check ? ReconcileExpiry(key) : runtime::Result::Done();

  const absl::Time now = clock_.Now();
  JobStep step = DecideJob(key, current.get(), op, obs, now);
  for (const RankTableProblem& p : step.problems) {
    Reject(p.reason, absl::StrCat("job ", key, ": ", p.detail), true);
  }
  size_t committed = 0;
  if (step.changes_record && (!step.writes.empty() || step.signal.has_value())) {
    absl::StatusOr<size_t> executed = Execute(*step.record, step);
    if (executed.ok()) committed = *executed;
    if (absl::Status s = executed.status(); !s.ok()) {
      write_failures_.Increment();
      ReconcileCounter("failed").Increment();
      LogWarn(kJobRegistryLog, "job-summary write failed; will retry",
              {{"job", key}, {"transition", step.transition}, {"error", s}});
      {
        absl::MutexLock lock(&mu_);
        if (!pending_.contains(key)) pending_[key] = op;
        // The fault view already has what the write will say once it succeeds.
        provisional_[key] = {generation_[key], step.changes_record && step.record.has_value()
                                                   ? std::make_shared<const JobRecord>(*step.record)
                                                   : nullptr};
        MarkViewLocked(key);
      }
      NotifyView();
      return runtime::Result::Retry(s);
    }
  }
  ReconcileCounter(step.transition).Increment();
  std::optional<absl::Duration> expire_in;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : step.drop_records) {
      records_.erase(id);
      provisional_.erase(id);
      if (!pending_.contains(id)) generation_.erase(id);
      MarkViewLocked(id);
    }
    if (step.changes_record && step.record.has_value()) {
      current = std::make_shared<const JobRecord>(*std::move(step.record));
      records_[key] = current;
    }
    if (provisional_.erase(key) > 0 || step.changes_record) MarkViewLocked(key);
    // A pre-deleted record (new or still) is due for deletion after the grace.
    if (current != nullptr && current->pre_deleted) {
      expire_in =
          std::max(absl::ZeroDuration(), options_.pre_delete_grace - (now - current->delete_time));
    }
    UpdateGaugesLocked();
  }
  if (step.transition != "unchanged" && step.transition != "ignored") {
    // An update that found the job's summary as it was is not news: every job is decided once
    // after a start, which logged one line per job (5,000 at 5,000 jobs) on every restart.
    if (committed > 0 || step.transition != "update") {
      LogInfo(kJobRegistryLog, "job reconciled",
              {{"job", key}, {"operation", ToString(op)}, {"transition", step.transition}});
    } else {
      LogDebug(kJobRegistryLog, "job reconciled; its summary is as it was",
               {{"job", key}, {"operation", ToString(op)}, {"transition", step.transition}});
    }
  }
  NotifyView();  // when this reconcile, or a change of the job's pods, moved the view
  if (step.signal.has_value()) Emit(*std::move(step.signal));
  reconcile_seconds_.Observe(absl::ToDoubleSeconds(clock_.Now() - start));
  if (expire_in.has_value()) return runtime::Result::RequeueAfter(*expire_in);
  return runtime::Result::Done();
}

std::optional<absl::Duration> JobRegistry::WaitForTokenLocked(const std::string& key) {
  const absl::Time now = clock_.Now();
  if (auto due = token_due_.find(key); due != token_due_.end()) {
    if (due->second <= now) {
      token_due_.erase(due);
      return std::nullopt;
    }
    return due->second - now;  // woken early (the key was queued again meanwhile)
  }
  const absl::Duration wait = bucket_.Reserve();
  if (wait <= absl::ZeroDuration()) return std::nullopt;
  // A bucket that cannot grant (no rate or burst) reserves nothing: the key waits as long.
  if (wait != absl::InfiniteDuration()) token_due_[key] = now + wait;
  return wait;
}

runtime::Result JobRegistry::DecideAhead(const std::string& key, JobOperation op,
                                         uint64_t generation, absl::Duration wait) {
  std::shared_ptr<const JobRecord> current;
  std::vector<std::shared_ptr<const PodInfo>> keep_alive;
  JobObservation obs;
  {
    absl::MutexLock lock(&mu_);
    if (auto record = records_.find(key); record != records_.end()) current = record->second;
    obs = Observe(key, op, &keep_alive);
  }
  JobStep step = DecideJob(key, current.get(), op, obs, clock_.Now());
  std::shared_ptr<const JobRecord> decided = RecordAfter(step, current);
  {
    absl::MutexLock lock(&mu_);
    // A newer operation queued meanwhile decides again at its own turn.
    if (generation_[key] == generation) {
      provisional_[key] = {generation, std::move(decided)};
      MarkViewLocked(key);
    }
  }
  NotifyView();
  return runtime::Result::RequeueAfter(wait);
}

size_t JobRegistry::DecideStartJobs() {
  struct Item {
    std::string key;
    JobOperation op = JobOperation::kUpdate;
    uint64_t generation = 0;
    std::shared_ptr<const JobRecord> current;
    JobObservation obs;
    std::vector<std::shared_ptr<const PodInfo>> keep_alive;  // obs.pods points into these
    std::shared_ptr<const JobRecord> decided;
  };
  std::vector<Item> items;
  {
    absl::MutexLock lock(&mu_);
    const PreDeletedByName pre_deleted = PreDeletedRecordsLocked();
    items.reserve(pending_.size());
    for (const auto& [key, op] : pending_) {
      Item& item = items.emplace_back();
      item.key = key;
      item.op = op;
      item.generation = generation_[key];
      if (auto record = records_.find(key); record != records_.end()) item.current = record->second;
      item.obs = Observe(key, op, &item.keep_alive, &pre_deleted);
    }
  }
  // DecideJob reads its arguments alone: the jobs are decided unlocked, on every core.
  const absl::Time now = clock_.Now();
  const std::function<void(size_t)> decide = [&](size_t i) {
    Item& item = items[i];
    JobStep step = DecideJob(item.key, item.current.get(), item.op, item.obs, now);
    item.decided = RecordAfter(step, item.current);
  };
  if (options_.parallel_for) {
    options_.parallel_for(items.size(), decide);
  } else {
    for (size_t i = 0; i < items.size(); ++i) decide(i);
  }
  {
    absl::MutexLock lock(&mu_);
    for (Item& item : items) {
      // An operation queued meanwhile (a watch event) decides again at its own turn.
      if (generation_[item.key] == item.generation) {
        provisional_[item.key] = {item.generation, std::move(item.decided)};
        MarkViewLocked(item.key);
      }
    }
  }
  NotifyView();
  return items.size();
}

runtime::Result JobRegistry::ReconcileExpiry(const std::string& job_id) {
  std::shared_ptr<const JobRecord> record;
  bool live_same_name = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = records_.find(job_id);
    if (it == records_.end() || !it->second->pre_deleted) return runtime::Result::Done();
    record = it->second;
    for (const auto& [id, r] : records_) {
      if (id != job_id && !r->pre_deleted && r->ns == record->ns && r->name == record->name) {
        live_same_name = true;
      }
    }
  }
  JobExpiry expiry = DecideExpiry(*record, clock_.Now(), options_.pre_delete_grace, live_same_name);
  if (!expiry.due) return runtime::Result::RequeueAfter(expiry.remaining);
  for (const std::string& name : expiry.config_maps_to_delete) {
    absl::Status s =
        store_.Delete(store::ObjectKey{std::string(store::kConfigMaps), record->ns, name});
    if (!s.ok() && !absl::IsNotFound(s)) {
      write_failures_.Increment();
      LogWarn(kJobRegistryLog, "job-summary delete failed; will retry",
              {{"job", job_id}, {"configmap", absl::StrCat(record->ns, "/", name)}, {"error", s}});
      return runtime::Result::Retry(s);
    }
  }
  ReconcileCounter("delete").Increment();
  {
    absl::MutexLock lock(&mu_);
    // Only if nothing happened to the job meanwhile.
    if (auto it = records_.find(job_id); it != records_.end() && it->second->pre_deleted &&
                                         it->second->delete_time == record->delete_time &&
                                         !pending_.contains(job_id)) {
      records_.erase(it);
      provisional_.erase(job_id);
      generation_.erase(job_id);
      MarkViewLocked(job_id);
    }
    UpdateGaugesLocked();
  }
  NotifyView();
  LogInfo(kJobRegistryLog, "job deleted",
          {{"job", job_id},
           {"name", absl::StrCat(record->ns, "/", record->name)},
           {"configmaps_deleted", expiry.config_maps_to_delete.size()}});
  return runtime::Result::Done();
}

runtime::Result JobRegistry::RunConsistencyCheck() {
  const absl::Time now = clock_.Now();
  std::vector<std::string> queued;
  {
    absl::MutexLock lock(&mu_);
    if (pending_.size() <= options_.consistency_max_pending) {
      for (auto& [id, r] : records_) {
        if (now - r->last_cm_write >= options_.consistency_period) {
          auto refreshed = std::make_shared<JobRecord>(*r);
          refreshed->last_cm_write = now;
          r = std::move(refreshed);
          if (!pending_.contains(id)) QueueOperation(id, JobOperation::kUpdate);
          queued.push_back(id);
        }
      }
    }
  }
  if (!queued.empty()) {
    LogInfo(kJobRegistryLog, "consistency re-check queued", {{"jobs", queued.size()}});
  }
  return runtime::Result::RequeueAfter(options_.consistency_period);
}

absl::StatusOr<bool> JobRegistry::WriteConfigMap(const ConfigMapWrite& write) {
  const store::Object& cm = write.config_map;
  // Whether the summary exists, from the store's cache (a Get is local on every backend): a
  // write that the store would refuse first costs the API server a request for nothing. The
  // mode decides when the cache cannot tell; a stale cache still ends in the other write.
  const absl::StatusOr<store::Object> current = store_.Get(store::KeyOf(store::kConfigMaps, cm));
  bool create_first = write.mode == WriteMode::kCreateFirst;
  if (current.ok()) {
    // What the store holds already: the write would commit nothing (a restart decides every
    // job again, and at 5,000 jobs rewrote 5,000 unchanged summaries, one API request each).
    if (absl::StatusOr<store::Object> admitted =
            store::AdmitUpdate(store::kConfigMaps, *current, cm);
        admitted.ok() && store::ChangesNothing(*current, *admitted)) {
      return false;
    }
    create_first = false;
  } else if (absl::IsNotFound(current.status())) {
    create_first = true;
  }
  // Whether the store committed it: a write that changes nothing is not committed (and keeps
  // the stored resourceVersion).
  const auto committed = [&current](const absl::StatusOr<store::Object>& written) {
    return !current.ok() ||
           store::ResourceVersionOf(*written) != store::ResourceVersionOf(*current);
  };
  if (create_first) {
    absl::StatusOr<store::Object> created = store_.Create(store::kConfigMaps, cm);
    if (created.ok()) return true;
    if (!absl::IsAlreadyExists(created.status())) return created.status();
    absl::StatusOr<store::Object> updated = store_.Update(store::kConfigMaps, cm);
    if (!updated.ok()) return updated.status();
    return committed(updated);
  }
  absl::StatusOr<store::Object> updated = store_.Update(store::kConfigMaps, cm);
  if (updated.ok()) return committed(updated);
  if (!absl::IsNotFound(updated.status())) return updated.status();
  absl::StatusOr<store::Object> created = store_.Create(store::kConfigMaps, cm);
  if (!created.ok()) return created.status();
  return true;
}

absl::StatusOr<size_t> JobRegistry::Execute(const JobRecord& record, const JobStep& step) {
  size_t committed = 0;
  for (const ConfigMapWrite& w : step.writes) {
    absl::StatusOr<bool> written = WriteConfigMap(w);
    if (!written.ok()) {
      return Annotate(written.status(),
                      absl::StrCat("configmap ", record.ns, "/", store::NameOf(w.config_map)));
    }
    if (*written) ++committed;
  }
  return committed;
}

void JobRegistry::Emit(model::JobSummarySignal signal) {
  signal.uuid = NewJobUuid();
  (signal.op == model::kJobOperatorDelete ? signals_delete_ : signals_add_).Increment();
  for (const auto& listener : listeners_) listener(signal);
}

void JobRegistry::UpdateGaugesLocked() {
  jobs_gauge_.Set(static_cast<double>(records_.size()));
  pods_gauge_.Set(static_cast<double>(pods_.size()));
}

// ---- queries ----

std::vector<JobRecord> JobRegistry::Jobs() const {
  std::vector<JobRecord> out;
  {
    absl::MutexLock lock(&mu_);
    out.reserve(records_.size());
    for (const auto& [id, r] : records_) out.push_back(*r);
  }
  std::sort(out.begin(), out.end(), [](const JobRecord& a, const JobRecord& b) {
    return std::tie(a.ns, a.name, a.job_id) < std::tie(b.ns, b.name, b.job_id);
  });
  return out;
}

std::optional<JobRecord> JobRegistry::FindJob(std::string_view job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(std::string(job_id));
  if (it == records_.end()) return std::nullopt;
  return *it->second;
}

std::optional<JobRecord> JobRegistry::FindJobByName(std::string_view ns, std::string_view name,
                                                    bool running_only) const {
  absl::MutexLock lock(&mu_);
  const JobRecord* best = nullptr;
  for (const auto& [id, record] : records_) {
    const JobRecord& r = *record;
    if (r.ns != ns || r.name != name) continue;
    if (running_only && (r.pre_deleted || r.status != model::JobStatus::kRunning)) continue;
    if (best == nullptr || (best->pre_deleted && !r.pre_deleted) ||
        (best->pre_deleted == r.pre_deleted && r.create_time > best->create_time)) {
      best = &r;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::vector<PodInfo> JobRegistry::PodsOfJob(std::string_view job_id) const {
  absl::MutexLock lock(&mu_);
  std::vector<PodInfo> out;
  if (auto it = pods_of_job_.find(std::string(job_id)); it != pods_of_job_.end()) {
    for (const auto& [name, pod] : it->second) out.push_back(*pod);
  }
  return out;
}

std::vector<PodInfo> JobRegistry::PodsOfInstance(std::string_view ns,
                                                 std::string_view instance_job_id,
                                                 std::string_view app_type) const {
  absl::MutexLock lock(&mu_);
  std::vector<PodInfo> out;
  for (const auto& [key, pg] : pod_groups_) {
    if (!pg->controller.has_value() || (!ns.empty() && pg->ns != ns)) continue;
    if (pg->Label(model::kLabelMindIeJobId) != instance_job_id ||
        pg->Label(model::kLabelApp) != app_type) {
      continue;
    }
    if (auto it = pods_of_job_.find(pg->controller->uid); it != pods_of_job_.end()) {
      for (const auto& [name, pod] : it->second) out.push_back(*pod);
    }
  }
  return out;
}

std::optional<std::string> JobRegistry::NamespaceOfInstance(std::string_view instance_job_id,
                                                            std::string_view app_type) const {
  absl::MutexLock lock(&mu_);
  std::optional<std::string> ns;
  for (const auto& [key, pg] : pod_groups_) {
    if (pg->Label(model::kLabelMindIeJobId) == instance_job_id &&
        pg->Label(model::kLabelApp) == app_type) {
      if (!ns.has_value() || pg->ns < *ns) ns = pg->ns;
    }
  }
  return ns;
}

std::vector<std::vector<model::JobSummarySignal>> JobRegistry::SnapshotSignals() const {
  std::vector<JobRecord> records = Jobs();
  auto batches = SnapshotBatches(records, clock_.Now());
  for (auto& batch : batches) {
    for (auto& s : batch) s.uuid = NewJobUuid();
  }
  return batches;
}

size_t JobRegistry::PendingOperations() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
}

}  // namespace clusterd::cluster
