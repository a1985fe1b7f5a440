#include "sim/sim_training_job.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"

namespace clusterd::sim {

SimTrainingJob::SimTrainingJob(JobSpec spec, std::string job_uid, std::string grpc_address,
                               store::ObjectStore& store, MiniScheduler& scheduler,
                               std::function<void(const std::string&)> log)
    : spec_(std::move(spec)),
      uid_(std::move(job_uid)),
      store_(store),
      scheduler_(scheduler),
      log_(std::move(log)),
      driver_(uid_) {
  driver_.SetBehaviour(WellBehaved());
  client::RecoverClient::Options options;
  options.address = std::move(grpc_address);
  options.job_id = uid_;
  options.role = "taskd";
  client_ = std::make_unique<client::RecoverClient>(options, this);
  driver_.Attach(client_.get());
}

SimTrainingJob::~SimTrainingJob() { Stop(); }

client::AgentBehaviour SimTrainingJob::WellBehaved() {
  client::AgentBehaviour behaviour;
  behaviour.supported_strategies = {"retry", "recover", "dump", "exit"};
  return behaviour;
}

void SimTrainingJob::FailProcessRecovery() {
  client::AgentBehaviour behaviour = WellBehaved();
  behaviour.status_codes["recover"] = {1};
  behaviour.status_codes["recover-in-place"] = {1};
  behaviour.status_codes["retry"] = {1};
  driver_.SetBehaviour(behaviour);
}

void SimTrainingJob::RestoreBehaviour() { driver_.SetBehaviour(WellBehaved()); }

absl::Status SimTrainingJob::Start() {
  store::WatchOptions options;
  options.ns = spec_.ns;
  const std::string reset_name = absl::StrCat("reset-config-", spec_.name);
  auto watch =
      store_.Watch(store::kConfigMaps, options, [this, reset_name](const store::WatchEvent& e) {
        if (e.type == store::WatchEventType::kDeleted) return;
        if (e.object()["metadata"].value("name", "") != reset_name) return;
        OnResetConfig(e.object());
      });
  if (!watch.ok()) return watch.status();
  reset_watch_ = std::move(*watch);
  client_->Start();
  step_thread_ = std::thread([this] { StepLoop(); });
  return absl::OkStatus();
}

void SimTrainingJob::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  reset_watch_.reset();
  if (client_) client_->Stop();
  if (step_thread_.joinable()) step_thread_.join();
}

absl::Status SimTrainingJob::ReportProcessFault(const std::vector<int>& ranks, int fault_type) {
  std::vector<::FaultRank> faults;
  for (int rank : ranks) faults.push_back(client::RecoverClient::Fault(rank, fault_type));
  auto answer = client_->ReportProcessFault(faults);
  if (!answer.ok()) return answer.status();
  if (answer->code() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("ReportProcessFault answered ", answer->code(), ": ", answer->info()));
  }
  return absl::OkStatus();
}

void SimTrainingJob::OnSignal(const ::ProcessManageSignal& signal) {
  if (signal.signaltype() != "keep-alive") {
    SignalRecord record{absl::Now(),
                        signal.signaltype(),
                        signal.changestrategy(),
                        {signal.actions().begin(), signal.actions().end()}};
    {
      absl::MutexLock lock(&mu_);
      signals_.push_back(record);
    }
    log_(absl::StrCat(
        "job ", spec_.name, " <- ", signal.signaltype(),
        signal.changestrategy().empty() ? "" : " " + signal.changestrategy(),
        signal.actions().empty() ? "" : " [" + absl::StrJoin(signal.actions(), ",") + "]"));
  }
  driver_.OnSignal(signal);
}

void SimTrainingJob::OnSubscribed() { driver_.OnSubscribed(); }

void SimTrainingJob::OnStreamEnd(const grpc::Status& status) { driver_.OnStreamEnd(status); }

