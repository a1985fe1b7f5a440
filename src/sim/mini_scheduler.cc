#include "sim/mini_scheduler.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "model/config_map_names.h"
#include "model/device_info.h"

namespace clusterd::sim {
namespace {

constexpr char kSyncKey[] = "sync";
constexpr absl::Duration kBackupStartDelay = absl::Seconds(1);

std::string Annotation(const store::Object& o, const std::string& key) {
  const auto& md = o["metadata"];
  if (!md.contains("annotations") || !md["annotations"].is_object()) return "";
  auto it = md["annotations"].find(key);
  return it != md["annotations"].end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Label(const store::Object& o, const std::string& key) {
  const auto& md = o["metadata"];
  if (!md.contains("labels") || !md["labels"].is_object()) return "";
  auto it = md["labels"].find(key);
  return it != md["labels"].end() && it->is_string() ? it->get<std::string>() : "";
}

// "Ascend910-3" -> 3.
int NpuIdOf(std::string_view name) {
  const size_t dash = name.rfind('-');
  int id = -1;
  if (dash == std::string_view::npos ||
      !absl::SimpleAtoi(absl::string_view(name.data() + dash + 1, name.size() - dash - 1), &id)) {
    return -1;
  }
  return id;
}

// The fields of a pod or PodGroup that a reconcile reads.
std::string SchedulingFields(std::string_view resource, const store::Object& o) {
  if (resource == store::kPodGroups) return Label(o, "process-recover-enable");
  std::string fields = Label(o, "job-name");
  for (const char* key : {kRankIndexAnnotation, "podType", "needVolcanoOpe", "needOperatorOpe",
                          "backupNewPodName", "huawei.com/Ascend910"}) {
    absl::StrAppend(&fields, "\n", Annotation(o, key));
  }
  for (const auto& [section, key] : {std::pair{"spec", "nodeName"}, {"status", "phase"}}) {
    auto it = o.find(section);
    absl::StrAppend(&fields, "\n",
                    it != o.end() && it->is_object() ? it->value(key, "") : std::string());
  }
  return fields;
}

int NodeIndexOf(const std::string& node) {
  int index = 0;
  if (node.rfind("node-", 0) != 0 || !absl::SimpleAtoi(node.substr(5), &index)) return 0;
  return index;
}

}  // namespace

MiniScheduler::MiniScheduler(store::ObjectStore& store, Clock& clock, ClusterSpec cluster,
                             std::vector<JobSpec> jobs, EventLog log)
    : store_(store),
      clock_(clock),
      cluster_(std::move(cluster)),
      log_(std::move(log)),
      queue_("sim_scheduler", clock) {
  absl::MutexLock lock(&mu_);
  for (JobSpec& j : jobs) {
    JobState state;
    state.uid = StableUid("ascendjob/" + j.ns + "/" + j.name);
    state.spec = std::move(j);
    order_.push_back(state.spec.name);
    jobs_.emplace(state.spec.name, std::move(state));
  }
}

MiniScheduler::~MiniScheduler() { Stop(); }

void MiniScheduler::Log(const std::string& text) {
  LogInfo("sim-scheduler", text);
  if (log_) log_(text);
}

absl::Status MiniScheduler::Start() {
  for (int i = 1; i <= cluster_.nodes; ++i) {
    auto created = store_.Create(store::kNodes, NodeObject(cluster_, i));
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  std::vector<std::pair<std::string_view, store::Object>> objects;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [name, job] : jobs_) {
      objects.emplace_back(store::kAscendJobs, AscendJobObject(job.spec, job.uid));
      objects.emplace_back(store::kConfigMaps, ResetConfigMap(job.spec));
      objects.emplace_back(store::kPodGroups, PodGroupObject(job.spec, job.uid));
    }
  }
  for (const auto& [resource, object] : objects) {
    auto created = store_.Create(resource, object);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  Sync();
  auto enqueue = [this](const store::WatchEvent&) { queue_.Add(kSyncKey); };
  for (std::string_view resource : {store::kPods, store::kPodGroups}) {
    auto watch = store_.Watch(resource, {}, [this, resource](const store::WatchEvent& event) {
      if (Relevant(resource, event)) queue_.Add(kSyncKey);
    });
    if (!watch.ok()) return watch.status();
    watches_.push_back(std::move(*watch));
  }
  store::WatchOptions cms;
  cms.ns = std::string(model::kDeviceInfoNamespace);
  auto watch = store_.Watch(store::kConfigMaps, cms, enqueue);
  if (!watch.ok()) return watch.status();
  watches_.push_back(std::move(*watch));
  thread_ = std::thread([this] { Loop(); });
  started_ = true;
  return absl::OkStatus();
}

bool MiniScheduler::Relevant(std::string_view resource, const store::WatchEvent& event) {
  const auto& md = event.object()["metadata"];
  const std::string key =
      std::string(resource) + "/" + md.value("namespace", "") + "/" + md.value("name", "");
  absl::MutexLock lock(&seen_mu_);
  if (event.type == store::WatchEventType::kDeleted) {
    seen_.erase(key);
    return true;
  }
  std::string fields = SchedulingFields(resource, event.object());
  auto [it, added] = seen_.try_emplace(key, fields);
  if (added) return true;
  if (it->second == fields) return false;
  it->second = std::move(fields);
  return true;
}

void MiniScheduler::Stop() {
  if (!started_) return;
  started_ = false;
  watches_.clear();
  queue_.ShutDown();
  if (thread_.joinable()) thread_.join();
}

void MiniScheduler::Loop() {
  while (auto key = queue_.Get()) {
    Sync();
    queue_.Done(*key);
  }
}

void MiniScheduler::SyncNow() { Sync(); }

std::string MiniScheduler::JobUid(const std::string& job) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job);
  return it == jobs_.end() ? "" : it->second.uid;
}

