#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/recover_client.h"
#include "client/scripted_training_agent.h"

namespace clusterd::client {

// Connects a ScriptedTrainingAgent to a RecoverClient: each signal goes through the policy, each
// reply becomes a report RPC. Keeps a log of what happened for tests and the simulator.
class TrainingAgentDriver final : public SignalHandler {
 public:
  struct ReplyRecord {
    AgentReply reply;
    std::string description;
    absl::StatusOr<::Status> response;
  };

  TrainingAgentDriver(std::string job_id, AgentBehaviour behaviour = {})
      : agent_(std::move(job_id), std::move(behaviour)) {}
  // Must be called before the client starts.
  void Attach(RecoverClient* client) { client_ = client; }

  void OnSignal(const ::ProcessManageSignal& signal) override;
  void OnSubscribed() override;
  void OnStreamEnd(const grpc::Status& status) override;

  // Signals handled (keep-alives left out), replies sent with their answers, stream ends.
  std::vector<::ProcessManageSignal> signals() const;
  std::vector<ReplyRecord> replies() const;
  int stream_ends() const;
  int subscriptions() const;
  TrainingPhase phase() const;
  int resumed_count() const;
  int kill_count() const;
  std::vector<std::string> strategies_run() const;
  // Changes the behaviour of the policy from now on.
  void SetBehaviour(AgentBehaviour behaviour);

  // Waits until `pred(*this)` holds; re-evaluated after every change. False after `timeout`.
  bool WaitUntil(const std::function<bool(const TrainingAgentDriver&)>& pred,
                 absl::Duration timeout) const;
  // The first handled signal at index >= *from satisfying `pred`; advances *from past it.
  std::optional<::ProcessManageSignal> WaitForSignal(
      const std::function<bool(const ::ProcessManageSignal&)>& pred, size_t* from,
      absl::Duration timeout) const;

 private:
  RecoverClient* client_ = nullptr;
  mutable absl::Mutex mu_;
  mutable absl::CondVar changed_;
  ScriptedTrainingAgent agent_ ABSL_GUARDED_BY(mu_);
  std::vector<::ProcessManageSignal> signals_ ABSL_GUARDED_BY(mu_);
  std::vector<ReplyRecord> replies_ ABSL_GUARDED_BY(mu_);
  int stream_ends_ ABSL_GUARDED_BY(mu_) = 0;
  int subscriptions_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;  // bumped on every change, for WaitUntil
};

}  // namespace clusterd::client
