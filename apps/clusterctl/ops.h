#pragma once

// clusterctl's operator commands beyond `get`: NPU and node health, describe, fault injection,
// the OM requests of the Recover service, and following a job's recovery.
#include <string>
#include <vector>

#include "ctl_common.h"

namespace clusterctl {

// get nodes: Kubernetes Nodes with their NPU health (device-info) and current faults.
int GetNodes(const Globals& g, const std::string& name);
// get npus [--node N]: one row per NPU: health, worst fault level, codes, jobs.
int GetNpus(const Globals& g, const std::string& node);
// describe job JOB: the job record, its pods and ranks, its recovery controller and its faults.
int DescribeJob(const Globals& g, const std::string& job, const std::string& ns);
// The node (readiness, schedulability, labels and taints), its NPUs with their verdicts and
// holders, its faults, and its fault history and repeat-offender verdict.
int DescribeNode(const Globals& g, const std::string& node);

// get episodes [JOB]: the fault episodes, newest first (the demo's per-fault table).
int GetEpisodes(const Globals& g, const std::string& job);

struct InjectFaultArgs {
  std::string node;
  std::vector<int> npus;
  std::string code;
  std::string assertion = "occur";
  std::string fault_type = "NPU";
  std::string resource = "CCAE";
  std::string id;  // default: clusterctl-<ms>
  std::string description = "injected by clusterctl";
};
// inject fault: a public fault through PubFault.SendPublicFault.
int InjectFault(const Globals& g, const InjectFaultArgs& args);

// switchnic JOB NODE:DEV=on|off[,DEV=on|off] ...  (Recover.SwitchNicTrack, then its OM stream)
int SwitchNic(const Globals& g, const std::string& job, const std::string& ns,
              const std::vector<std::string>& specs, bool wait);
// stresstest JOB [NODE:OP[,OP]] ... [--all OPS] (Recover.StressTest, then its OM stream)
int StressTest(const Globals& g, const std::string& job, const std::string& ns,
               const std::vector<std::string>& specs, const std::vector<int64_t>& all_nodes_ops,
               bool wait);
// watch signals --job JOB: follows the job's recovery controller and prints every transition
// (and the signal it sent) as it happens; `for_s` > 0 stops after that many seconds.
int WatchSignals(const Globals& g, const std::string& job, const std::string& ns, double for_s);

}  // namespace clusterctl