std::vector<PodPlacement> MiniScheduler::Placements(const std::string& job_name) const {
  std::vector<PodPlacement> out;
  std::string ns;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_name);
    if (it == jobs_.end()) return out;
    ns = it->second.spec.ns;
  }
  store::ListOptions options;
  options.ns = ns;
  options.selector = *store::LabelSelector::Parse("job-name=" + job_name);
  auto pods = store_.List(store::kPods, options);
  if (!pods.ok()) return out;
  for (const store::Object& pod : pods->items) {
    if (Annotation(pod, "podType") == "backup") continue;
    PodPlacement p;
    p.name = pod["metadata"].value("name", "");
    p.uid = pod["metadata"].value("uid", "");
    (void)absl::SimpleAtoi(Annotation(pod, kRankIndexAnnotation), &p.rank);
    p.node_index = NodeIndexOf(pod["spec"].value("nodeName", ""));
    for (absl::string_view n :
         absl::StrSplit(Annotation(pod, "huawei.com/Ascend910"), ',', absl::SkipEmpty())) {
      p.npus.push_back(NpuIdOf(std::string_view(n.data(), n.size())));
    }
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(),
            [](const PodPlacement& a, const PodPlacement& b) { return a.rank < b.rank; });
  return out;
}

void MiniScheduler::PodExited(const std::string& job_name, int rank) {
  JobSpec spec;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_name);
    if (it == jobs_.end()) return;
    spec = it->second.spec;
  }
  for (const PodPlacement& p : Placements(job_name)) {
    if (p.rank != rank) continue;
    {
      absl::MutexLock lock(&mu_);
      last_node_[p.name] = p.node_index;
    }
    absl::Status st = store_.Delete({std::string(store::kPods), spec.ns, p.name});
    if (st.ok()) Log(absl::StrCat("pod ", p.name, " exited on ", SimNodeName(p.node_index)));
  }
}

int MiniScheduler::reschedules() const {
  absl::MutexLock lock(&mu_);
  return reschedules_;
}

int MiniScheduler::job_reschedules() const {
  absl::MutexLock lock(&mu_);
  return job_reschedules_;
}

