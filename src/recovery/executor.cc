#include "recovery/executor.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/sv.h"
#include "recovery/cycle_log.h"
#include "recovery/machine.h"
#include "recovery/pod_group_index.h"
#include "recovery/record.h"
#include "recovery/side_effects.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

constexpr char kExecutorLog[] = "recovery";

Counter& NoteCounter(const std::string& kind) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_recovery_notes_total",
      "Unusual situations the recovery controller handled (order mix, stall, reset, ...)",
      {{"kind", kind}});
}

Counter& ErrorCounter(const std::string& what) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_recovery_io_errors_total",
      "Store writes and signal writes of the recovery controller that failed", {{"what", what}});
}

// The controller's own latencies: 250 µs .. 10 s, fine below 10 ms where they lie.
Histogram& LatencyHistogram(std::string_view name, std::string_view help) {
  return MetricsRegistry::Default().GetHistogram(
      name, help,
      {0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.0025, 0.003, 0.004, 0.005, 0.0075, 0.01,
       0.025, 0.05, 0.1, 0.25, 1, 10});
}

Histogram& QueueWait() {
  static Histogram& histogram = LatencyHistogram(
      "clusterd_recovery_queue_wait_seconds",
      "From an event posted to a job's controller (a report, a fault, a view change) until the "
      "job's strand takes it up");
  return histogram;
}

Histogram& FirstSignalLatency() {
  static Histogram& histogram = LatencyHistogram(
      "clusterd_recovery_first_signal_seconds",
      "From an event posted to a job's controller to the first signal it queues on the job's "
      "stream (records and store writes before it included; the transport not)");
  return histogram;
}

Gauge& NotDurableJobs() {
  static Gauge& gauge = MetricsRegistry::Default().GetGauge(
      "clusterd_recovery_jobs_not_durable",
      "Jobs whose recovery record cannot be written now: their signals and answers are held");
  return gauge;
}

Counter& SignalCounter(const std::string& type) {
  return MetricsRegistry::Default().GetCounter("clusterd_recovery_signals_total",
                                               "ProcessManageSignals written, by signalType",
                                               {{"signal_type", type}});
}

// When a command of a step is carried out, relative to the job's durable record.
//
// The rule the record keeps is that nothing a client can act on leaves before the state that
// sent it is in the store: signals, O&M pushes, closed streams and RPC answers. Writing the
// record once per step (as the steps come) put two record writes and a pod label on the way
// from a ReportProcessFault to its first signal; now the record is written when something
// visible needs it and when the strand goes idle, so a report costs one record write.
//
// Without exception: when the record cannot be written, a kAfterRecord command, the rest of its
// step, the answers waiting for the record and the batch's labels are held, the job's further
// events wait in its inbox, and the write is retried with back-off on the clock; the moment it
// succeeds everything held is carried out in order and the inbox is taken up again. A SIGKILL
// meanwhile loses the unwritten state, but no client has seen anything of it.
//
// * kAfterRecord: the record is written first (signals, pushes, stream ends, forgetting).
// * kWithRecord: answers to the job's RPCs go out right after the next record write, so a
//   report is acknowledged only once it is durable, and before the signal or stream end that
//   needed the write: as in the original, the answer to a report precedes what it caused.
// * kAtEnd: pod and node labels (information for the scheduler and operators, never read back
//   by the controller, never awaited) go after the batch's signals.
// * kNow: everything else, in order (awaited store writes, timers, fault-centre calls). A crash
//   between such a store write and the record leaves the write ahead of the record; the resumed
//   cycle re-issues its own pending write and reaches the same write again.
enum class CommandTiming { kNow, kAfterRecord, kWithRecord, kAtEnd };

