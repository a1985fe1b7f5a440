#include "server/recovery_bridge.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/time_format.h"
#include "recovery/job_config.h"
#include "recovery/machine.h"
#include "recovery/record.h"
#include "recovery/signal.h"
#include "recovery/vocabulary.h"
#include "server/recover_convert.h"

namespace clusterd::server {
namespace {

constexpr char kRecoveryBridgeLog[] = "recover-service";
constexpr char kTickKey[] = "#tick";
// Keep-alives are due 5 s after each stream opened, so a tick that wakes when the next one is
// due spreads them as the streams opened: a fixed tick sends every keep-alive due since the
// last at once, a burst that delays any signal queued behind it, in clusterd and in the clients
// reading it (at 20,000 streams a 100 ms tick sent 400 at once; with 1,000, a 1 s tick 200).
// The tick runs at least every kTickPeriod (OM waiters expire then), and at most every
// kMinTickGap: at 20,000 streams, about 20 keep-alives a wake.
constexpr absl::Duration kTickPeriod = absl::Milliseconds(100);
constexpr absl::Duration kMinTickGap = absl::Milliseconds(5);

std::string PodGroupKey(const std::string& ns, const std::string& name) {
  return absl::StrCat(ns, "/", name);
}

recovery::StringMap StringsOf(const store::Object& object) {
  recovery::StringMap out;
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

// The PodGroup informer's index of controller owners (the job's uid, which is its jobId).
constexpr std::string_view kPodGroupOwnerIndex = "recovery-podgroup-owner";

// The controller ownerReference of `object` (uid, name), if any.
std::optional<std::pair<std::string, std::string>> ControllerOwner(const store::Object& object) {
  const store::Object* refs = nullptr;
  if (object.contains("metadata") && object["metadata"].contains("ownerReferences")) {
    refs = &object["metadata"]["ownerReferences"];
  }
  if (refs == nullptr || !refs->is_array()) return std::nullopt;
  for (const store::Object& r : *refs) {
    if (!r.is_object() || !r.value("controller", false)) continue;
    return std::make_pair(r.value("uid", std::string()), r.value("name", std::string()));
  }
  return std::nullopt;
}

}  // namespace

// recovery::FaultCentrePort onto cluster::FaultCentre (recovery-protocol.md §8.2 step 5, §9.8,
// §13).
class RecoveryBridge::FaultPort final : public recovery::FaultCentrePort {
 public:
  explicit FaultPort(cluster::FaultCentre* centre) : centre_(centre) {}

  void ReportRetryFaults(const std::string& job_id, const std::vector<recovery::FaultRank>& faults,
                         absl::Time) override {
    if (centre_ == nullptr) return;
    for (const recovery::FaultRank& f : faults)
      centre_->ReportBusinessRetry(job_id, f.rank, f.type);
  }
  void ReportNotRetryable(const std::string& job_id,
                          const std::vector<int64_t>& pod_ranks) override {
    if (centre_ != nullptr) centre_->ReportNotRetryable(job_id, pod_ranks);
  }
  void IgnoreStressTestFaults(const std::string& job_id, const std::vector<std::string>& nodes,
                              bool ignore) override {
    std::set<std::string> all;
    {
      absl::MutexLock lock(&mu_);
      if (ignore) {
        nodes_[job_id] = std::set<std::string>(nodes.begin(), nodes.end());
      } else {
        nodes_.erase(job_id);
      }
      for (const auto& [job, set] : nodes_) all.insert(set.begin(), set.end());
    }
    if (centre_ != nullptr) centre_->SetStressTestNodes(std::move(all));
  }

