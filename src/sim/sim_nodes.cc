#include "sim/sim_nodes.h"

#include "absl/strings/str_cat.h"
#include "sim/a5_network.h"

namespace clusterd::sim {

SimNodes::SimNodes(store::ObjectStore& store, ClusterSpec cluster, std::string data_dir)
    : store_(store), cluster_(std::move(cluster)), data_dir_(std::move(data_dir)) {}

SimNodes::~SimNodes() { Stop(); }

absl::Status SimNodes::Start(const std::function<bool(int node_index)>& runs_agent) {
  const std::optional<faults::ChipProfile> profile = faults::ChipProfile::FromName(cluster_.chip);
  if (!profile.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown chip ", cluster_.chip));
  }
  for (int i = 1; i <= cluster_.nodes; ++i) {
    agent::AgentOptions options;
    options.node = SimNodeName(i);
    options.profile = *profile;
    options.num_npus = cluster_.npus_per_node;
    if (cluster_.nodes_per_super_pod > 0) {
      options.identity.super_pod_id = (i - 1) / cluster_.nodes_per_super_pod;
      options.identity.server_index = (i - 1) % cluster_.nodes_per_super_pod;
      if (IsA5(cluster_)) options.identity.rack_id = RackOf(cluster_, i);
    } else {
      options.switch_faults = false;
    }
    options.files = agent::PolicyFiles::InDirectory(data_dir_);
    Node node;
    node.core = std::make_unique<agent::AgentCore>(options, store_, Clock::Real());
    if (absl::Status s = node.core->Start(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(options.node, ": ", s.message()));
    }
    if (runs_agent && !runs_agent(i)) {
      node.core->Step();  // the first device-info and node-info ConfigMaps
    } else {
      node.runner = std::make_unique<agent::AgentRunner>(*node.core, store_, options.node);
      if (absl::Status s = node.runner->Start(); !s.ok()) return s;
    }
    nodes_.push_back(std::move(node));
  }
  return absl::OkStatus();
}

void SimNodes::Stop() {
  for (Node& node : nodes_) {
    if (node.runner != nullptr) node.runner->Stop();
  }
  nodes_.clear();
}

bool SimNodes::Inject(int node_index, agent::AgentEvent event) {
  if (node_index < 1 || node_index > static_cast<int>(nodes_.size())) return false;
  if (nodes_[node_index - 1].runner == nullptr) return false;
  nodes_[node_index - 1].runner->Inject(std::move(event));
  return true;
}

}  // namespace clusterd::sim