CommandTiming TimingOf(const Command& command) {
  if (std::holds_alternative<SendSignal>(command) ||
      std::holds_alternative<PushSwitchRankList>(command) ||
      std::holds_alternative<PushStressTestParams>(command) ||
      std::holds_alternative<OmMessage>(command) || std::holds_alternative<EndStreams>(command) ||
      std::holds_alternative<ForgetJob>(command)) {
    return CommandTiming::kAfterRecord;
  }
  if (std::holds_alternative<ReplyReport>(command)) return CommandTiming::kWithRecord;
  if (std::holds_alternative<PatchPod>(command) || std::holds_alternative<PatchNode>(command)) {
    return CommandTiming::kAtEnd;
  }
  return CommandTiming::kNow;
}

}  // namespace

RecoveryExecutor::RecoveryExecutor(store::ObjectStore& store, Clock& clock, SignalSink& sink,
                                   FaultCentrePort* fault_centre, PodLister pod_lister)
    : store_(store),
      clock_(clock),
      sink_(sink),
      fault_centre_(fault_centre),
      pod_lister_(std::move(pod_lister)),
      controller_({.name = "recovery"}, clock,
                  [this](const std::string& job_id, int) { return Reconcile(job_id); }) {}

RecoveryExecutor::~RecoveryExecutor() { Stop(); }

absl::StatusOr<JobView> RecoveryExecutor::ReadView(const JobIdentity& id) const {
  absl::StatusOr<store::Object> pg =
      store_.Get({std::string(store::kPodGroups), id.ns, id.pod_group_name});
  if (!pg.ok() && pg.status().code() != absl::StatusCode::kNotFound) return pg.status();
  absl::StatusOr<std::vector<store::Object>> pods =
      pod_lister_ ? pod_lister_(id.ns, id.pod_group_name) : ListPodsOf(id.ns, id.pod_group_name);
  if (!pods.ok()) return pods.status();
  JobView view = BuildJobView(pg.ok() ? &*pg : nullptr, *pods, naming_);
  view.job_name = id.job_name;
  return view;
}

absl::StatusOr<std::vector<store::Object>> RecoveryExecutor::ListPodsOf(
    const std::string& ns, const std::string& pod_group) const {
  store::ListOptions options;
  options.ns = ns;
  absl::StatusOr<store::ObjectList> pods = store_.List(store::kPods, options);
  if (!pods.ok()) return pods.status();
  std::vector<store::Object> mine;
  for (store::Object& pod : pods->items) {
    if (PodGroupOf(pod) == pod_group) mine.push_back(std::move(pod));
  }
  return mine;
}

std::shared_ptr<RecoveryExecutor::Job> RecoveryExecutor::Find(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

bool RecoveryExecutor::HasJob(const std::string& job_id) const { return Find(job_id) != nullptr; }

std::vector<std::string> RecoveryExecutor::Jobs() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [id, _] : jobs_) out.push_back(id);
  return out;
}

absl::Status RecoveryExecutor::AddJob(const JobIdentity& id, const JobConfig& config) {
  if (HasJob(id.job_id)) return absl::OkStatus();
  // A job whose record cannot even be named could never be durable (see CommandTiming).
  if (absl::Status named = CheckRecordName(id.job_id); !named.ok()) return named;
  auto job = std::make_shared<Job>();
  job->id = id;
  JobRecovery state = NewJobRecovery(id.job_id, config);
  std::vector<Command> resume;
  absl::StatusOr<store::Object> record =
      store_.Get({std::string(store::kConfigMaps), id.ns, RecordConfigMapName(id.job_id)});
  if (record.ok()) {
    absl::StatusOr<JobRecovery> restored = RecordFromConfigMap(*record);
    if (!restored.ok()) {
      LogWarn(kExecutorLog, "recovery record ignored",
              {{"job", id.job_id}, {"error", restored.status()}});
      ErrorCounter("record_unreadable").Increment();
    } else if (restored->state != State::kInit) {
      state = *std::move(restored);
      resume = ResumeCommands(state);
      LogInfo(kExecutorLog, "recovery cycle resumed from its record",
              {{"job", id.job_id}, {"state", StateName(state.state)}});
    }
    absl::MutexLock lock(&job->mu);
    job->last_record = record->value(
        store::Object::json_pointer("/data/" + std::string(kRecordKey)), std::string());
    if (restored.ok()) job->recorded_uuid = restored->uuid;
  }
  {
    absl::MutexLock lock(&job->mu);
    job->state = std::move(state);
    absl::StatusOr<JobView> view = ReadView(id);
    if (view.ok()) job->inbox.push_back(JobViewChanged{*std::move(view)});
    for (const Command& c : resume) Execute(*job, c);
  }
  {
    absl::MutexLock lock(&mu_);
    jobs_.emplace(id.job_id, job);
  }
  controller_.Enqueue(id.job_id);
  return absl::OkStatus();
}

