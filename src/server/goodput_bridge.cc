#include "server/goodput_bridge.h"

#include <algorithm>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/background_thread.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "model/fault_level.h"
#include "server/dashboard.h"

namespace clusterd::server {
namespace {

constexpr char kGoodputBridgeLog[] = "goodput";
constexpr char kConfigMapName[] = "clusterd-config-cm";
constexpr char kStateSource[] = "cluster-system/clusterd-goodput";
constexpr char kPolicySource[] = "cluster-system/clusterd-config-cm";

Gauge& UseGauge(cluster::TimeUse use) {
  return MetricsRegistry::Default().GetGauge(
      "clusterd_goodput_seconds",
      "Time of the tracked jobs by use (training, or the cause of lost time), in seconds.",
      {{"use", std::string(cluster::ToString(use))}});
}

Gauge& EttrGauge() {
  return MetricsRegistry::Default().GetGauge(
      "clusterd_goodput_ettr",
      "Training time over counted time of every tracked job, over the sliding window.");
}

Gauge& OffendersGauge() {
  return MetricsRegistry::Default().GetGauge("clusterd_repeat_offenders",
                                             "Nodes currently judged repeat offenders.");
}

// The periodic passes over every job (the tick's sums, the save), which a report's latency can
// meet: 1 ms .. 10 s.
Histogram& PassSeconds(std::string_view pass) {
  return MetricsRegistry::Default().GetHistogram(
      "clusterd_goodput_pass_seconds",
      "Time of the goodput bridge's periodic passes: the 5 s tick's sums over every job (under the "
      "bridge's lock), and a save of the changed job records",
      {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 10}, {{"pass", std::string(pass)}});
}

Counter& PolicyCounter(std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_repeat_offender_policy_total",
      "Repeat-offender policies read from clusterd-config-cm, by result (applied, refused).",
      {{"result", std::string(result)}});
}

Counter& VerdictCounter(std::string_view action, std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_repeat_offender_verdicts_total",
      "Nodes judged repeat offenders, by the policy's action and whether it was carried out.",
      {{"action", std::string(action)}, {"result", std::string(result)}});
}

std::string FaultKey(const cluster::FaultDevice& d) {
  return absl::StrCat(d.server_name, "|", d.device_id, "|", d.code);
}

// A fault device's time: milliseconds, except for public faults, whose time stays in the
// seconds the sender gave (fault-pipeline.md §7.3 step 1). Below 1e11 a value is seconds (1e11
// ms is March 1973, 1e11 s the year 5138). 0: not given.
std::optional<absl::Time> FaultTimeOf(int64_t raw) {
  if (raw <= 0) return std::nullopt;
  return raw < 100'000'000'000 ? absl::FromUnixSeconds(raw) : absl::FromUnixMillis(raw);
}

}  // namespace

GoodputBridge::GoodputBridge(store::ObjectStore& store, Clock& clock, Options options)
    : store_(store),
      clock_(clock),
      options_(options),
      state_store_(store),
      ledger_(options.ledger),
      offenders_(clock.Now()) {
  // Present from the start, so that a scrape shows the families before any job.
  for (int i = 0; i < cluster::kTimeUseCount; ++i) {
    UseGauge(static_cast<cluster::TimeUse>(i)).Set(0);
  }
  EttrGauge().Set(0);
  OffendersGauge().Set(0);
}

GoodputBridge::~GoodputBridge() { Stop(); }