void SimTrainingJob::OnResetConfig(const store::Object& cm) {
  if (!cm.contains("data") || !cm["data"].contains("reset.json")) return;
  const std::string text = cm["data"]["reset.json"].get<std::string>();
  auto config = client::ParseResetConfig(text);
  if (!config.ok()) return;
  // Each pod's agent reads the mounted file and acts on its own ranks (§11.1).
  std::vector<int> exiting;
  {
    absl::MutexLock lock(&mu_);
    for (int pod = 0; pod < spec_.pods; ++pod) {
      std::vector<int64_t> own;
      for (int i = 0; i < spec_.npus_per_pod; ++i) own.push_back(pod * spec_.npus_per_pod + i);
      auto& last = pod_last_reset_[pod];
      const client::ResetDirective d = client::DecideResetAction(last, *config, own);
      last = *config;
      if (d.action == client::ResetAction::kExit) exiting.push_back(pod);
    }
  }
  for (int pod : exiting) {
    log_(absl::StrCat("job ", spec_.name, ": agent of pod rank ", pod,
                      " exits (its ranks are in reset.json)"));
    scheduler_.PodExited(spec_.name, pod);
  }
}

void SimTrainingJob::StepLoop() {
  constexpr size_t kMaxTicks = 100000;
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(spec_.step_ms));
    if (stop_) break;
    mu_.Unlock();
    const bool now = training();
    const absl::Time at = absl::Now();
    if (now && profiling_ != nullptr) {
      // Outside the lock: file writes must not hold up signal handling.
      int64_t next = 0;
      {
        absl::MutexLock again(&mu_);
        next = step_ + 1;
      }
      if (absl::Status s = profiling_->Append(next, static_cast<double>(spec_.step_ms)); !s.ok()) {
        log_(absl::StrCat("job ", spec_.name, ": ", s.message()));
      }
    }
    mu_.Lock();
    if (now) ++step_;
    if (ticks_.size() >= kMaxTicks) ticks_.erase(ticks_.begin(), ticks_.begin() + kMaxTicks / 2);
    ticks_.push_back({at, now});
  }
}

absl::Status SimTrainingJob::EnableProfiling(const std::string& root) {
  profiling_ = std::make_unique<SimProfilingFiles>(root, uid_, spec_.pods * spec_.npus_per_pod,
                                                   spec_.npus_per_pod);
  return profiling_->Init();
}

void SimTrainingJob::SetSlowRank(int rank, double magnitude) {
  if (profiling_ != nullptr) profiling_->SetSlowRank(rank, magnitude);
}

int64_t SimTrainingJob::step() const {
  absl::MutexLock lock(&mu_);
  return step_;
}

bool SimTrainingJob::training() const {
  const client::TrainingPhase phase = driver_.phase();
  if (phase != client::TrainingPhase::kTraining && phase != client::TrainingPhase::kScaledIn) {
    return false;
  }
  // Every pod must be there (a replaced pod must have come back).
  return static_cast<int>(scheduler_.Placements(spec_.name).size()) >= spec_.pods;
}

std::string SimTrainingJob::phase() const {
  return std::string(client::TrainingPhaseName(driver_.phase()));
}

int SimTrainingJob::resumed_count() const { return driver_.resumed_count(); }

std::vector<SimTrainingJob::SignalRecord> SimTrainingJob::signals() const {
  absl::MutexLock lock(&mu_);
  return signals_;
}

std::optional<SimTrainingJob::TrainingShare> SimTrainingJob::Training() const {
  absl::MutexLock lock(&mu_);
  if (ticks_.size() < 2) return std::nullopt;
  // Each tick stands for the period up to the next one.
  absl::Duration training;
  for (size_t i = 0; i + 1 < ticks_.size(); ++i) {
    if (ticks_[i].training) training += ticks_[i + 1].at - ticks_[i].at;
  }
  const absl::Duration span = ticks_.back().at - ticks_.front().at;
  if (span <= absl::ZeroDuration()) return std::nullopt;
  return TrainingShare{ticks_.front().at, ticks_.back().at, absl::FDivDuration(training, span)};
}

std::optional<absl::Time> SimTrainingJob::ResumedAfter(absl::Time since) const {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i + 1 < ticks_.size(); ++i) {
    if (ticks_[i].at >= since && ticks_[i].training && ticks_[i + 1].training) return ticks_[i].at;
  }
  return std::nullopt;
}

}  // namespace clusterd::sim
