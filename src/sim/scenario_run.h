#pragma once

// The state of one scenario run and its three jobs, one file each: scenario_runner.cc sets the
// cluster up, runs the timeline and tears it down; scenario_injection.cc injects the faults;
// scenario_checks.cc observes what clusterd did about them and reports. Private to src/sim:
// the entry point is RunScenario (sim/scenario_runner.h).
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "sim/mini_scheduler.h"
#include "sim/scenario.h"
#include "sim/scenario_runner.h"
#include "sim/signal_attribution.h"
#include "sim/sim_nodes.h"
#include "sim/sim_pingmesh.h"
#include "sim/sim_training_job.h"
#include "store/object_store.h"

namespace clusterd::sim {

// What happened to one injected fault.
struct FaultRun {
  const FaultSpec* spec = nullptr;
  std::string job;                        // the job it hit ("" when none)
  std::string where;                      // node/NPU or job/rank
  std::vector<std::pair<int, int>> npus;  // (node, npu) injected
  std::optional<absl::Time> injected, detected, notified, decided, resumed;
  std::string strategy;
  std::string error;
  int job_reschedules_before = 0;
  bool job_rescheduled = false;
  bool cleared = false;
  // The jobs it touched and when (sim/signal_attribution.h): the holders of its NPUs at
  // injection, then jobs placed on them while it lasts; until they leave them.
  std::map<std::string, Touch> touched;
  std::optional<absl::Time> cleared_at;  // its recover injected (a notice: at once)
  // slow_*_link: each involved super pod's alarm count at injection (later alarms are its).
  std::map<std::string, int64_t> net_alarms_before;
  // slow_*_link: the influence node (lower-case source id) of each non-NPU alarm it led to,
  // where the fault centre must hold public fault 200001012.
  std::set<std::string> net_fault_nodes;
};

// The A5 link kinds (slow_l1_link, slow_l2_link): no job is hit, and the row is handled by
// clusterd naming root causes, which `expect` must equal, and its fault centre holding their
// public faults.
bool IsSlowNetLink(const FaultSpec& f);

// The rows of the kinds whose `expect` binds that missed it, one line each: "ROOT CAUSE: ..." or
// "PUBLIC FAULT: ..." (slow_*_link), "SLOW LINK: ..." (slow_link: no alarm on the NPU, or
// another public fault code than expected). The other kinds only show an unmet `expect`.
std::vector<std::string> ExpectationFailures(const std::vector<FaultRun>& runs);

// One run of a scenario: the processes and simulated parts it started, and what happened to
// each fault. Run() is the timeline; the other members are its steps.
class ScenarioRun {
 public:
  ScenarioRun(const Scenario& scenario, const RunOptions& options)
      : scenario_(scenario), options_(options) {}

  absl::Status Run();

 private:
  void Event(const std::string& text) {
    absl::MutexLock lock(&print_mu_);
    if (options_.verbose) {
      ClearLine();
      std::printf("  %6.1fs  %s\n", Elapsed(), text.c_str());
      std::fflush(stdout);
    }
    last_event_ = text;
  }
  double Elapsed() const { return absl::ToDoubleSeconds(absl::Now() - t0_); }
  void ClearLine() {
    if (options_.live && line_drawn_) {
      std::printf("\r\033[K");
      line_drawn_ = false;
    }
  }
  absl::Status StartAll();
  void StopAll();
  bool WaitJobsKnown(absl::Duration timeout);
  void Inject(FaultRun& run);
  absl::Status CreateSlowNodeConfig(const JobSpec& spec);
  absl::Status CreatePingmeshConfig();
  // The public fault code clusterd's pingmesh analysis sent for an alarm on NPU `sdid` ("" when
  // none yet).
  std::string NetFaultSeen(uint32_t sdid);
  // GET /api/clusterd/v1/netfault (nullopt: not answered).
  std::optional<nlohmann::json> NetFaultView();
  // The super pods whose probes a slow_link or slow_*_link fault slows.
  std::set<std::string> SuperPodsOf(const FaultSpec& f) const;
  // False while a pingmesh fault waits for its super pods' detection to be old enough (and,
  // with a warm-up, to have analysed a full window: the warm-up history is the baseline).
  bool DetectionOldEnough(const FaultSpec& f);
  // The root causes clusterd reported for a slow_*_link since its injection, sorted and
  // comma-joined ("" when none yet); `fault_nodes` gets the influence node of each non-NPU one.
  std::string NetRootCausesSeen(const FaultRun& run, std::set<std::string>* fault_nodes);
  // The nodes the fault centre holds public fault `code` on, from statistic-fault-info (the
  // durable copy of its public-fault cache).
  std::set<std::string> PublicFaultNodes(std::string_view code);
  bool SlowRankConfirmed(const FaultRun& run);
  void InjectAgentEvent(int node, int npu, const FaultSpec& f, const std::string& assertion);
  absl::Status SendPublicFault(const FaultRun& run, const std::string& assertion);
  void Observe(FaultRun& run);
  bool Detected(const FaultRun& run);
  bool AllTraining() const;
  void Progress();
  void PrintReport();
  std::string JobAt(int node, int npu) const;
  using Placed = std::map<std::string, std::vector<PodPlacement>>;  // job -> its pods now
  Placed PlacedNow() const;
  // The jobs with a pod on `node` using `npu` (any NPU of the node when npu < 0).
  static std::set<std::string> JobsAt(const Placed& placed, int node, int npu);
  // Jobs now placed on the NPUs of faults that still last are touched by them from now on;
  // jobs that left them are touched no longer.
  void TrackTouched(const Placed& placed);
  // Every signal explained by a fault that touched its job (sim/signal_attribution.h).
  std::vector<std::string> CheckAttribution() const;

  const Scenario& scenario_;
  const RunOptions& options_;
  absl::Time t0_ = absl::Now();

  std::unique_ptr<ClusterdProcess> clusterd_;
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<SimNodes> nodes_;
  std::unique_ptr<SimPingmesh> pingmesh_;  // with cluster pingmesh: true
  std::unique_ptr<MiniScheduler> scheduler_;
  std::map<std::string, std::unique_ptr<SimTrainingJob>> jobs_;
  std::vector<FaultRun> runs_;

  absl::Mutex print_mu_;
  bool line_drawn_ = false;
  std::string last_event_;
};

}  // namespace clusterd::sim
