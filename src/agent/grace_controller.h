#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/agent_event.h"
#include "faults/chip_profile.h"
#include "faults/device_fault_engine.h"
#include "faults/grace_tolerance.h"
#include "model/device_naming.h"
#include "store/object_store.h"

namespace clusterd::agent {

struct GraceOptions {
  bool enabled = false;
  faults::ChipProfile profile;
  int num_npus = 8;
  // The simulated driver: a hot reset takes this long and fails for these NPUs (and for NPUs
  // whose chip level is SeparateNPU or worse); a successful reset clears the ring's chip codes.
  int64_t reset_duration_ms = 10000;
  std::set<int> reset_fail_npus;
  // The pod annotations holding the device allocation, read in this order (the Ascend910 one
  // is renamed by deviceNameCustomization.json's PodConfigurationName).
  std::vector<std::string> allocation_keys = model::DeviceNaming().AllocationAnnotationKeys();
};

// Graceful fault tolerance on this node: finds the jobs whose pods run here (pods with
// spec.nodeName = this node, job from label `job-name` / `volcano.sh/job-name`, NPUs from the
// device allocation annotation, rank from `hccl/rankIndex`), and for each job that has a
// `reset-config-<job>` ConfigMap in its namespace runs a faults::GraceJobTracker: writes the
// RankList (reset.json + checkCode), hot-resets rings through the simulated driver, isolates
// NPUs whose reset failed. It also tells the engine which NPUs are in use (§3.4), whether
// graceful tolerance is enabled or not.
class GraceController {
 public:
  GraceController(std::string node, GraceOptions options, store::ObjectStore& store);

  // Before the engine cycle: refresh pods and NPUs in use, finish due resets. Recoveries the
  // simulated driver reports after a successful reset are appended to `driver_events`.
  void BeforeCycle(faults::DeviceFaultEngine& engine, int64_t now_ms,
                   std::vector<AgentEvent>* driver_events);
  // After the engine cycle: advance each job, write reset-configs, start resets, isolate.
  void AfterCycle(faults::DeviceFaultEngine& engine, int64_t now_ms);
  std::optional<int64_t> NextDeadlineMs() const;
  // A hot reset (of any ring) is running on the node: started by an AfterCycle, not yet
  // finished by a BeforeCycle.
  bool ResetInProgress() const { return !resets_.empty(); }

 private:
  struct JobNpu {
    int npu = 0;
    int rank = 0;
  };
  struct Job {
    std::string ns;
    std::string name;
    std::vector<JobNpu> npus;
    std::unique_ptr<faults::GraceJobTracker> tracker;
    bool write_pending = false;
  };
  struct Reset {
    std::vector<int> ring;
    std::vector<int> requested;  // NPUs whose rank asked for it
    int64_t done_ms = 0;
  };

  void RefreshJobs(faults::DeviceFaultEngine& engine);
  bool WriteResetConfig(Job& job, int64_t now_ms);
  std::vector<faults::GraceNpuView> Views(const Job& job, const faults::DeviceFaultEngine& engine,
                                          const std::set<int>& resetting) const;

  const std::string node_;
  GraceOptions options_;
  store::ObjectStore& store_;
  std::map<std::string, Job> jobs_;     // "ns/name"
  std::map<int, std::string> npu_job_;  // NPU -> job key, for every job on the node
  std::vector<Reset> resets_;
  std::vector<faults::GraceResetOutcome> outcomes_;
  std::optional<int64_t> retry_ms_;
};

}  // namespace clusterd::agent