absl::Status GoodputBridge::Restore() {
  absl::StatusOr<GoodputStateStore::State> saved = state_store_.Load();
  if (!saved.ok()) {
    if (!absl::IsNotFound(saved.status())) {
      GoodputStateCounter("read", "error").Increment();
      return saved.status();
    }
  } else {
    StateLock lock(this);
    auto restore = [&](const char* what, absl::Status s) {
      if (!s.ok()) {
        GoodputStateCounter("read", "malformed").Increment();
        LogWarn(kGoodputBridgeLog, "saved state refused; starting afresh",
                {{"configmap", kStateSource}, {"key", what}, {"error", s}});
      } else {
        GoodputStateCounter("read", "ok").Increment();
      }
    };
    auto parsed = [](const std::string& text) {
      return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    };
    if (!saved->ledger.is_null()) restore("goodput.json", ledger_.Restore(saved->ledger));
    if (!saved->offenders.empty()) {
      restore("offenders.json", offenders_.Restore(parsed(saved->offenders)));
    }
    if (!saved->episodes.empty()) {
      restore("episodes.json", episodes_.Restore(parsed(saved->episodes)));
    }
    LogInfo(kGoodputBridgeLog, "state restored",
            {{"jobs", ledger_.jobs().size()},
             {"nodes", offenders_.nodes().size()},
             {"episodes", episodes_.episodes().size()}});
  }
  ReadPolicy();
  return absl::OkStatus();
}

void GoodputBridge::Start(FaultFeed* feed) {
  if (worker_.joinable()) return;
  worker_ = std::thread([this, feed] {
    SetCurrentThreadName("goodput");
    MarkCurrentThreadBackground();
    Run(feed);
  });
}

void GoodputBridge::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_ && !worker_.joinable()) return;
    stop_ = true;
  }
  if (worker_.joinable()) worker_.join();
  if (absl::Status s = Save(); !s.ok()) {
    LogWarn(kGoodputBridgeLog, "state not saved at stop", {{"error", s}});
  }
}

void GoodputBridge::Run(FaultFeed* feed) {
  // From the feed's start: its backlog holds the faults of the current view, and a fault the
  // saved state already counted (still active) is not counted again.
  uint64_t seen = 0;
  absl::Time next_tick = clock_.Now();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
    }
    if (feed != nullptr && !feed->stopped()) {
      for (const FaultFeed::Entry& e : feed->Since(seen, options_.tick)) {
        seen = std::max(seen, e.seq);
        if (e.change == "occur") {
          OnFaultOccurred(e.node, e.npu, e.code, e.level, e.at);
        } else {
          OnFaultCleared(e.node, e.npu, e.code);
        }
      }
    } else {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), options_.tick);
    }
    if (clock_.Now() >= next_tick) {
      Tick();
      next_tick = clock_.Now() + options_.tick;
    }
  }
}

void GoodputBridge::OnJobSummary(const model::JobSummarySignal& signal) {
  if (signal.job_id.empty()) return;
  const bool deleted = signal.op == model::kJobOperatorDelete;
  StateLock lock(this);
  ledger_.ObserveJob(signal.job_id, absl::StrCat(signal.ns, "/", signal.job_name),
                     model::ParseJobStatus(signal.job_status), deleted, clock_.Now());
  episodes_.NameJob(signal.job_id, absl::StrCat(signal.ns, "/", signal.job_name));
  if (deleted) {
    job_faults_.erase(signal.job_id);
    episode_faults_.erase(signal.job_id);
  }
  dirty_ = true;
}

void GoodputBridge::OnJobFaults(const cluster::JobFaultRanks& faults) {
  std::set<std::string> now_keys;
  std::optional<absl::Time> earliest_new;
  StateLock lock(this);
  NoteEpisodeFaults(faults);
  const std::set<std::string>& before = job_faults_[faults.job_id];
  const absl::Time now = clock_.Now();
  for (const cluster::FaultDevice& d : faults.devices) {
    if (!cluster::InterruptsTraining(d.level)) continue;
    std::string key = FaultKey(d);
    if (!before.contains(key)) {
      const absl::Time at = FaultTimeOf(d.fault_time_ms).value_or(now);
      earliest_new = std::min(earliest_new.value_or(at), at);
    }
    now_keys.insert(std::move(key));
  }
  if (now_keys.empty()) {
    ledger_.ObserveFaults(faults.job_id, std::nullopt, now);
    job_faults_.erase(faults.job_id);
  } else {
    if (earliest_new.has_value()) ledger_.ObserveFaults(faults.job_id, *earliest_new, now);
    job_faults_[faults.job_id] = std::move(now_keys);
  }
  dirty_ = true;
}

