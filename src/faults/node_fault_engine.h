#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "faults/fault_event.h"
#include "faults/node_fault_catalog.h"
#include "model/node_info.h"

namespace clusterd::faults {

// NodeD node faults (fault-pipeline.md §8): current codes per (component type, id). Raw codes
// are kept even when unconfigured, so a configuration change re-evaluates them. Pure.
class NodeFaultEngine {
 public:
  void Submit(const NodeFaultInput& input) { pending_.push_back(input); }
  void RunCycle();

  // The NodeInfo record under `catalog`: configured codes only (upper-case, sorted), devices
  // without one dropped, devices sorted by (type, id); level = max of codes, status = max of
  // devices, Healthy when none.
  model::NodeInfo Snapshot(const NodeFaultCatalog& catalog) const;
  bool HasTransient() const { return !once_.empty(); }

 private:
  using DeviceKey = std::pair<std::string, int64_t>;
  std::map<DeviceKey, std::set<std::string>> codes_;
  std::vector<std::pair<DeviceKey, std::string>> once_;  // reported one cycle
  std::vector<NodeFaultInput> pending_;
};

}  // namespace clusterd::faults