MiniScheduler::Occupancy MiniScheduler::ReadOccupancy(const std::vector<store::Object>& pods) {
  Occupancy occ;
  for (const store::Object& pod : pods) {
    const int node = NodeIndexOf(pod["spec"].value("nodeName", ""));
    for (absl::string_view n :
         absl::StrSplit(Annotation(pod, "huawei.com/Ascend910"), ',', absl::SkipEmpty())) {
      occ.used[node].insert(NpuIdOf(std::string_view(n.data(), n.size())));
    }
  }
  store::ListOptions options;
  options.ns = std::string(model::kDeviceInfoNamespace);
  auto cms = store_.List(store::kConfigMaps, options);
  if (!cms.ok()) return occ;
  for (const store::Object& cm : cms->items) {
    const std::string name = cm["metadata"].value("name", "");
    if (name.rfind(model::kDeviceInfoPrefix, 0) != 0) continue;
    const int node = NodeIndexOf(name.substr(model::kDeviceInfoPrefix.size()));
    if (node == 0 || !cm.contains("data") || !cm["data"].contains("DeviceInfoCfg")) continue;
    auto cfg = model::ParseDeviceInfoCfg(cm["data"]["DeviceInfoCfg"].get<std::string>());
    if (!cfg.ok()) continue;
    for (const auto& [key, value] : cfg->device_info.device_list) {
      const bool unhealthy =
          key.size() > 10 && (key.ends_with("-Unhealthy") || key.ends_with("-NetworkUnhealthy"));
      if (!unhealthy) continue;
      for (absl::string_view n : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        occ.unhealthy[node].insert(NpuIdOf(std::string_view(n.data(), n.size())));
      }
    }
  }
  return occ;
}

int MiniScheduler::PickNode(const Occupancy& occ, int count, int avoid,
                            std::vector<int>* npus) const {
  struct Candidate {
    int node;
    bool has_faults;
    bool avoided;
    int free;
    std::vector<int> npus;
  };
  std::vector<Candidate> candidates;
  for (int node = 1; node <= cluster_.nodes; ++node) {
    Candidate c{node, false, node == avoid, 0, {}};
    auto used = occ.used.find(node);
    auto bad = occ.unhealthy.find(node);
    c.has_faults = bad != occ.unhealthy.end() && !bad->second.empty();
    for (int npu = 0; npu < cluster_.npus_per_node; ++npu) {
      if (used != occ.used.end() && used->second.count(npu) > 0) continue;
      if (bad != occ.unhealthy.end() && bad->second.count(npu) > 0) continue;
      ++c.free;
      if (static_cast<int>(c.npus.size()) < count) c.npus.push_back(npu);
    }
    if (c.free >= count) candidates.push_back(std::move(c));
  }
  if (candidates.empty()) return 0;
  // Healthy nodes first, the node the pod just left last, then the emptiest (spreading).
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.avoided != b.avoided) return !a.avoided;
    if (a.has_faults != b.has_faults) return !a.has_faults;
    if (a.free != b.free) return a.free > b.free;
    return a.node < b.node;
  });
  *npus = candidates.front().npus;
  return candidates.front().node;
}

bool MiniScheduler::PlanPod(JobState& job, int rank, const std::string& backup_of, int avoid_node,
                            Occupancy& occ, std::vector<Step>* steps) {
  const bool backup = !backup_of.empty();
  PodPlacement p;
  p.rank = rank;
  p.backup = backup;
  p.backup_source = backup_of;
  // A backup pod gets a name of its own: after a hot switch it holds the rank, and a later hot
  // switch of that rank needs another backup beside it.
  p.name = backup ? absl::StrCat(PodName(job.spec, rank), "-backup-", pod_serial_ + 1)
                  : PodName(job.spec, rank);
  p.uid = StableUid(absl::StrCat("pod/", job.uid, "/", p.name, "/", ++pod_serial_));
  p.node_index = PickNode(occ, job.spec.npus_per_pod, avoid_node, &p.npus);
  if (p.node_index == 0) return false;
  Step step;
  step.kind = Step::Kind::kCreatePod;
  step.object = PodObject(cluster_, job.spec, job.uid, p);
  if (backup) {
    // A backup pod starts like a real one: Pending first, Running a moment later (its own
    // event, which the hot-switch flow waits for).
    step.object["status"]["phase"] = "Pending";
    starting_[p.name] = clock_.Now() + kBackupStartDelay;
    queue_.AddAfter(kSyncKey, kBackupStartDelay);
  }
  // Taken now, so the following decisions of this reconcile see them in use.
  for (int npu : p.npus) occ.used[p.node_index].insert(npu);
  step.placement = std::move(p);
  steps->push_back(std::move(step));
  return true;
}