absl::StatusOr<int> RecoveryExecutor::RestoreAll() {
  absl::StatusOr<store::LabelSelector> selector =
      store::LabelSelector::Parse(absl::StrCat(Sv(kRecordLabel), "=true"));
  if (!selector.ok()) return selector.status();
  store::ListOptions options;
  options.selector = *selector;
  absl::StatusOr<store::ObjectList> records = store_.List(store::kConfigMaps, options);
  if (!records.ok()) return records.status();
  const store::ObjectList& list = *records;
  int resumed = 0;
  for (const store::Object& cm : list.items) {
    absl::StatusOr<JobRecovery> restored = RecordFromConfigMap(cm);
    if (!restored.ok() || restored->state == State::kInit) continue;
    JobIdentity id;
    id.job_id = restored->job_id;
    id.ns = store::NamespaceOf(cm);
    // The names are re-read from the view; the record keeps what Register gave.
    id.pod_group_name =
        cm.value(store::Object::json_pointer("/metadata/annotations/podGroup"), std::string());
    id.job_name =
        cm.value(store::Object::json_pointer("/metadata/annotations/jobName"), std::string());
    if (HasJob(id.job_id)) continue;
    if (absl::Status s = AddJob(id, restored->config); !s.ok()) return s;
    ++resumed;
  }
  return resumed;
}

absl::Status RecoveryExecutor::Post(const std::string& job_id, Event event) {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr) {
    return absl::NotFoundError(absl::StrCat("jobId=", job_id, " not registed"));
  }
  {
    absl::MutexLock lock(&job->mu);
    job->inbox.push_back(std::move(event));
    if (job->posted_at == absl::InfiniteFuture()) job->posted_at = clock_.Now();
  }
  controller_.Enqueue(job_id);
  return absl::OkStatus();
}

absl::Status RecoveryExecutor::RefreshView(const std::string& job_id) {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr)
    return absl::NotFoundError(absl::StrCat("job ", job_id, " has no controller"));
  absl::StatusOr<JobView> view = ReadView(job->id);
  if (!view.ok()) return view.status();
  return Post(job_id, JobViewChanged{*std::move(view)});
}

void RecoveryExecutor::QueueDueTimers(Job& job) {
  // Held: the inbox is not taken up, and the timers stay due (queued once the record is written).
  if (!job.durability.durable) return;
  const absl::Time now = clock_.Now();
  for (const auto& [kind, at] : job.state.timers) {
    if (at <= now) job.inbox.push_back(TimerFired{kind, at});
  }
}

bool RecoveryExecutor::CarryOut(Job& job, Command& command, absl::Time posted_at, bool* signalled) {
  switch (TimingOf(command)) {
    case CommandTiming::kNow:
      Execute(job, command);
      return true;
    case CommandTiming::kAfterRecord:
      if (!Persist(job)) return false;
      Answer(job);
      Execute(job, command);
      if (posted_at != absl::InfiniteFuture() && !*signalled &&
          std::holds_alternative<SendSignal>(command)) {
        *signalled = true;
        FirstSignalLatency().Observe(absl::ToDoubleSeconds(clock_.Now() - posted_at));
      }
      return true;
    case CommandTiming::kWithRecord:
      job.replies.push_back(std::move(command));
      return true;
    case CommandTiming::kAtEnd:
      job.at_end.push_back(std::move(command));
      return true;
  }
  return true;
}

