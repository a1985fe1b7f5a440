#include "faults/node_fault_engine.h"

#include <algorithm>

#include "faults/hex_code.h"

namespace clusterd::faults {

void NodeFaultEngine::RunCycle() {
  for (const auto& [key, code] : once_) {
    if (auto it = codes_.find(key); it != codes_.end()) {
      it->second.erase(code);
      if (it->second.empty()) codes_.erase(it);
    }
  }
  once_.clear();
  for (const NodeFaultInput& in : pending_) {
    const DeviceKey key{in.device_type.empty() ? "UNKNOWN" : in.device_type, in.device_id};
    const std::string code = AsciiUpper(in.code);
    if (in.assertion == Assertion::kRecover) {
      if (auto it = codes_.find(key); it != codes_.end()) {
        it->second.erase(code);
        if (it->second.empty()) codes_.erase(it);
      }
      continue;
    }
    const bool inserted = codes_[key].insert(code).second;
    if (in.assertion == Assertion::kOnce && inserted) once_.emplace_back(key, code);
  }
  pending_.clear();
}

model::NodeInfo NodeFaultEngine::Snapshot(const NodeFaultCatalog& catalog) const {
  model::NodeInfo info;
  NodeLevel node = NodeLevel::kNotHandle;
  for (const auto& [key, codes] : codes_) {
    model::FaultDev dev;
    dev.device_type = key.first;
    dev.device_id = key.second;
    NodeLevel level = NodeLevel::kNotHandle;
    for (const std::string& code : codes) {
      const std::optional<NodeLevel> l = catalog.Level(code);
      if (!l.has_value()) continue;  // unconfigured codes are dropped
      level = std::max(level, *l);
      dev.fault_code.push_back(code);
    }
    if (dev.fault_code.empty()) continue;
    dev.fault_level = std::string(NodeLevelName(level));
    node = std::max(node, level);
    info.fault_dev_list.push_back(std::move(dev));
  }
  info.node_status = std::string(NodeLevelStatus(node));
  return info;
}

}  // namespace clusterd::faults