int MiniScheduler::Execute(const std::vector<Step>& steps) {
  int reschedules = 0;
  for (const Step& step : steps) {
    switch (step.kind) {
      case Step::Kind::kLog:
        Log(step.text);
        break;
      case Step::Kind::kDelete:
        (void)store_.Delete(step.key);
        break;
      case Step::Kind::kPatch:
        (void)store_.Patch(step.key, step.object);
        break;
      case Step::Kind::kCreatePod: {
        const PodPlacement& p = step.placement;
        auto created = store_.Create(store::kPods, step.object);
        if (!created.ok()) {
          if (!absl::IsAlreadyExists(created.status())) {
            LogWarn("sim-scheduler", "pod create failed",
                    {{"pod", p.name}, {"error", created.status().ToString()}});
          }
          if (step.retry) queue_.AddAfter(kSyncKey, absl::Seconds(1));
          break;
        }
        Log(absl::StrCat(p.backup ? "backup pod " : "pod ", p.name, " (rank ", p.rank,
                         ") bound to ", SimNodeName(p.node_index), " NPUs ",
                         absl::StrJoin(p.npus, ",")));
        if (!step.key.name.empty()) {
          store::Object patch = {{"metadata", {{"annotations", {{"backupNewPodName", p.name}}}}}};
          (void)store_.Patch(step.key, patch);
        }
        if (step.reschedule) ++reschedules;
        break;
      }
    }
  }
  return reschedules;
}