void RecoveryExecutor::Answer(Job& job) {
  std::vector<Command> replies = std::exchange(job.replies, {});
  for (const Command& c : replies) Execute(job, c);
}

size_t RecoveryExecutor::Drain(const std::shared_ptr<Job>& job) {
  absl::MutexLock lock(&job->mu);
  // Metrics only (on the executor's clock, real in clusterd).
  absl::Time posted_at = absl::InfiniteFuture();
  bool signalled = false;
  bool released = false;
  if (!job->durability.durable) {
    // Held (see CommandTiming): nothing moves until the record is written.
    if (clock_.Now() < job->durability.next_retry) return 0;
    if (!Persist(*job)) return 0;
    released = true;
    std::vector<Command> held = std::exchange(job->held, {});
    // The record now holds the state these commands came from: none of them can stop again.
    for (Command& c : held) CarryOut(*job, c, posted_at, &signalled);
    QueueDueTimers(*job);
  }
  size_t processed = 0;
  posted_at = std::exchange(job->posted_at, absl::InfiniteFuture());
  if (posted_at != absl::InfiniteFuture()) {
    QueueWait().Observe(absl::ToDoubleSeconds(clock_.Now() - posted_at));
  }
  while (!job->inbox.empty()) {
    Event event = std::move(job->inbox.front());
    job->inbox.pop_front();
    const std::string before_decided = job->state.decided;
    Step step = Advance(job->state, event, clock_.Now());
    job->state = std::move(step.next);
    LogCycleStep(absl::StrCat(job->id.ns, "/",
                              job->id.job_name.empty() ? job->id.pod_group_name : job->id.job_name),
                 before_decided, job->state, step.commands, clock_.Now(), &job->cycle,
                 cycle_observer_);
    ++processed;
    for (size_t i = 0; i < step.commands.size(); ++i) {
      if (CarryOut(*job, step.commands[i], posted_at, &signalled)) continue;
      // The record this command needs is not in the store: it and the rest of its step wait.
      job->held.assign(std::make_move_iterator(step.commands.begin() + i),
                       std::make_move_iterator(step.commands.end()));
      return processed;
    }
  }
  if (processed == 0 && !released) return 0;
  // The strand goes idle with its record in the store and every reply sent.
  if (!Persist(*job)) return processed;
  Answer(*job);
  std::vector<Command> at_end = std::exchange(job->at_end, {});
  for (const Command& c : at_end) Execute(*job, c);
  return processed;
}

bool RecoveryExecutor::Persist(Job& job) {
  if (job.state.state == State::kInit && job.last_record.empty()) {
    RecordDurable(job);
    return true;
  }
  const std::string text = CanonicalJson(RecordToJson(job.state));
  if (text == job.last_record) {
    RecordDurable(job);
    return true;
  }
  store::Object cm = RecordConfigMap(job.state.job_id, job.id.ns, text);
  cm["metadata"]["annotations"]["podGroup"] = job.id.pod_group_name;
  cm["metadata"]["annotations"]["jobName"] = job.id.job_name;
  // A job's first record is usually new: creating it first spares a failed update.
  const bool first = job.last_record.empty();
  absl::StatusOr<store::Object> written =
      first ? store_.Create(store::kConfigMaps, cm) : store_.Update(store::kConfigMaps, cm);
  if (!written.ok() && first && absl::IsAlreadyExists(written.status())) {
    written = store_.Update(store::kConfigMaps, cm);
  } else if (!written.ok() && !first && absl::IsNotFound(written.status())) {
    written = store_.Create(store::kConfigMaps, cm);
  }
  if (!written.ok()) {
    RecordFailed(job, written.status());
    return false;
  }
  job.last_record = text;
  job.recorded_uuid = job.state.uuid;
  RecordDurable(job);
  return true;
}

