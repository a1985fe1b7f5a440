#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "diagnosis/net_fault.h"
#include "diagnosis/super_pod_topology.h"

namespace clusterd::diagnosis {

// Root cause of topology-annotated (A5) paths (jobs-ranktable-diagnosis.md §7.4 step 5). Pure.
//
// In one network plane an NPU hangs off its rack, the rack off an L1 switch by its L1 link, the
// L1 switch off an L2 switch by its L2 link. A probe between NPUs a and b runs through a, b,
// their racks, and — when the racks differ — both racks' L1 links and L1 switches, and — when
// the L1 switches differ — both L2 links and L2 switches. Every such element is a candidate,
// and the plane as a whole is one too. For each kind of fault (loss, delay) an element whose
// probed paths are all faulty is fully faulty; the root causes are the fully faulty elements
// whose path set no other fully faulty element strictly contains (equal sets: the element
// nearer the NPU). So one slow L1 link is the link, not the NPUs behind it; one slow NPU stays
// the NPU. Faulty paths that no root cause covers, and paths whose ends are not annotated or
// lie in different planes, go through the NPU-direct rule (RootCause).
//
// Alarms: an NPU is (0, address); a rack (3, "<plane>.rack-<rack>"); an L1 switch
// (5, "<plane>.L1-<l1>"); an L2 switch (6, "<plane>.L2-<l2>"); the whole plane
// (7, "plane-<plane>"): src = dst, level 1. A link is src = the lower element, dst = the upper
// one (rack -> L1, L1 -> L2), level 0. Lower-cased, every id is a DNS-1123 subdomain when the
// plane, rack and switch names are alphanumeric: the public fault's influence nodeName.
std::vector<NetAlarm> TopologyRootCause(const std::vector<FaultyPath>& faulty,
                                        const std::vector<FaultyPath>& evaluated,
                                        const NetTopology& topology);

// The probe address -> path map of a super pod from its NpuInfoMap entries (A5). Empty for a
// super pod without annotations. An address claimed by two NPUs refuses the whole map (the
// reason names the super pod, the address and both nodes).
absl::StatusOr<NetTopology> NetTopologyOf(const SuperPodDevice& pod);

}  // namespace clusterd::diagnosis