void GoodputBridge::NoteEpisodeFaults(const cluster::JobFaultRanks& faults) {
  std::set<std::string>& before = episode_faults_[faults.job_id];
  std::set<std::string> now_keys;
  std::vector<cluster::EpisodeFault> hit;
  for (const cluster::FaultDevice& d : faults.devices) {
    if (d.level.empty() || d.level == model::kLevelNotHandleFault) continue;
    std::string key = FaultKey(d);
    if (!before.contains(key) && !now_keys.contains(key)) {
      hit.push_back({d.server_name, d.device_id, d.code, d.level,
                     FaultTimeOf(d.fault_time_ms).value_or(absl::InfinitePast())});
    }
    now_keys.insert(std::move(key));
  }
  const absl::Time now = clock_.Now();
  if (!hit.empty()) episodes_.FaultsHit(faults.job_id, JobNameOf(faults.job_id), hit, now);
  if (now_keys.empty()) {
    episodes_.FaultsCleared(faults.job_id, now);
    episode_faults_.erase(faults.job_id);
  } else {
    before = std::move(now_keys);
  }
}

std::string GoodputBridge::JobNameOf(const std::string& job_id) const {
  const cluster::JobGoodput* job = ledger_.Find(job_id);
  return job == nullptr ? "" : job->name;
}

void GoodputBridge::OnCycleStarted(const std::string& job_id, absl::Time at) {
  absl::MutexLock lock(&cycle_events_mu_);
  cycle_events_.push_back({CycleEvent::Kind::kStarted, job_id, "", at});
}

void GoodputBridge::OnStrategyDecided(const std::string& job_id, const std::string& strategy,
                                      absl::Time at) {
  absl::MutexLock lock(&cycle_events_mu_);
  cycle_events_.push_back({CycleEvent::Kind::kDecided, job_id, strategy, at});
}

void GoodputBridge::OnCycleEnded(const std::string& job_id, const std::string&,
                                 const std::string& outcome, absl::Time at) {
  absl::MutexLock lock(&cycle_events_mu_);
  cycle_events_.push_back({CycleEvent::Kind::kEnded, job_id, outcome, at});
}

GoodputBridge::StateLock::StateLock(const GoodputBridge* bridge) : bridge_(bridge) {
  bridge_->mu_.Lock();
  bridge_->ApplyCycleEventsLocked();
}

GoodputBridge::StateLock::~StateLock() { bridge_->mu_.Unlock(); }

void GoodputBridge::ApplyCycleEventsLocked() const {
  std::vector<CycleEvent> events;
  {
    absl::MutexLock lock(&cycle_events_mu_);
    events.swap(cycle_events_);
  }
  for (const CycleEvent& e : events) {
    switch (e.kind) {
      case CycleEvent::Kind::kStarted:
        ledger_.CycleStarted(e.job_id, e.at);
        episodes_.CycleStarted(e.job_id, JobNameOf(e.job_id), e.at);
        break;
      case CycleEvent::Kind::kDecided:
        ledger_.StrategyDecided(e.job_id, e.detail, e.at);
        episodes_.StrategyDecided(e.job_id, e.detail, e.at);
        break;
      case CycleEvent::Kind::kEnded:
        ledger_.CycleEnded(e.job_id, e.at);
        episodes_.CycleEnded(e.job_id, e.detail, e.at);
        break;
    }
    dirty_ = true;
  }
}

