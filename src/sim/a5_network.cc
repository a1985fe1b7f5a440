#include "sim/a5_network.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace clusterd::sim {
namespace {

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

}  // namespace

int RackCount(const ClusterSpec& cluster) {
  return CeilDiv(cluster.nodes, std::max(1, cluster.nodes_per_rack));
}

int L1Count(const ClusterSpec& cluster) {
  return CeilDiv(RackCount(cluster), std::max(1, cluster.racks_per_l1));
}

int RackOf(const ClusterSpec& cluster, int node_index) {
  return (node_index - 1) / std::max(1, cluster.nodes_per_rack);
}

A5NetPath NetPathOf(const ClusterSpec& cluster, int node_index, int npu) {
  A5NetPath p;
  p.plane = npu % std::max(1, cluster.net_planes);
  p.rack = RackOf(cluster, node_index);
  p.l1 = p.rack / std::max(1, cluster.racks_per_l1);
  p.l2 = p.l1 / std::max(1, cluster.l1_per_l2);
  return p;
}

std::vector<int> NodesUnderLink(const ClusterSpec& cluster, const FaultSpec& fault) {
  std::vector<int> nodes;
  for (int i = 1; i <= cluster.nodes; ++i) {
    const A5NetPath p = NetPathOf(cluster, i, 0);
    if ((fault.kind == "slow_l1_link" && p.rack == fault.rack) ||
        (fault.kind == "slow_l2_link" && p.l1 == fault.l1)) {
      nodes.push_back(i);
    }
  }
  return nodes;
}

std::string LinkRootCause(const ClusterSpec& cluster, const FaultSpec& fault) {
  const int plane = fault.plane;
  if (fault.kind == "slow_l1_link") {
    const int l1 = fault.rack / std::max(1, cluster.racks_per_l1);
    return absl::StrCat("link ", plane, ".rack-", fault.rack, "->", plane, ".L1-", l1);
  }
  const int l2 = fault.l1 / std::max(1, cluster.l1_per_l2);
  return absl::StrCat("link ", plane, ".L1-", fault.l1, "->", plane, ".L2-", l2);
}

}  // namespace clusterd::sim
