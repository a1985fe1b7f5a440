#pragma once

// The clustersim scenario file (docs/clustersim.md): the simulated cluster, its training jobs
// and the faults to inject, as YAML. Parsing validates everything before the simulator starts
// anything; every error names the file and the line.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::faults {
class FaultCodeCatalog;
}

namespace clusterd::sim {

struct ClusterSpec {
  int nodes = 4;
  int npus_per_node = 8;
  // Ascend910 (A2 layout), Ascend910A3 (super pods) or npu (A5 super pods; alias A5).
  std::string chip = "Ascend910";
  int nodes_per_super_pod = 0;  // A3 / A5: nodes per super pod (0: not a super-pod cluster)
  // Super pods only: clusterd's slow-network detection on (`--ras-net-root`, the
  // pingmesh-config ConfigMap with task_interval 1) and the nodes' pingmesh probes emulated.
  bool pingmesh = false;
  // pingmesh: seconds of healthy probe history each server writes at once when its probing
  // starts; every later probe is stamped that far ahead. clusterd's window (10 periods of 10 s)
  // runs on the rows' timestamps, so with 100 its first round already analyses.
  double pingmesh_warmup_s = 0;
  // A5: every NPU's network path (sim/a5_network.h). NPU p of a node is in plane
  // p % net_planes; node i in rack (i-1) / nodes_per_rack; rack r under L1 switch
  // r / racks_per_l1 and L1 switch l under L2 switch l / l1_per_l2, in every plane.
  int net_planes = 1;
  int nodes_per_rack = 1;
  int racks_per_l1 = 1;
  int l1_per_l2 = 1;
};

// The A5 chip (faults::ChipProfile family kA5: `npu`, or its alias `A5`).
bool IsA5(const ClusterSpec& cluster);

struct JobSpec {
  int line = 0;
  std::string name;
  std::string ns = "default";
  int pods = 1;  // replicas; each pod takes npus_per_pod NPUs of one node
  int npus_per_pod = 8;
  // recover-strategy annotation values, in the order the job prefers them (recovery-protocol.md
  // §9.1): retry, recover, recover-in-place, dump, exit, elastic-training.
  std::vector<std::string> strategies = {"retry", "recover", "dump", "exit"};
  bool process_recover = true;  // PodGroup label process-recover-enable=on
  bool hot_switch = false;      // PodGroup subHealthyStrategy=hotSwitch
  int64_t step_ms = 500;        // simulated training step time
  // Slow-node detection: the job's ranks write profiling files and a ras-feature-slownode-<job>
  // ConfigMap turns clusterd's detection on (jobs-ranktable-diagnosis.md §6).
  bool slow_node_detection = false;
};

// What a fault is expected to lead to; the demo checks it.
struct FaultSpec {
  int line = 0;
  double at_s = 0;
  // chip | network | switch | node (through the node's npu-agent), public (PubFault gRPC),
  // software (the job's client reports ReportProcessFault), storm (chip faults on many NPUs at
  // once: `node` + `npus`, or `job`: every NPU of the job's pods; the job's process-level
  // recovery then fails, as it does when faults keep arriving, and clusterd falls back), slow
  // (`job` + `rank`: that rank computes slowly, seen in the job's profiling data), slow_link
  // (`node` + `npu`: every pingmesh path from or to that NPU takes 1 ms x (1 + magnitude)),
  // slow_l1_link (A5, `plane` + `rack`: every path through the rack's link to its L1 switch
  // does), slow_l2_link (A5, `plane` + `l1`: every path through that L1 switch's link to its L2
  // switch does).
  std::string kind;
  std::string node;       // chip, network, switch, node, public
  int npu = -1;           // chip, network, public: the physical NPU on `node`, or with
                          // `job` + `pod`: the index among that pod's NPUs
  int pod = -1;           // with `job`: the job's pod (rank index) hit, resolved at injection
  std::vector<int> npus;  // storm
  std::string code;       // hex fault code (chip/network/switch/node/public)
  std::string assertion = "occur";  // occur | recover | once
  std::string job;                  // software: the job whose rank failed; storm, chip, network,
                                    // public: the job hit (with `pod`), instead of `node`
  int rank = -1;                    // software
  int chip_id = -1, port_id = -1;   // switch
  int plane = 0;                    // slow_l1_link, slow_l2_link: the network plane
  int rack = -1;                    // slow_l1_link: the rack whose uplink is slow
  int l1 = -1;                      // slow_l2_link: the L1 switch whose uplink is slow
  double magnitude = 0.5;           // slow, slow_link, slow_*_link: (1 + magnitude) times slower
  // slow_link, slow_*_link: also wait until clusterd's slow-network detection of the super pods
  // involved has run this long (its analysis compares the newest period with the 8 before, so a
  // link that is slow during those baseline periods is not found).
  double after_detection_s = 0;
  double clear_after_s = 0;  // > 0: inject the matching recover event later
  // retry | recover | recover-in-place | hotswitch | job-reschedule | ...: a part of what the
  // report shows. slow_*_link: exactly the root causes clusterd reports (docs/clustersim.md).
  std::string expect;
  std::string label;   // shown in the report
};

// Replays the InfiniteHBD fault trace, time-compressed, onto the simulated nodes.
struct ReplaySpec {
  int line = 0;
  std::string trace;             // path to fault_trace.json
  double days_per_second = 1.0;  // trace time (days) played per wall-clock second
  int max_events = 20;
  double start_s = 0;   // timeline second at which the first replayed episode starts
  double from_day = 0;  // skip the trace's episodes that start before this day
};

// Checks of clusterd's goodput accounting (docs/goodput.md) at the end of the run.
struct GoodputCheck {
  int line = 0;
  // For every job: clusterd's training share (from its timeline) and the simulator's (its step
  // ticks) over the span the simulator watched may differ by at most this much (0..1).
  double tolerance = 0.05;
  std::string offender_policy;         // written as repeat-offender-policy.json ("" = none)
  std::vector<std::string> offenders;  // nodes that must be judged repeat offenders at the end
};

struct Scenario {
  std::string file;
  std::string name;
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;
  std::vector<FaultSpec> faults;
  std::optional<ReplaySpec> replay;
  std::optional<GoodputCheck> goodput;
  double duration_s = 120;  // stop injecting and wait for recovery at most until this time
};

// Parses and validates a scenario. `catalog` (faultCode.json) checks chip codes; nullptr skips
// that check. Errors read "FILE:LINE: message".
absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view file,
                                       const faults::FaultCodeCatalog* catalog);
absl::StatusOr<Scenario> LoadScenario(const std::string& path,
                                      const faults::FaultCodeCatalog* catalog);

// The built-in demo (`clustersim --demo`): 4 nodes x 8 NPUs, 2 jobs, the four headline faults.
std::string_view DefaultDemoScenario();

// Node names are node-1 .. node-N.
std::string SimNodeName(int index);

}  // namespace clusterd::sim