void GoodputBridge::OnFaultOccurred(const std::string& node, const std::string& npu,
                                    const std::string& code, const std::string& level,
                                    absl::Time at) {
  std::optional<cluster::OffenderVerdict> verdict;
  {
    StateLock lock(this);
    verdict = offenders_.ObserveFault(node, npu, code, level, at);
    dirty_ = true;
  }
  if (verdict.has_value()) Act(*verdict);
}

void GoodputBridge::OnFaultCleared(const std::string& node, const std::string& npu,
                                   const std::string& code) {
  StateLock lock(this);
  offenders_.ObserveClear(node, npu, code);
}

void GoodputBridge::ReadPolicy() {
  absl::StatusOr<store::Object> cm = store_.Get(store::ObjectKey{
      std::string(store::kConfigMaps), std::string(kGoodputNamespace), kConfigMapName});
  std::string text;
  if (cm.ok()) {
    const nlohmann::json data = cm->value("data", nlohmann::json::object());
    if (data.is_object() && data.contains(kOffenderPolicyKey) &&
        data[std::string(kOffenderPolicyKey)].is_string()) {
      text = data[std::string(kOffenderPolicyKey)].get<std::string>();
    }
  } else if (!absl::IsNotFound(cm.status())) {
    return;  // the store is away: keep what we have
  }
  std::vector<cluster::OffenderVerdict> verdicts;
  {
    StateLock lock(this);
    if (text == policy_text_) return;
    policy_text_ = text;
    cluster::OffenderPolicy policy;  // absent: off
    if (!text.empty()) {
      absl::StatusOr<cluster::OffenderPolicy> parsed = cluster::ParseOffenderPolicy(text);
      if (!parsed.ok()) {
        PolicyCounter("refused").Increment();
        LogWarn(kGoodputBridgeLog, "repeat-offender policy refused; the previous one stays",
                {{"configmap", kPolicySource},
                 {"key", std::string(kOffenderPolicyKey)},
                 {"error", parsed.status()},
                 {"policy", offenders_.policy().ToJson().dump()}});
        return;
      }
      policy = *std::move(parsed);
    }
    if (policy == offenders_.policy()) return;
    PolicyCounter("applied").Increment();
    LogInfo(kGoodputBridgeLog, "repeat-offender policy applied",
            {{"configmap", kPolicySource}, {"policy", policy.ToJson().dump()}});
    verdicts = offenders_.SetPolicy(std::move(policy), clock_.Now());
    dirty_ = true;
  }
  for (const auto& v : verdicts) Act(v);
}

void GoodputBridge::Act(const cluster::OffenderVerdict& verdict) {
  LogInfo(kGoodputBridgeLog, "repeat offender",
          {{"node", verdict.node}, {"action", verdict.action}, {"reason", verdict.reason}});
  if (verdict.action == "none") {
    VerdictCounter(verdict.action, "done").Increment();
    return;
  }
  const store::ObjectKey key{std::string(store::kNodes), "", verdict.node};
  store::Object patch = {{"metadata", {{"annotations", {{kOffenderAnnotation, verdict.reason}}}}}};
  if (verdict.action == "cordon") {
    patch["spec"] = {{"unschedulable", true}};
  } else {
    // A merge patch replaces the taint list: read it, add ours once, write it back on the
    // version read (a conflict fails, logged and counted, rather than drop another's taint).
    absl::StatusOr<store::Object> node = store_.Get(key);
    if (!node.ok()) {
      VerdictCounter(verdict.action, "failed").Increment();
      LogWarn(kGoodputBridgeLog, "repeat offender not tainted",
              {{"node", verdict.node}, {"error", node.status()}});
      return;
    }
    nlohmann::json taints = nlohmann::json::array();
    if (auto spec = node->find("spec");
        spec != node->end() && spec->contains("taints") && (*spec)["taints"].is_array()) {
      taints = (*spec)["taints"];
    }
    const bool present = std::any_of(taints.begin(), taints.end(), [](const nlohmann::json& t) {
      return t.is_object() && t.value("key", "") == kOffenderAnnotation;
    });
    if (!present) {
      taints.push_back(
          {{"key", std::string(kOffenderAnnotation)}, {"value", "true"}, {"effect", "NoSchedule"}});
    }
    patch["spec"] = {{"taints", std::move(taints)}};
    patch["metadata"]["resourceVersion"] =
        (*node)["metadata"].value("resourceVersion", std::string());
  }
  absl::StatusOr<store::Object> patched = store_.Patch(key, patch);
  if (!patched.ok()) {
    VerdictCounter(verdict.action, "failed").Increment();
    LogWarn(kGoodputBridgeLog, "repeat-offender action failed",
            {{"node", verdict.node}, {"action", verdict.action}, {"error", patched.status()}});
    return;
  }
  VerdictCounter(verdict.action, "done").Increment();
}