 private:
  cluster::FaultCentre* centre_;
  absl::Mutex mu_;
  std::map<std::string, std::set<std::string>> nodes_ ABSL_GUARDED_BY(mu_);
};

RecoveryBridge::RecoveryBridge(store::ObjectStore& store, Clock& clock, cluster::JobRegistry* jobs,
                               cluster::FaultCentre* faults, Options options,
                               store::InformerFactory* informers)
    : store_(store),
      own_informers_(informers == nullptr ? std::make_unique<store::InformerFactory>(store)
                                          : nullptr),
      informers_(informers != nullptr ? informers : own_informers_.get()),
      clock_(clock),
      jobs_(jobs),
      options_(options),
      sink_(clock),
      fault_port_(std::make_unique<FaultPort>(faults)),
      executor_(std::make_unique<recovery::RecoveryExecutor>(
          store, clock, sink_, fault_port_.get(),
          [this](const std::string& ns, const std::string& pod_group) {
            return recovery::PodsOfGroup(informers_->For(store::kPods), store_, ns, pod_group);
          })),
      controller_({.name = "recover_bridge", .thread_name = "recover-bridge", .background = true},
                  clock, [this](const std::string& key, int) { return Reconcile(key); }) {
  executor_->SetDeviceNaming(options_.naming);
  // AlreadyExists: another bridge over the same informers registered the same function.
  (void)informers_->For(store::kPods)
      .AddIndex(recovery::kPodGroupIndex, recovery::PodGroupIndexValues);
  (void)informers_->For(store::kPodGroups)
      .AddIndex(kPodGroupOwnerIndex, [](const store::Object& pg) -> std::vector<std::string> {
        auto owner = ControllerOwner(pg);
        if (!owner.has_value() || owner->first.empty()) return {};
        return {owner->first};
      });
}

RecoveryBridge::~RecoveryBridge() { Stop(); }

absl::Status RecoveryBridge::Start(bool run_threads) {
  if (started_) return absl::OkStatus();
  started_ = true;
  absl::StatusOr<int> resumed = executor_->RestoreAll();
  if (!resumed.ok()) {
    // A store that cannot list ConfigMaps now still serves; recorded cycles resume at Register.
    LogWarn(kRecoveryBridgeLog, "recorded recovery cycles not restored",
            {{"error", resumed.status()}});
  } else if (*resumed > 0) {
    LogInfo(kRecoveryBridgeLog, "recorded recovery cycles resumed", {{"jobs", *resumed}});
  }
  LoadRecordedIdentities();

  store::SharedInformer& pods = informers_->For(store::kPods);
  if (absl::Status s = pods.Start(); !s.ok()) return s;
  registrations_.push_back(
      pods.AddHandler({.on_event = [this](const store::WatchEvent& e) { OnPodEvent(e); }}));
  store::SharedInformer& groups = informers_->For(store::kPodGroups);
  if (absl::Status s = groups.Start(); !s.ok()) return s;
  registrations_.push_back(
      groups.AddHandler({.on_event = [this](const store::WatchEvent& e) { OnPodGroupEvent(e); }}));

  if (run_threads) {
    executor_->Start(options_.workers);
    controller_.EnqueueAfter(kTickKey, kTickPeriod);
    controller_.Start();
  }
  return absl::OkStatus();
}

void RecoveryBridge::Stop() {
  if (!started_) return;
  started_ = false;
  registrations_.clear();
  controller_.Stop();
  executor_->Stop();
  sink_.CloseAll();
  if (own_informers_ != nullptr) own_informers_->Stop();
}

void RecoveryBridge::LoadRecordedIdentities() {
  absl::StatusOr<store::LabelSelector> selector =
      store::LabelSelector::Parse(absl::StrCat(std::string(recovery::kRecordLabel), "=true"));
  if (!selector.ok()) return;
  store::ListOptions options;
  options.selector = *selector;
  absl::StatusOr<store::ObjectList> records = store_.List(store::kConfigMaps, options);
  if (!records.ok()) return;
  absl::MutexLock lock(&mu_);
  for (const store::Object& cm : records->items) {
    absl::StatusOr<recovery::JobRecovery> r = recovery::RecordFromConfigMap(cm);
    if (!r.ok()) continue;
    recovery::JobIdentity id;
    id.job_id = r->job_id;
    id.ns = store::NamespaceOf(cm);
    id.pod_group_name =
        cm.value(store::Object::json_pointer("/metadata/annotations/podGroup"), std::string());
    id.job_name =
        cm.value(store::Object::json_pointer("/metadata/annotations/jobName"), std::string());
    Remember(id);
  }
}

void RecoveryBridge::Remember(const recovery::JobIdentity& id) {
  identities_[id.job_id] = id;
  jobs_of_pod_group_[PodGroupKey(id.ns, id.pod_group_name)].insert(id.job_id);
}

std::optional<recovery::JobIdentity> RecoveryBridge::IdentityOf(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = identities_.find(job_id);
  if (it == identities_.end()) return std::nullopt;
  return it->second;
}

// ---- Init / Register (§2.3) ----

absl::StatusOr<std::pair<recovery::JobIdentity, store::Object>> RecoveryBridge::ResolvePodGroup(
    const std::string& job_id) const {
  if (job_id.empty()) return absl::InvalidArgumentError("empty jobId");
  if (jobs_ != nullptr) {
    if (std::optional<cluster::JobRecord> r = jobs_->FindJob(job_id);
        r.has_value() && !r->pod_group_name.empty() && !r->ns.empty()) {
      absl::StatusOr<store::Object> pg =
          store_.Get({std::string(store::kPodGroups), r->ns, r->pod_group_name});
      if (pg.ok()) {
        return std::make_pair(recovery::JobIdentity{job_id, r->ns, r->pod_group_name, r->name},
                              *std::move(pg));
      }
      if (pg.status().code() != absl::StatusCode::kNotFound) return pg.status();
    }
  }
  // Not (yet) in the registry: the PodGroup whose controller owner is the job, from the PodGroup
  // informer's owner index; a list of every PodGroup only while that informer has not seen it
  // (it was created a moment ago, or the informer is not started).
  std::vector<store::Object> candidates;
  for (const auto& pg : informers_->For(store::kPodGroups).ByIndex(kPodGroupOwnerIndex, job_id)) {
    candidates.push_back(*pg);
  }
  if (candidates.empty()) {
    absl::StatusOr<store::ObjectList> groups = store_.List(store::kPodGroups, {});
    if (!groups.ok()) return groups.status();
    candidates = std::move(groups->items);
  }
  for (store::Object& pg : candidates) {
    auto owner = ControllerOwner(pg);
    if (!owner.has_value() || owner->first != job_id) continue;
    recovery::JobIdentity id{job_id, store::NamespaceOf(pg), store::NameOf(pg), owner->second};
    if (id.ns.empty() || id.pod_group_name.empty() || id.job_name.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("PodGroup of job ", job_id, " has an empty namespace, name or owner name"));
    }
    return std::make_pair(std::move(id), std::move(pg));
  }
  return absl::NotFoundError(absl::StrCat("no PodGroup is owned by job ", job_id));
}

RecoveryBridge::Answer RecoveryBridge::Init(const std::string& job_id) {
  // Refused before anything else: such a job could be served only without a durable record.
  if (absl::Status named = recovery::CheckRecordName(job_id); !named.ok()) {
    return {recovery::kCodeInvalidReqParam,
            absl::StrCat("job(uid=", job_id, ") init failed: ", named.message())};
  }
  {
    absl::MutexLock lock(&mu_);
    if (inited_.contains(job_id)) return {0, recovery::InitSuccessInfo(job_id)};
  }
  auto resolved = ResolvePodGroup(job_id);
  if (!resolved.ok()) {
    return {
        recovery::kCodeOperatePodGroupError,
        absl::StrCat("job(uid=", job_id, ") get podGroup failed: ", resolved.status().message())};
  }
  auto& [id, pg] = *resolved;
  const store::Object& meta = pg["metadata"];
  recovery::JobConfig config =
      recovery::BuildJobConfig(StringsOf(meta.value("labels", store::Object::object())),
                               StringsOf(meta.value("annotations", store::Object::object())));
  if (!recovery::InitAdmits(config)) {
    return {recovery::kCodeProcessRecoverEnableOff, recovery::InitRefusalInfo(job_id)};
  }
  absl::MutexLock lock(&mu_);
  inited_.emplace(job_id, InitRecord{id, std::move(config)});
  Remember(id);
  return {0, recovery::InitSuccessInfo(job_id)};
}

RecoveryBridge::Answer RecoveryBridge::Register(const std::string& job_id) {
  static constexpr char kRegisterSuccess[] = "register success";
  if (absl::Status named = recovery::CheckRecordName(job_id); !named.ok()) {
    return {recovery::kCodeInvalidReqParam,
            absl::StrCat("jobId=", job_id, " register err:", named.message())};
  }
  if (executor_->HasJob(job_id)) return {0, kRegisterSuccess};
  std::optional<InitRecord> init;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = inited_.find(job_id); it != inited_.end()) init = it->second;
  }
  if (!init.has_value()) {
    return {recovery::kCodeUnInit, absl::StrCat("jobId=", job_id, " not inited")};
  }
  const store::ObjectKey key{std::string(store::kPodGroups), init->id.ns, init->id.pod_group_name};
  if (absl::StatusOr<store::Object> pg = store_.Get(key); !pg.ok()) {
    if (pg.status().code() == absl::StatusCode::kNotFound) {
      return {recovery::kCodeJobNotExist,
              absl::StrCat("jobId=", job_id, " not exist, reuse registry")};
    }
    return {recovery::kCodeOperatePodGroupError,
            absl::StrCat("jobId=", job_id, " register err:", pg.status().message())};
  }
  if (executor_->Jobs().size() >= options_.max_jobs) {
    return {recovery::kCodeOutOfMaxServeJobs,
            absl::StrCat("out of max serve jobs, reuse registry for jobId=", job_id)};
  }
  store::Object patch = {{"metadata",
                          {{"labels",
                            {{std::string(recovery::kLabelProcessRecoverEnable),
                              std::string(recovery::kProcessRecoverOn)}}}}}};
  absl::Status patched;
  for (int attempt = 0; attempt < std::max(options_.pod_group_attempts, 1); ++attempt) {
    patched = store_.Patch(key, patch).status();
    if (patched.ok() || patched.code() == absl::StatusCode::kNotFound) break;
  }
  if (!patched.ok()) {
    return {recovery::kCodeOperatePodGroupError,
            absl::StrCat("jobId=", job_id, " register err:", patched.message())};
  }
  if (absl::Status added = executor_->AddJob(init->id, init->config); !added.ok()) {
    return {recovery::kCodeOperatePodGroupError,
            absl::StrCat("jobId=", job_id, " register err:", added.message())};
  }
  LogInfo(kRecoveryBridgeLog, "job registered for recovery",
          {{"job", job_id}, {"namespace", init->id.ns}, {"pod_group", init->id.pod_group_name}});
  RepostFaults(job_id);
  return {0, kRegisterSuccess};
}

