#pragma once

// One simulated training job: its TaskD-like recovery client (src/client RecoverClient with the
// ScriptedTrainingAgent policy), the agents in its pods reading the `reset-config-<job>`
// ConfigMap with the §11.1 semantics (an agent whose ranks are listed exits, so its pod goes and
// the scheduler replaces it), and a step counter that advances while the job trains.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/recover_client.h"
#include "client/reset_config_file.h"
#include "client/training_agent_driver.h"
#include "sim/mini_scheduler.h"
#include "sim/scenario.h"
#include "sim/sim_profiling.h"
#include "store/object_store.h"

namespace clusterd::sim {

class SimTrainingJob final : public client::SignalHandler {
 public:
  struct SignalRecord {
    absl::Time at;
    std::string type;      // signalType
    std::string strategy;  // changeStrategy
    std::vector<std::string> actions;
  };

  SimTrainingJob(JobSpec spec, std::string job_uid, std::string grpc_address,
                 store::ObjectStore& store, MiniScheduler& scheduler,
                 std::function<void(const std::string&)> log);
  ~SimTrainingJob() override;

  absl::Status Start();
  void Stop();

  // The job's client reports a fault of global ranks (ReportProcessFault): type 1 for a
  // software crash, 0 for a UCE memory error the framework caught, 2 for a network error.
  absl::Status ReportProcessFault(const std::vector<int>& ranks, int fault_type);

  // A fault storm: process-level recovery fails from now on (RecoverStatus non-zero), so
  // clusterd has to fall back; RestoreBehaviour() makes the job well-behaved again.
  void FailProcessRecovery();
  void RestoreBehaviour();

  // Writes the ranks' profiling files (sim/sim_profiling.h) under `root` from now on, one row
  // per training step. Call before Start().
  absl::Status EnableProfiling(const std::string& root);
  // Makes global rank `rank` slow by `magnitude` in the profiling files (-1: none).
  void SetSlowRank(int rank, double magnitude);

  const JobSpec& spec() const { return spec_; }
  const std::string& uid() const { return uid_; }
  int64_t step() const;
  bool training() const;
  std::string phase() const;
  int resumed_count() const;
  // Signals received (keep-alives left out), in order.
  std::vector<SignalRecord> signals() const;
  // The first step at or after `since` that starts a run of at least two training steps
  // (nullopt: not yet). A cycle that never stopped the job (retry, hot switch) resumes at the
  // first step after its decision.
  std::optional<absl::Time> ResumedAfter(absl::Time since) const;
  // The span of the step ticks kept (first to last) and the share of it spent training: the
  // simulator's own goodput, to hold clusterd's against. nullopt before two ticks.
  struct TrainingShare {
    absl::Time from, to;
    double share = 0;
  };
  std::optional<TrainingShare> Training() const;

  // client::SignalHandler
  void OnSignal(const ::ProcessManageSignal& signal) override;
  void OnSubscribed() override;
  void OnStreamEnd(const grpc::Status& status) override;

 private:
  void StepLoop();
  void OnResetConfig(const store::Object& cm);
  static client::AgentBehaviour WellBehaved();

  const JobSpec spec_;
  const std::string uid_;
  store::ObjectStore& store_;
  MiniScheduler& scheduler_;
  std::function<void(const std::string&)> log_;

  client::TrainingAgentDriver driver_;
  std::unique_ptr<client::RecoverClient> client_;
  std::unique_ptr<store::WatchHandle> reset_watch_;
  std::unique_ptr<SimProfilingFiles> profiling_;  // set before Start(), then read-only

  mutable absl::Mutex mu_;
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;
  struct Tick {
    absl::Time at;
    bool training;
  };
  std::vector<Tick> ticks_ ABSL_GUARDED_BY(mu_);  // one per step period, the last kMaxTicks
  std::vector<SignalRecord> signals_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::optional<client::ResetConfig>> pod_last_reset_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread step_thread_;
};

}  // namespace clusterd::sim