void GoodputBridge::Tick() {
  ReadPolicy();
  const absl::Time now = clock_.Now();
  bool save_due = false;
  {
    StateLock lock(this);
    const absl::Time begun = clock_.Now();
    absl::Cleanup observed = [&] {
      PassSeconds("tick").Observe(absl::ToDoubleSeconds(clock_.Now() - begun));
    };
    offenders_.Expire(now);
    if (size_t pruned = ledger_.Prune(now); pruned > 0) {
      dirty_ = true;
      LogInfo(kGoodputBridgeLog, "deleted jobs pruned", {{"jobs", pruned}});
    }
    absl::Duration by_use[cluster::kTimeUseCount] = {};
    absl::Duration window_training, window_counted;
    const absl::Duration window = ledger_.options().window;
    for (const auto& [id, job] : ledger_.jobs()) {
      for (int i = 0; i < cluster::kTimeUseCount; ++i) {
        by_use[i] += job.Total(static_cast<cluster::TimeUse>(i), now);
      }
      const cluster::JobGoodput::WindowShare share = job.Window(now, window);
      window_training += share.training;
      window_counted += share.counted;
    }
    for (int i = 0; i < cluster::kTimeUseCount; ++i) {
      UseGauge(static_cast<cluster::TimeUse>(i)).Set(absl::ToDoubleSeconds(by_use[i]));
    }
    EttrGauge().Set(window_counted > absl::ZeroDuration()
                        ? absl::ToDoubleSeconds(window_training) /
                              absl::ToDoubleSeconds(window_counted)
                        : 0);
    // Recovery cycles in flight, and how long the oldest has run: "a job stuck in recovery".
    int64_t cycles_running = 0;
    absl::Duration oldest_cycle;
    for (const auto& [id, job] : ledger_.jobs()) {
      if (!job.cycle_running || job.deleted) continue;
      ++cycles_running;
      if (job.cycle_started != absl::InfinitePast()) {
        oldest_cycle = std::max(oldest_cycle, now - job.cycle_started);
      }
    }
    MetricsRegistry::Default()
        .GetGauge("clusterd_recovery_cycles_running", "Recovery cycles in flight now.")
        .Set(static_cast<double>(cycles_running));
    MetricsRegistry::Default()
        .GetGauge("clusterd_recovery_oldest_cycle_seconds",
                  "How long the oldest recovery cycle in flight has run, in seconds (0: none).")
        .Set(absl::ToDoubleSeconds(oldest_cycle));
    int64_t offenders = 0;
    for (const auto& [node, r] : offenders_.nodes()) offenders += r.offender ? 1 : 0;
    OffendersGauge().Set(static_cast<double>(offenders));
    save_due = dirty_ && now - last_save_ >= options_.save_every;
  }
  if (save_due) {
    if (absl::Status s = Save(); !s.ok()) {
      LogWarn(kGoodputBridgeLog, "state not saved; will retry", {{"error", s}});
    }
  }
}

