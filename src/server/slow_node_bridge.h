#pragma once

// The slow-node diagnosis (src/diagnosis) plugged into the cluster brain: its public faults go
// to the fault centre, its profiling switches through the TrainingDataTrace decisions, and the
// job registry's summaries tell it which jobs run (issue 9, jobs-ranktable-diagnosis.md §6.2).
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "cluster/data_trace.h"
#include "cluster/fault_centre.h"
#include "diagnosis/public_fault.h"
#include "diagnosis/slow_node_controller.h"
#include "model/job_summary_signal.h"
#include "store/object_store.h"

namespace clusterd::server {

// Hands a diagnosis controller's reports (slow node: 110001010 / 100001011; slow network:
// 200001010-200001012) to FaultCentre::SendPublicFault, as the original sends them over
// PubFault.SendPublicFault: the request JSON is decoded by the same parser the gRPC and
// ConfigMap paths use. A rate-limited request (410) is an error, so the controller retries; a
// refused one (409) would be refused again, so it is logged and counted under `feature`.
class DiagnosisFaultSink final : public diagnosis::PublicFaultSink {
 public:
  DiagnosisFaultSink(cluster::FaultCentre& centre, std::string feature)
      : centre_(centre), feature_(std::move(feature)) {}
  absl::Status SendPublicFault(const diagnosis::PublicFaultReport& report) override;

 private:
  cluster::FaultCentre& centre_;
  const std::string feature_;  // "slow-node" or "slow-network": the log and the metric label
};

// Switches profiling through DataTraceSwitches::Modify (ModifyTrainingDataTraceSwitch), so the
// job's TrainingDataTrace subscriber is told and mounting pods get `data-trace-<job>`. When
// Modify cannot deliver the switch at all (no pod mounts the switch directory and no subscriber
// listens), the ConfigMap is written anyway, as the controller's default writer does: detection
// then still starts and a subscriber that comes later reads the switch from it.
class SlowNodeProfilingWriter final : public diagnosis::ProfilingSwitchWriter {
 public:
  SlowNodeProfilingWriter(store::ObjectStore& store, cluster::DataTraceSwitches& switches)
      : switches_(switches), fallback_(store) {}
  absl::Status SetProfiling(const diagnosis::SlowNodeJob& job,
                            const model::ProfilingSwitch& value) override;

 private:
  cluster::DataTraceSwitches& switches_;
  diagnosis::StoreProfilingSwitchWriter fallback_;
};

// The controller's view of a job-summary signal: status (`delete` for a delete signal), job id
// and the servers of the rank table (server Ip = server_id when it is an IPv4 address, else
// host_ip; §6.2 step 2). Nullopt for a signal without job name.
std::optional<diagnosis::SlowNodeJob> SlowNodeJobFromSignal(const model::JobSummarySignal& signal);

}  // namespace clusterd::server