void RecoveryBridge::RepostFaults(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  if (hw_latest_.contains(job_id)) controller_.Enqueue(absl::StrCat("hw/", job_id));
}

// ---- inputs ----

void RecoveryBridge::OnJobFaults(const cluster::JobFaultRanks& faults) {
  recovery::HardwareFaultsPublished delivery = HardwareFaultsOf(faults);
  absl::MutexLock lock(&mu_);
  hw_latest_[faults.job_id] = std::move(delivery);
  controller_.Enqueue(absl::StrCat("hw/", faults.job_id));
}

void RecoveryBridge::OnJobGone(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  hw_latest_.erase(job_id);
}

void RecoveryBridge::OnPodEvent(const store::WatchEvent& event) {
  const std::string group = recovery::PodGroupOf(event.object());
  if (group.empty()) return;
  const std::string ns = store::NamespaceOf(event.object());
  absl::MutexLock lock(&mu_);
  if (jobs_of_pod_group_.contains(PodGroupKey(ns, group))) {
    controller_.Enqueue(absl::StrCat("pg/", PodGroupKey(ns, group)));
  }
}

void RecoveryBridge::OnPodGroupEvent(const store::WatchEvent& event) {
  const std::string key =
      PodGroupKey(store::NamespaceOf(event.object()), store::NameOf(event.object()));
  absl::MutexLock lock(&mu_);
  if (jobs_of_pod_group_.contains(key)) controller_.Enqueue(absl::StrCat("pg/", key));
}