absl::Status GoodputBridge::Save() {
  // One save at a time, so that an older snapshot never overwrites a newer one.
  absl::MutexLock saving(&save_mu_);
  GoodputStateStore::Changes changes;
  const absl::Time now = clock_.Now();
  {
    StateLock lock(this);
    if (!dirty_) return absl::OkStatus();
    // Only the records that changed: the state store keeps the rest, and rewrites every shard
    // after a failed write.
    cluster::GoodputLedger::SaveDelta delta = ledger_.TakeSaveDelta(now);
    changes.records = std::move(delta.records);
    changes.removed = std::move(delta.removed);
    changes.offenders = offenders_.Save().dump();
    changes.episodes = episodes_.Save().dump();
    dirty_ = false;
    last_save_ = now;
  }
  // From `now`: the records built under the lock, then written.
  absl::Cleanup observed = [&] {
    PassSeconds("save").Observe(absl::ToDoubleSeconds(clock_.Now() - now));
  };
  if (absl::Status s = state_store_.WriteChanges(changes); !s.ok()) {
    StateLock lock(this);
    dirty_ = true;
    return s;
  }
  return absl::OkStatus();
}

nlohmann::ordered_json GoodputBridge::GoodputList(const std::string& ns) const {
  const absl::Time now = clock_.Now();
  StateLock lock(this);
  std::vector<const cluster::JobGoodput*> jobs;
  for (const auto& [id, job] : ledger_.jobs()) {
    if (!ns.empty() && job.name.rfind(ns + "/", 0) != 0) continue;
    jobs.push_back(&job);
  }
  std::sort(jobs.begin(), jobs.end(), [](const auto* a, const auto* b) {
    return std::tie(a->name, a->job_id) < std::tie(b->name, b->job_id);
  });
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const auto* job : jobs) items.push_back(ledger_.JobJson(*job, now));
  return {{"kind", "GoodputList"},
          {"windowSeconds", absl::ToDoubleSeconds(ledger_.options().window)},
          {"items", std::move(items)}};
}

absl::StatusOr<nlohmann::ordered_json> GoodputBridge::GoodputOf(const std::string& job,
                                                                const std::string& ns) const {
  const absl::Time now = clock_.Now();
  StateLock lock(this);
  if (const cluster::JobGoodput* j = ledger_.Find(job); j != nullptr) {
    return ledger_.JobJson(*j, now);
  }
  std::vector<const cluster::JobGoodput*> matches;
  for (const auto& [id, j] : ledger_.jobs()) {
    const size_t slash = j.name.find('/');
    const std::string name = slash == std::string::npos ? j.name : j.name.substr(slash + 1);
    const std::string job_ns = slash == std::string::npos ? "" : j.name.substr(0, slash);
    if (j.name == job || (name == job && (ns.empty() || job_ns == ns))) matches.push_back(&j);
  }
  if (matches.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no goodput record of job ", job, ns.empty() ? "" : " in namespace " + ns));
  }
  // The same name again (a job re-created): the live one, else the newest.
  const cluster::JobGoodput* best = matches.front();
  for (const auto* m : matches) {
    if ((best->deleted && !m->deleted) ||
        (best->deleted == m->deleted && m->first_seen > best->first_seen)) {
      best = m;
    }
  }
  if (ns.empty()) {
    std::set<std::string> namespaces;
    for (const auto* m : matches) {
      if (!m->deleted) namespaces.insert(m->name.substr(0, m->name.find('/')));
    }
    if (namespaces.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("job name ", job, " is in ", namespaces.size(),
                                                     " namespaces: give ?namespace="));
    }
  }
  return ledger_.JobJson(*best, now);
}

nlohmann::ordered_json GoodputBridge::Offenders() const {
  const absl::Time now = clock_.Now();
  StateLock lock(this);
  return offenders_.ToJson(now);
}

nlohmann::ordered_json GoodputBridge::Episodes(const std::string& job) const {
  const absl::Time now = clock_.Now();
  StateLock lock(this);
  return episodes_.ToJson(job, now);
}

}  // namespace clusterd::server