void RecoveryExecutor::RecordFailed(Job& job, const absl::Status& error) {
  ErrorCounter("record").Increment();
  Durability& d = job.durability;
  const absl::Time now = clock_.Now();
  const absl::Duration backoff =
      std::min(kRecordRetryMax, kRecordRetryFirst * (int64_t{1} << std::min(d.failures, 16)));
  ++d.failures;
  d.error = error.ToString();
  d.next_retry = now + backoff;
  if (d.durable) {
    // One line per streak: the retries are counted, not logged.
    d.durable = false;
    d.since = now;
    NotDurableJobs().Add(1);
    LogError(kExecutorLog, "recovery record not written: the job's signals and answers are held",
             {{"job", job.id.job_id},
              {"state", StateName(job.state.state)},
              {"error", error},
              {"retry_in", absl::FormatDuration(backoff)}});
  }
  // The job's reconcile asks to be woken at next_retry (NextWake).
}

void RecoveryExecutor::RecordDurable(Job& job) {
  Durability& d = job.durability;
  if (d.durable) return;
  NotDurableJobs().Add(-1);
  LogInfo(kExecutorLog, "recovery record written: held signals and answers released",
          {{"job", job.id.job_id},
           {"failed_writes", d.failures},
           {"held_for", absl::FormatDuration(clock_.Now() - d.since)}});
  d = Durability{};
}

bool RecoveryExecutor::WriteReset(const Job& job, const WriteResetConfig& write) {
  const store::ObjectKey key{std::string(store::kConfigMaps), job.id.ns,
                             ResetConfigMapName(job.id.job_name)};
  absl::Status last;
  for (int attempt = 0; attempt < std::max(write.attempts, 1); ++attempt) {
    absl::StatusOr<store::Object> old = store_.Get(key);
    if (!old.ok()) {
      last = old.status();
      continue;
    }
    absl::StatusOr<store::Object> updated = ResetConfigMapUpdate(
        *old, write.op, write.ranks, write.restart_fault_process, clock_.Now());
    if (!updated.ok()) {
      last = updated.status();
      break;  // hot-reset mode or a malformed body: retrying cannot help
    }
    absl::StatusOr<store::Object> done = store_.Update(store::kConfigMaps, *std::move(updated));
    if (done.ok()) return true;
    last = done.status();
  }
  LogWarn(kExecutorLog, "reset ConfigMap not written",
          {{"job", job.id.job_id}, {"operation", ResetOperationName(write.op)}, {"error", last}});
  ErrorCounter("reset_config").Increment();
  return false;
}

bool RecoveryExecutor::Patch(const store::ObjectKey& key, const store::Object& patch,
                             int attempts) {
  absl::Status last;
  for (int attempt = 0; attempt < std::max(attempts, 1); ++attempt) {
    absl::StatusOr<store::Object> done = store_.Patch(key, patch);
    if (done.ok()) return true;
    last = done.status();
    if (last.code() == absl::StatusCode::kNotFound) break;
  }
  LogWarn(kExecutorLog, "patch failed", {{"object", key.ToString()}, {"error", last}});
  ErrorCounter(key.resource).Increment();
  return false;
}

void RecoveryExecutor::RemoveFaultJobInfo(const std::string& job_id) {
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(kFaultJobInfoNamespace),
                             std::string(kFaultJobInfoName)};
  absl::StatusOr<store::Object> cm = store_.Get(key);
  if (!cm.ok()) return;
  const store::Object& data = (*cm)["data"];
  if (!data.is_object() || !data.contains(job_id)) return;
  Patch(key, FaultJobInfoRemovalPatch(job_id), 3);
}