runtime::Result RecoveryBridge::Reconcile(const std::string& key) {
  if (key == kTickKey) return runtime::Result::RequeueAfter(Tick());
  if (absl::StartsWith(key, "hw/")) {
    HandleFaults(key.substr(3));
  } else if (absl::StartsWith(key, "pg/")) {
    const std::string rest = key.substr(3);
    const size_t slash = rest.find('/');
    if (slash != std::string::npos) HandlePodGroup(rest.substr(0, slash), rest.substr(slash + 1));
  }
  return runtime::Result::Done();
}

void RecoveryBridge::HandleFaults(const std::string& job_id) {
  std::optional<recovery::HardwareFaultsPublished> delivery;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = hw_latest_.find(job_id); it != hw_latest_.end()) delivery = it->second;
  }
  // Only registered jobs are considered (§8.1).
  if (!delivery.has_value() || !executor_->HasJob(job_id)) return;
  (void)executor_->Post(job_id, *std::move(delivery));
}

void RecoveryBridge::HandlePodGroup(const std::string& ns, const std::string& name) {
  std::set<std::string> jobs;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_of_pod_group_.find(PodGroupKey(ns, name));
    if (it == jobs_of_pod_group_.end()) return;
    jobs = it->second;
  }
  absl::StatusOr<store::Object> pg = store_.Get({std::string(store::kPodGroups), ns, name});
  if (!pg.ok() && pg.status().code() == absl::StatusCode::kNotFound) {
    // §6.1: deletion resets the controller and forgets the Init record.
    for (const std::string& job_id : jobs) {
      if (executor_->HasJob(job_id)) {
        LogInfo(kRecoveryBridgeLog, "PodGroup deleted: recovery controller removed",
                {{"job", job_id}});
        (void)executor_->Post(job_id, recovery::JobDeleted{});
      }
      absl::MutexLock lock(&mu_);
      inited_.erase(job_id);
      identities_.erase(job_id);
      hw_latest_.erase(job_id);
    }
    absl::MutexLock lock(&mu_);
    jobs_of_pod_group_.erase(PodGroupKey(ns, name));
    return;
  }
  for (const std::string& job_id : jobs) {
    if (!executor_->HasJob(job_id)) continue;
    if (absl::Status s = executor_->RefreshView(job_id); !s.ok()) {
      LogWarn(kRecoveryBridgeLog, "job view not refreshed", {{"job", job_id}, {"error", s}});
    }
  }
}