void MiniScheduler::Sync() {
  absl::MutexLock sync(&sync_mu_);
  // 1. Read (no lock): the pods, the NPUs' health, each job's PodGroup.
  auto all_pods = store_.List(store::kPods, {});
  if (!all_pods.ok()) {
    queue_.AddAfter(kSyncKey, absl::Seconds(1));
    return;
  }
  Occupancy occ = ReadOccupancy(all_pods->items);
  std::vector<store::ObjectKey> pod_groups;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& name : order_) {
      const JobSpec& spec = jobs_.at(name).spec;
      pod_groups.push_back({std::string(store::kPodGroups), spec.ns, PodGroupName(spec)});
    }
  }
  std::vector<bool> paused_by_job;
  for (const store::ObjectKey& key : pod_groups) {
    auto pg = store_.Get(key);
    paused_by_job.push_back(pg.ok() && Label(*pg, "process-recover-enable") == "pause");
  }

  // The pods of each job, in one pass (a job's own scan would make a sync with many jobs cost
  // jobs x pods, and a sync runs on every pod and PodGroup event).
  std::map<std::pair<std::string, std::string>, std::vector<const store::Object*>> pods_of_job;
  for (const store::Object& pod : all_pods->items) {
    pods_of_job[{pod["metadata"].value("namespace", ""), Label(pod, "job-name")}].push_back(&pod);
  }

  // 2. Decide (under mu_, from the snapshot): the steps, in order.
  std::vector<Step> steps;
  {
    absl::MutexLock lock(&mu_);
    for (size_t j = 0; j < order_.size(); ++j) {
      const std::string& name = order_[j];
      JobState& job = jobs_.at(name);
      const JobSpec& spec = job.spec;
      const bool paused = paused_by_job[j];
      auto pod_key = [&](const std::string& pod_name) {
        return store::ObjectKey{std::string(store::kPods), spec.ns, pod_name};
      };
      auto log = [&](std::string text) {
        Step step;
        step.text = std::move(text);
        steps.push_back(std::move(step));
      };
      auto patch = [&](const std::string& pod_name, store::Object merge_patch) {
        Step step;
        step.kind = Step::Kind::kPatch;
        step.key = pod_key(pod_name);
        step.object = std::move(merge_patch);
        steps.push_back(std::move(step));
      };
      std::vector<const store::Object*> pods = std::move(pods_of_job[{spec.ns, name}]);
      auto delete_pod = [&](const store::Object& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        const std::string pod_name = pod["metadata"].value("name", "");
        const int node = NodeIndexOf(pod["spec"].value("nodeName", ""));
        last_node_[pod_name] = node;
        Step step;
        step.kind = Step::Kind::kDelete;
        step.key = pod_key(pod_name);
        steps.push_back(std::move(step));
        for (absl::string_view n :
             absl::StrSplit(Annotation(pod, "huawei.com/Ascend910"), ',', absl::SkipEmpty())) {
          occ.used[node].erase(NpuIdOf(std::string_view(n.data(), n.size())));
        }
      };
      if (paused && !job.paused) {
        // Job-level rescheduling: every pod of the job goes and comes back.
        job.paused = true;
        ++job_reschedules_;
        log(absl::StrCat("job ", name, " paused by clusterd: rescheduling the whole job"));
        for (const store::Object* pod : pods) delete_pod(*pod);
        pods.clear();
      } else if (!paused) {
        job.paused = false;
      }
      std::set<int> ranks_present;
      std::map<int, const store::Object*> backups;
      for (const store::Object* pod_ptr : pods) {
        const store::Object& pod = *pod_ptr;
        const std::string pod_name = pod["metadata"].value("name", "");
        int rank = -1;
        (void)absl::SimpleAtoi(Annotation(pod, kRankIndexAnnotation), &rank);
        const bool backup = Annotation(pod, "podType") == "backup";
        if (Annotation(pod, "needVolcanoOpe") == "delete" ||
            (backup && Annotation(pod, "needOperatorOpe") == "delete")) {
          log(absl::StrCat("deleting pod ", pod_name, " as clusterd asked"));
          delete_pod(pod);
          continue;
        }
        if (backup) {
          backups[rank] = &pod;
          auto start = starting_.find(pod_name);
          if (start != starting_.end() && clock_.Now() >= start->second) {
            patch(pod_name, {{"status", {{"phase", "Running"}}}});
            starting_.erase(start);
            log(absl::StrCat("backup pod ", pod_name, " is running"));
          }
          continue;
        }
        ranks_present.insert(rank);
        if (Annotation(pod, "needOperatorOpe") == "create" &&
            Annotation(pod, "backupNewPodName").empty()) {
          const int node = NodeIndexOf(pod["spec"].value("nodeName", ""));
          if (PlanPod(job, rank, pod_name, node, occ, &steps)) {
            steps.back().key = pod_key(pod_name);  // annotated once the backup exists
          }
        }
      }
      for (int rank = 0; rank < spec.pods; ++rank) {
        if (ranks_present.count(rank) > 0) continue;
        auto b = backups.find(rank);
        if (b != backups.end()) {
          // Hot switch: the old pod went away; the backup pod takes over the rank.
          const std::string backup_name = (*b->second)["metadata"].value("name", "");
          patch(backup_name, {{"metadata", {{"annotations", {{"podType", nullptr}}}}}});
          log(absl::StrCat("backup pod ", backup_name, " takes over rank ", rank));
          continue;
        }
        auto left = last_node_.find(PodName(spec, rank));
        const int avoid = left != last_node_.end() ? left->second : 0;
        if (PlanPod(job, rank, "", avoid, occ, &steps)) {
          steps.back().reschedule = avoid != 0;
          steps.back().retry = true;
        } else {
          queue_.AddAfter(kSyncKey, absl::Seconds(1));
        }
      }
    }
  }

  // 3. Write (no lock), then record what succeeded.
  const int reschedules = Execute(steps);
  if (reschedules > 0) {
    absl::MutexLock lock(&mu_);
    reschedules_ += reschedules;
  }
}

}  // namespace clusterd::sim