void RecoveryExecutor::WriteFaultJobInfo(const Job& job, const std::vector<int64_t>& pod_ranks) {
  // §11.5: the super pods of the job's nodes (the pods' allocation `super_pod_id`), split into
  // the nodes of the faulty pods and the others.
  const JobView& view = job.state.view;
  std::set<std::string> faulty;
  for (int64_t rank : pod_ranks) {
    if (const PodView* pod = view.Pod(rank); pod != nullptr && !pod->node.empty()) {
      faulty.insert(pod->node);
    }
  }
  std::map<std::string, std::string> super_pod_of_node;
  for (const auto& [rank, pod] : view.pods) {
    if (pod.node.empty() || pod.super_pod_id < 0) continue;
    super_pod_of_node.emplace(pod.node, std::to_string(pod.super_pod_id));
  }
  const std::string value = FaultJobInfoValue(super_pod_of_node, faulty);
  const std::string& job_id = job.id.job_id;
  const store::ObjectKey key{std::string(store::kConfigMaps), std::string(kFaultJobInfoNamespace),
                             std::string(kFaultJobInfoName)};
  store::Object patch;
  patch["data"][job_id] = value;
  absl::StatusOr<store::Object> existing = store_.Get(key);
  if (existing.ok() || existing.status().code() != absl::StatusCode::kNotFound) {
    Patch(key, patch, 3);
    return;
  }
  // Created if absent (§11.5).
  absl::StatusOr<store::Object> created =
      store_.Create(store::kConfigMaps, FaultJobInfoConfigMap(job_id, value));
  if (!created.ok() && created.status().code() == absl::StatusCode::kAlreadyExists) {
    Patch(key, patch, 3);  // created by another job in between
  } else if (!created.ok()) {
    LogWarn(kExecutorLog, "fault-job-info not written",
            {{"job", job_id}, {"error", created.status()}});
    ErrorCounter("fault_job_info").Increment();
  }
}

void RecoveryExecutor::Execute(Job& job, const Command& command) {
  const std::string& job_id = job.id.job_id;
  if (const auto* c = std::get_if<SendSignal>(&command)) {
    const bool ok = sink_.WriteSignal(job_id, c->signal);
    if (ok) SignalCounter(c->signal.signal_type).Increment();
    if (!ok) ErrorCounter("signal").Increment();
    if (c->await_result) job.inbox.push_back(SignalWritten{c->id, ok});
  } else if (const auto* c = std::get_if<PushSwitchRankList>(&command)) {
    job.inbox.push_back(SignalWritten{c->id, sink_.PushSwitchRankList(job_id, c->params)});
  } else if (const auto* c = std::get_if<PushStressTestParams>(&command)) {
    job.inbox.push_back(SignalWritten{c->id, sink_.PushStressTestParams(job_id, c->params)});
  } else if (const auto* c = std::get_if<OmMessage>(&command)) {
    sink_.QueueOmMessage(job_id, c->kind, c->text);
  } else if (const auto* c = std::get_if<WriteResetConfig>(&command)) {
    const bool ok = WriteReset(job, *c);
    if (c->id != 0) job.inbox.push_back(WriteDone{c->id, ok});
  } else if (const auto* c = std::get_if<PatchPodGroup>(&command)) {
    const bool ok = Patch({std::string(store::kPodGroups), job.id.ns, job.id.pod_group_name},
                          c->patch, c->attempts);
    if (c->id != 0) job.inbox.push_back(WriteDone{c->id, ok});
  } else if (const auto* c = std::get_if<PatchPod>(&command)) {
    Patch({std::string(store::kPods), job.id.ns, c->pod_name}, c->patch, c->attempts);
  } else if (const auto* c = std::get_if<PatchNode>(&command)) {
    Patch({std::string(store::kNodes), "", c->node}, c->patch, c->attempts);
  } else if (const auto* c = std::get_if<UpdateFaultJobInfo>(&command)) {
    if (c->remove) {
      const absl::Time at = clock_.Now() + c->delay;
      // The job's reconcile asks to be woken then (NextWake).
      absl::MutexLock lock(&mu_);
      removals_.push_back({at, job_id});
    } else {
      WriteFaultJobInfo(job, c->pod_ranks);
    }
  } else if (std::holds_alternative<ArmTimer>(command)) {
    // The timer is in the state; the job's reconcile asks to be woken for it (NextWake).
  } else if (const auto* c = std::get_if<ReplyReport>(&command)) {
    sink_.Reply(c->ticket, c->code, c->info);
  } else if (const auto* c = std::get_if<ReportRetryFaults>(&command)) {
    if (fault_centre_ != nullptr) fault_centre_->ReportRetryFaults(job_id, c->faults, c->at);
  } else if (const auto* c = std::get_if<ReportNotRetryable>(&command)) {
    if (fault_centre_ != nullptr) fault_centre_->ReportNotRetryable(job_id, c->pod_ranks);
  } else if (const auto* c = std::get_if<IgnoreStressTestFaults>(&command)) {
    if (fault_centre_ != nullptr) {
      fault_centre_->IgnoreStressTestFaults(job_id, c->nodes, c->ignore);
    }
  } else if (const auto* c = std::get_if<EndStreams>(&command)) {
    sink_.EndStreams(job_id, c->keep_stream_id);
  } else if (std::holds_alternative<ForgetJob>(command)) {
    absl::Status s =
        store_.Delete({std::string(store::kConfigMaps), job.id.ns, RecordConfigMapName(job_id)});
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
      LogWarn(kExecutorLog, "recovery record not deleted", {{"job", job_id}, {"error", s}});
    }
    job.last_record.clear();
    // The controller itself goes once this strand has finished (see Drain callers).
    absl::MutexLock lock(&mu_);
    jobs_.erase(job_id);
  } else if (const auto* c = std::get_if<Note>(&command)) {
    NoteCounter(c->kind).Increment();
    LogInfo(kExecutorLog, c->message, {{"job", job_id}, {"kind", c->kind}});
  }
}