absl::Duration RecoveryBridge::Tick() {
  const absl::Time now = clock_.Now();
  // Outside the sink's lock: CurrentUuid waits for the job's strand.
  for (auto& [job_id, channel] : sink_.DueKeepAlives(now)) {
    channel->Push(SignalToProto(recovery::KeepAliveSignal(job_id, executor_->CurrentUuid(job_id))));
  }
  sink_.ExpireOmWaiters(now);
  const std::optional<absl::Time> next = sink_.NextKeepAliveDue();
  if (!next.has_value()) return kTickPeriod;
  return std::clamp(*next - clock_.Now(), kMinTickGap, kTickPeriod);
}

size_t RecoveryBridge::RunUntilIdleForTest() {
  size_t total = 0;
  for (;;) {
    const size_t round =
        controller_.RunUntilIdleForTest() + executor_->controller().RunUntilIdleForTest();
    if (round == 0) return total;
    total += round;
  }
}

// ---- queries ----

recovery::JobTopology RecoveryBridge::Topology(const std::string& job_id) const {
  std::optional<cluster::JobRecord> record;
  if (jobs_ != nullptr) record = jobs_->FindJob(job_id);
  return TopologyOf(record, executor_->HasJob(job_id));
}

std::optional<int64_t> RecoveryBridge::WorldSize(const std::string& job_id) const {
  std::optional<recovery::JobRecovery> snap = executor_->Snapshot(job_id);
  if (!snap.has_value()) return std::nullopt;
  return WorldSizeOf(snap->view, ReplicasOf(job_id));
}

