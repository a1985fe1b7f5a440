#pragma once

// Where each NPU of a simulated A5 cluster (chip npu) sits in the network, and the links a
// slow_l1_link / slow_l2_link fault names. clusterd reads the same layout from the Nodes
// (baseDeviceInfos IP, NetPlaneId, L1, L2 and the rackID annotation; docs/diagnosis.md, "A5 root
// cause"); the simulated pingmesh slows the probes through a slow link with it.
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace clusterd::sim {

struct A5NetPath {
  int plane = 0;
  int rack = 0;
  int l1 = 0;  // the L1 switch of the rack, one set per plane
  int l2 = 0;  // the L2 switch of the L1 switch
};

// Racks and L1 switches of one plane (a partial last one counts).
int RackCount(const ClusterSpec& cluster);
int L1Count(const ClusterSpec& cluster);
int RackOf(const ClusterSpec& cluster, int node_index);
A5NetPath NetPathOf(const ClusterSpec& cluster, int node_index, int npu);

// The nodes whose NPUs hang below the slow link of a slow_l1_link (its rack) or slow_l2_link
// (its L1 switch's racks).
std::vector<int> NodesUnderLink(const ClusterSpec& cluster, const FaultSpec& fault);

// The link as clusterd names a link root cause (its alarm's src -> dst: "<plane>.rack-<r>" ->
// "<plane>.L1-<l>", or "<plane>.L1-<l>" -> "<plane>.L2-<s>"), written "link SRC->DST".
std::string LinkRootCause(const ClusterSpec& cluster, const FaultSpec& fault);

}  // namespace clusterd::sim
