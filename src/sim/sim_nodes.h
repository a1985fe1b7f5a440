#pragma once

// The simulated nodes: one npu-agent (src/agent: AgentCore + AgentRunner) per node, in this
// process, writing its device-info / node-info ConfigMaps into the shared store exactly as the
// npu-agent binary does. Faults are injected into a node's agent as its fault sources would.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/agent_core.h"
#include "agent/agent_runner.h"
#include "sim/scenario.h"
#include "store/object_store.h"

namespace clusterd::sim {

class SimNodes {
 public:
  SimNodes(store::ObjectStore& store, ClusterSpec cluster, std::string data_dir);
  ~SimNodes();

  // Starts every node's agent; each writes its first device-info ConfigMap.
  absl::Status Start() { return Start(nullptr); }
  // The same, but only the nodes `runs_agent` accepts (1-based index) keep a running agent
  // (its thread and its three ConfigMap watches); the others write their first device-info
  // and node-info ConfigMaps once and stay quiet, and Inject refuses them. For scale runs:
  // thousands of running agents in one process are thousands of threads woken by every store
  // change, which starves the process's own gRPC clients.
  absl::Status Start(const std::function<bool(int node_index)>& runs_agent);
  void Stop();

  // Queues `event` for the agent of node `node_index` (1-based). False for an unknown node.
  bool Inject(int node_index, agent::AgentEvent event);
  int size() const { return static_cast<int>(nodes_.size()); }

 private:
  struct Node {
    std::unique_ptr<agent::AgentCore> core;
    std::unique_ptr<agent::AgentRunner> runner;
  };
  store::ObjectStore& store_;
  const ClusterSpec cluster_;
  const std::string data_dir_;
  std::vector<Node> nodes_;
};

}  // namespace clusterd::sim