int64_t RecoveryBridge::ReplicasOf(const std::string& job_id) const {
  if (jobs_ == nullptr) return 0;
  std::optional<cluster::JobRecord> record = jobs_->FindJob(job_id);
  return record.has_value() ? record->replicas : 0;
}

nlohmann::ordered_json RecoveryBridge::RecoveryList(const std::string& ns) const {
  nlohmann::ordered_json body = {{"kind", "RecoveryList"},
                                 {"items", nlohmann::ordered_json::array()}};
  for (const std::string& job_id : executor_->Jobs()) {
    std::optional<recovery::JobRecovery> snap = executor_->Snapshot(job_id);
    if (!snap.has_value()) continue;
    recovery::JobIdentity id =
        IdentityOf(job_id).value_or(recovery::JobIdentity{job_id, "", "", ""});
    if (!ns.empty() && id.ns != ns) continue;
    body["items"].push_back(
        WithDurability(RecoveryJson(id, *snap, sink_.SignalStreams(job_id) > 0,
                                    WorldSizeOf(snap->view, ReplicasOf(job_id)), clock_.Now()),
                       job_id));
  }
  return body;
}

nlohmann::ordered_json RecoveryBridge::WithDurability(nlohmann::ordered_json item,
                                                      const std::string& job_id) const {
  // Not ready while the job's record cannot be written: its signals and answers are held
  // (recovery::RecoveryExecutor::RecordDurability). `recordDurable` says why.
  const recovery::RecoveryExecutor::Durability d =
      executor_->RecordDurability(job_id).value_or(recovery::RecoveryExecutor::Durability{});
  item["ready"] = d.durable;
  item["recordDurable"] = d.durable;
  if (!d.durable) {
    item["recordError"] = d.error;
    item["recordFailedWrites"] = d.failures;
    item["recordHeldSince"] = Rfc3339Millis(d.since);
  }
  // The signals sent to the job's stream lately, keep-alives left out (watch signals).
  nlohmann::ordered_json signals = nlohmann::ordered_json::array();
  for (const RecoverySink::SentSignal& sent : sink_.SentSignals(job_id)) {
    nlohmann::ordered_json e = {{"at", Rfc3339Millis(sent.at)},
                                {"signalType", sent.signal_type},
                                {"uuid", sent.uuid},
                                {"queued", sent.queued}};
    if (!sent.change_strategy.empty()) e["changeStrategy"] = sent.change_strategy;
    if (!sent.actions.empty()) e["actions"] = sent.actions;
    if (sent.fault_ranks > 0) e["faultRanks"] = sent.fault_ranks;
    signals.push_back(std::move(e));
  }
  item["signals"] = std::move(signals);
  return item;
}

absl::StatusOr<nlohmann::ordered_json> RecoveryBridge::RecoveryOf(const std::string& job,
                                                                  const std::string& ns) const {
  std::string job_id;
  if (executor_->HasJob(job)) {
    job_id = job;
  } else {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, identity] : identities_) {
      if ((identity.job_name == job || identity.pod_group_name == job) &&
          (ns.empty() || identity.ns == ns) && executor_->HasJob(id)) {
        job_id = id;
        break;
      }
    }
  }
  std::optional<recovery::JobRecovery> snap =
      job_id.empty() ? std::nullopt : executor_->Snapshot(job_id);
  if (!snap.has_value()) {
    return absl::NotFoundError(absl::StrCat("job \"", job, "\" has no recovery controller"));
  }
  recovery::JobIdentity id = IdentityOf(job_id).value_or(recovery::JobIdentity{job_id, "", "", ""});
  return WithDurability(RecoveryJson(id, *snap, sink_.SignalStreams(job_id) > 0,
                                     WorldSizeOf(snap->view, ReplicasOf(job_id)), clock_.Now()),
                        job_id);
}

}  // namespace clusterd::server