void RecoveryExecutor::Start(int workers) { controller_.Start(workers); }

void RecoveryExecutor::Stop() { controller_.Stop(); }

runtime::Result RecoveryExecutor::Reconcile(const std::string& job_id) {
  std::shared_ptr<Job> job = Find(job_id);
  if (job != nullptr) {
    {
      absl::MutexLock lock(&job->mu);
      QueueDueTimers(*job);
    }
    Drain(job);
  }
  // Delayed clean-ups of this job's fault-job entry (they outlive its controller).
  std::vector<std::string> removals;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    for (auto it = removals_.begin(); it != removals_.end();) {
      if (it->at <= now && it->job_id == job_id) {
        removals.push_back(it->job_id);
        it = removals_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::string& id : removals) RemoveFaultJobInfo(id);
  const absl::Time next = NextWake(job_id, job.get());
  if (next == absl::InfiniteFuture()) return runtime::Result::Done();
  return runtime::Result::RequeueAfter(next - clock_.Now());
}

absl::Time RecoveryExecutor::NextWake(const std::string& job_id, Job* job) const {
  absl::Time next = absl::InfiniteFuture();
  const absl::Time now = clock_.Now();
  if (job != nullptr) {
    absl::MutexLock lock(&job->mu);
    for (const auto& [kind, at] : job->state.timers) {
      if (at > now && at < next) next = at;
    }
    // Held: the record's retry, and the timers that fell due meanwhile once it is written.
    if (!job->durability.durable) next = std::min(next, job->durability.next_retry);
  }
  absl::MutexLock lock(&mu_);
  for (const DelayedRemoval& removal : removals_) {
    if (removal.job_id == job_id) next = std::min(next, removal.at);
  }
  return next;
}

std::optional<JobRecovery> RecoveryExecutor::Snapshot(const std::string& job_id) const {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr) return std::nullopt;
  absl::MutexLock lock(&job->mu);
  return job->state;
}

std::string RecoveryExecutor::CurrentUuid(const std::string& job_id) const {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr) return "";
  absl::MutexLock lock(&job->mu);
  return job->durability.durable ? job->state.uuid : job->recorded_uuid;
}

std::optional<RecoveryExecutor::Durability> RecoveryExecutor::RecordDurability(
    const std::string& job_id) const {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr) return std::nullopt;
  absl::MutexLock lock(&job->mu);
  return job->durability;
}

size_t RecoveryExecutor::QueuedEvents(const std::string& job_id) const {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr) return 0;
  absl::MutexLock lock(&job->mu);
  return job->inbox.size();
}

}  // namespace clusterd::recovery
