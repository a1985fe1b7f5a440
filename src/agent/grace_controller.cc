#include "agent/grace_controller.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/agent_metrics.h"
#include "agent/config_map_io.h"
#include "common/log.h"
#include "model/config_map_names.h"
#include "model/reset_info.h"

namespace clusterd::agent {
namespace {

constexpr std::string_view kGraceControllerLog = "npu-agent";

std::string StringAt(const store::Object& o, std::initializer_list<std::string_view> path) {
  const store::Object* cur = &o;
  for (std::string_view key : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(key);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

// Physical ids of the pod's devices, from the first allocation annotation of `keys` it has
// (§1.4 of jobs-ranktable-diagnosis.md).
std::vector<int> AllocatedNpus(const store::Object& pod, const std::vector<std::string>& keys) {
  for (std::string_view key : keys) {
    const std::string text = StringAt(pod, {"metadata", "annotations", key});
    if (text.empty()) continue;
    const store::Object parsed = store::Object::parse(text, nullptr, /*allow_exceptions=*/false);
    std::vector<int> npus;
    if (!parsed.is_object() || !parsed.contains("devices") || !parsed["devices"].is_array()) {
      return npus;
    }
    for (const store::Object& d : parsed["devices"]) {
      int id = 0;
      if (d.is_object() && d.contains("device_id") && d["device_id"].is_string() &&
          absl::SimpleAtoi(d["device_id"].get<std::string>(), &id)) {
        npus.push_back(id);
      }
    }
    std::sort(npus.begin(), npus.end());
    return npus;
  }
  return {};
}

}  // namespace

GraceController::GraceController(std::string node, GraceOptions options, store::ObjectStore& store)
    : node_(std::move(node)), options_(std::move(options)), store_(store) {}

void GraceController::RefreshJobs(faults::DeviceFaultEngine& engine) {
  // Only this node's pods, selected by the store (the API server on the kube store): an agent
  // runs on every node, and each listing (or caching) every pod of the cluster does not scale.
  store::ListOptions options;
  options.fields = store::FieldSelector::Equal("spec.nodeName", node_);
  auto pods = store_.List(store::kPods, options);
  if (!pods.ok()) {
    LogWarn(kGraceControllerLog, "cannot list pods", {{"error", pods.status()}});
    return;
  }
  absl::flat_hash_set<int> in_use;
  std::map<std::string, std::vector<JobNpu>> found;
  std::map<std::string, std::pair<std::string, std::string>> names;
  npu_job_.clear();
  for (const store::Object& pod : pods->items) {
    if (StringAt(pod, {"spec", "nodeName"}) != node_) continue;
    const std::string phase = StringAt(pod, {"status", "phase"});
    if (phase == "Succeeded" || phase == "Failed") continue;
    const std::vector<int> npus = AllocatedNpus(pod, options_.allocation_keys);
    if (npus.empty()) continue;
    in_use.insert(npus.begin(), npus.end());
    std::string job = StringAt(pod, {"metadata", "labels", "job-name"});
    if (job.empty()) job = StringAt(pod, {"metadata", "labels", "volcano.sh/job-name"});
    if (job.empty()) continue;
    const std::string ns = store::NamespaceOf(pod);
    int64_t rank_index = 0;
    (void)absl::SimpleAtoi(StringAt(pod, {"metadata", "annotations", "hccl/rankIndex"}),
                           &rank_index);
    const std::string key = ns + "/" + job;
    names[key] = {ns, job};
    for (size_t i = 0; i < npus.size(); ++i) {
      // Global rank of the device: pod rank x devices per pod + index (inferred).
      found[key].push_back({npus[i], static_cast<int>(rank_index * npus.size() + i)});
      npu_job_[npus[i]] = key;
    }
  }
  if (in_use != engine.npus_in_use()) engine.SetNpusInUse(in_use);

  if (!options_.enabled) return;
  // Jobs that opted in: those with a reset-config ConfigMap.
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    it = found.contains(it->first) ? std::next(it) : jobs_.erase(it);
  }
  for (auto& [key, npus] : found) {
    const auto& [ns, job] = names[key];
    auto cm = ReadConfigMapData(store_, ns, model::ResetConfigMapName(job));
    if (!cm.ok()) {
      // Unknown, not absent (the kube store asks the server for it, which may be unreachable):
      // a job keeps its tracker, and its recovery state, until the answer is known.
      LogWarn(kGraceControllerLog, "cannot read reset-config",
              {{"job", key}, {"error", cm.status()}});
      if (auto it = jobs_.find(key); it != jobs_.end()) it->second.npus = npus;
      continue;
    }
    if (!cm->has_value()) {
      jobs_.erase(key);
      continue;
    }
    Job& entry = jobs_[key];
    if (entry.tracker == nullptr) {
      entry.ns = ns;
      entry.name = job;
      entry.tracker =
          std::make_unique<faults::GraceJobTracker>(engine.policy().customization.grace_tolerance(),
                                                    options_.profile.ResetWithoutPersistence());
    }
    entry.tracker->SetConfig(engine.policy().customization.grace_tolerance());
    entry.npus = npus;
  }
}

void GraceController::BeforeCycle(faults::DeviceFaultEngine& engine, int64_t now_ms,
                                  std::vector<AgentEvent>* driver_events) {
  RefreshJobs(engine);  // NPUs in use matter for health with or without graceful tolerance
  if (!options_.enabled) return;
  for (auto it = resets_.begin(); it != resets_.end();) {
    if (it->done_ms > now_ms) {
      ++it;
      continue;
    }
    for (int npu : it->ring) engine.SetResetting(npu, false);
    for (int npu : it->requested) {
      const faults::NpuFaultState* state = engine.Npu(npu);
      const bool success =
          !options_.reset_fail_npus.contains(npu) && state != nullptr &&
          !model::IsMoreSevere(state->level[0], model::FaultLevel::kPreSeparateNPU);
      outcomes_.push_back({npu, success});
      LogInfo(kGraceControllerLog, "hot reset finished",
              {{"npu", npu}, {"success", success ? "true" : "false"}});
      if (!success) continue;
      // The driver re-initialised the ring: its chip faults are gone.
      for (int ring_npu : it->ring) {
        const faults::NpuFaultState* s = engine.Npu(ring_npu);
        if (s == nullptr) continue;
        for (const faults::ActiveCode& c : s->codes[0]) {
          driver_events->push_back(faults::NpuFaultEvent{
              ring_npu, c.code, faults::Assertion::kRecover, now_ms, std::nullopt});
        }
      }
    }
    it = resets_.erase(it);
  }
}

std::vector<faults::GraceNpuView> GraceController::Views(const Job& job,
                                                         const faults::DeviceFaultEngine& engine,
                                                         const std::set<int>& resetting) const {
  const std::string key = job.ns + "/" + job.name;
  std::vector<faults::GraceNpuView> views;
  for (const JobNpu& jn : job.npus) {
    const faults::NpuFaultState* s = engine.Npu(jn.npu);
    if (s == nullptr) continue;
    faults::GraceNpuView v;
    v.npu_id = jn.npu;
    v.rank_id = jn.rank;
    v.level = s->level[0];
    std::vector<std::string> hex;
    v.fault_since_ms = INT64_MAX;
    for (const faults::ActiveCode& c : s->codes[0]) {
      v.error_codes.push_back(static_cast<int64_t>(c.code));
      hex.push_back(engine.policy().UpperHex(c.code));
      v.fault_since_ms = std::min(v.fault_since_ms, c.first_seen_ms);
    }
    if (v.fault_since_ms == INT64_MAX) v.fault_since_ms = 0;
    v.error_code_hex = absl::StrJoin(hex, ",");
    // The ring is idle when no other job holds one of its NPUs and no reset is running on it.
    v.ring_idle = true;
    for (int r : faults::ResetRing(jn.npu, options_.num_npus,
                                   options_.profile.ResetRingSize(options_.num_npus))) {
      auto owner = npu_job_.find(r);
      if ((owner != npu_job_.end() && owner->second != key) || resetting.contains(r)) {
        v.ring_idle = false;
      }
    }
    views.push_back(std::move(v));
  }
  return views;
}

void GraceController::AfterCycle(faults::DeviceFaultEngine& engine, int64_t now_ms) {
  if (!options_.enabled) return;
  retry_ms_.reset();
  for (auto& [key, job] : jobs_) {
    std::set<int> resetting;
    for (const Reset& r : resets_) resetting.insert(r.ring.begin(), r.ring.end());
    std::vector<faults::GraceResetOutcome> outcomes;
    for (const faults::GraceResetOutcome& o : outcomes_) {
      auto owner = npu_job_.find(o.npu_id);
      if (owner != npu_job_.end() && owner->second == key) outcomes.push_back(o);
    }
    faults::GraceCommands commands =
        job.tracker->Advance(Views(job, engine, resetting), outcomes, now_ms);
    for (int npu : commands.hot_reset) {
      auto running = std::find_if(resets_.begin(), resets_.end(), [&](const Reset& r) {
        return std::find(r.ring.begin(), r.ring.end(), npu) != r.ring.end();
      });
      if (running != resets_.end()) {
        running->requested.push_back(npu);
        continue;
      }
      Reset reset;
      reset.ring = faults::ResetRing(npu, options_.num_npus,
                                     options_.profile.ResetRingSize(options_.num_npus));
      reset.requested = {npu};
      reset.done_ms = now_ms + options_.reset_duration_ms;
      for (int r : reset.ring) engine.SetResetting(r, true);
      LogInfo(kGraceControllerLog, "hot reset started",
              {{"job", key}, {"npu", npu}, {"ring", absl::StrJoin(reset.ring, ",")}});
      resets_.push_back(std::move(reset));
    }
    for (int npu : commands.isolate) {
      engine.SetForcedIsolation(npu, true);
      LogWarn(kGraceControllerLog, "graceful recovery failed; NPU isolated",
              {{"job", key}, {"npu", npu}});
    }
    if (commands.write_reset_config || job.write_pending) {
      job.write_pending = !WriteResetConfig(job, now_ms);
      if (job.write_pending) retry_ms_ = now_ms + 1000;
    }
  }
  outcomes_.clear();
}

bool GraceController::WriteResetConfig(Job& job, int64_t now_ms) {
  const std::string name = model::ResetConfigMapName(job.name);
  auto object = store_.Get({std::string(store::kConfigMaps), job.ns, name});
  if (!object.ok()) {
    LogWarn(kGraceControllerLog, "cannot read reset-config",
            {{"configmap", name}, {"error", object.status()}});
    return absl::IsNotFound(object.status());  // gone with its job: nothing to retry
  }
  model::TaskResetInfo info;
  const ConfigMapData data = DataOf(*object);
  if (auto it = data.find(std::string(model::kResetJsonKey)); it != data.end()) {
    auto current = model::ParseTaskResetInfo(it->second);
    if (current.ok()) {
      info.retry_time = current->retry_time;
      const bool has_isolate = std::any_of(
          current->rank_list.begin(), current->rank_list.end(),
          [](const model::TaskDevInfo& d) { return d.policy == model::kPolicyIsolate; });
      if (has_isolate && !job.tracker->RankList().empty()) {
        // §1.5: the plugin never overwrites an isolate decision with a new RankList.
        AgentMetrics::Writes("resetconfig", "refused").Increment();
        return true;
      }
    }
  }
  info.rank_list = job.tracker->RankList();
  info.update_time = now_ms / 1000;
  (*object)["data"][std::string(model::kResetJsonKey)] = model::RenderTaskResetInfo(info);
  (*object)["data"][std::string(model::kResetCheckCodeKey)] = model::TaskResetInfoCheckCode(info);
  auto updated = store_.Update(store::kConfigMaps, *object);
  if (!updated.ok()) {
    AgentMetrics::Writes("resetconfig", "error").Increment();
    LogWarn(kGraceControllerLog, "reset-config write failed; retrying",
            {{"configmap", name}, {"error", updated.status()}});
    return false;
  }
  AgentMetrics::Writes("resetconfig", "ok").Increment();
  return true;
}

std::optional<int64_t> GraceController::NextDeadlineMs() const {
  std::optional<int64_t> best = retry_ms_;
  auto consider = [&best](std::optional<int64_t> t) {
    if (t.has_value() && (!best.has_value() || *t < *best)) best = t;
  };
  for (const auto& [key, job] : jobs_) consider(job.tracker->NextDeadlineMs());
  for (const Reset& r : resets_) consider(r.done_ms);
  return best;
}

}  // namespace clusterd::agent
