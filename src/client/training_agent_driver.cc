#include "client/training_agent_driver.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "recovery/vocabulary.h"

namespace clusterd::client {

void TrainingAgentDriver::OnSignal(const ::ProcessManageSignal& signal) {
  if (signal.signaltype() == recovery::kSignalKeepAlive) return;
  std::vector<AgentReply> replies;
  {
    absl::MutexLock lock(&mu_);
    signals_.push_back(signal);
    replies = agent_.OnSignal(signal);
    ++version_;
    changed_.SignalAll();
  }
  // Reports may block on the server (a full mailbox), so they are sent without the lock.
  for (AgentReply& reply : replies) {
    ReplyRecord record{reply, DescribeReply(reply), absl::UnavailableError("no client attached")};
    if (client_ != nullptr) record.response = client_->Send(reply);
    if (!record.response.ok() || record.response->code() != recovery::kCodeOk) {
      LogInfo("client", "report not accepted",
              {{"reply", record.description},
               {"response", record.response.ok() ? absl::StrCat(record.response->code(), " ",
                                                                record.response->info())
                                                 : record.response.status().ToString()}});
    }
    absl::MutexLock lock(&mu_);
    replies_.push_back(std::move(record));
    ++version_;
    changed_.SignalAll();
  }
}

void TrainingAgentDriver::OnSubscribed() {
  absl::MutexLock lock(&mu_);
  ++subscriptions_;
  ++version_;
  changed_.SignalAll();
}

void TrainingAgentDriver::OnStreamEnd(const grpc::Status& /*status*/) {
  absl::MutexLock lock(&mu_);
  agent_.OnStreamEnd();
  ++stream_ends_;
  ++version_;
  changed_.SignalAll();
}

std::vector<::ProcessManageSignal> TrainingAgentDriver::signals() const {
  absl::MutexLock lock(&mu_);
  return signals_;
}
std::vector<TrainingAgentDriver::ReplyRecord> TrainingAgentDriver::replies() const {
  absl::MutexLock lock(&mu_);
  return replies_;
}
int TrainingAgentDriver::stream_ends() const {
  absl::MutexLock lock(&mu_);
  return stream_ends_;
}
int TrainingAgentDriver::subscriptions() const {
  absl::MutexLock lock(&mu_);
  return subscriptions_;
}
TrainingPhase TrainingAgentDriver::phase() const {
  absl::MutexLock lock(&mu_);
  return agent_.phase();
}
int TrainingAgentDriver::resumed_count() const {
  absl::MutexLock lock(&mu_);
  return agent_.resumed_count();
}
int TrainingAgentDriver::kill_count() const {
  absl::MutexLock lock(&mu_);
  return agent_.kill_count();
}
std::vector<std::string> TrainingAgentDriver::strategies_run() const {
  absl::MutexLock lock(&mu_);
  return agent_.strategies_run();
}
void TrainingAgentDriver::SetBehaviour(AgentBehaviour behaviour) {
  absl::MutexLock lock(&mu_);
  agent_.behaviour() = std::move(behaviour);
}

bool TrainingAgentDriver::WaitUntil(const std::function<bool(const TrainingAgentDriver&)>& pred,
                                    absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    uint64_t seen;
    {
      absl::MutexLock lock(&mu_);
      seen = version_;
    }
    // Evaluated without the lock: the predicate uses the locking accessors.
    if (pred(*this)) return true;
    absl::MutexLock lock(&mu_);
    while (version_ == seen) {
      if (changed_.WaitWithDeadline(&mu_, deadline)) return false;
    }
  }
}

std::optional<::ProcessManageSignal> TrainingAgentDriver::WaitForSignal(
    const std::function<bool(const ::ProcessManageSignal&)>& pred, size_t* from,
    absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  size_t start = from != nullptr ? *from : 0;
  absl::MutexLock lock(&mu_);
  while (true) {
    for (size_t i = start; i < signals_.size(); ++i) {
      if (pred(signals_[i])) {
        if (from != nullptr) *from = i + 1;
        return signals_[i];
      }
    }
    start = signals_.size();
    if (changed_.WaitWithDeadline(&mu_, deadline)) return std::nullopt;
  }
}

}  // namespace clusterd::client
