#include "cluster/fault_signal.h"

#include <algorithm>
#include <map>

#include "cluster/fault_job_index.h"

namespace clusterd::cluster {

int LevelStateRank(std::string_view level) {
  using model::FaultLevel;
  if (std::optional<FaultLevel> chip = model::ParseFaultLevel(level)) {
    if (*chip == FaultLevel::kSubHealthFault || *chip == FaultLevel::kPreSeparateNPU) return 1;
    // RestartRequest and everything more severe; NotHandleFault and the normal levels are 0.
    return *chip <= FaultLevel::kRestartRequest ? 2 : 0;
  }
  // The switch and relation-fault vocabulary.
  if (level == "SubHealth" || level == "PreSeparateFault" || level == "PreSeparate") return 1;
  if (level == "SeparateFault" || level == "Separate") return 2;
  return 0;
}

std::string_view StateName(int rank) {
  return rank >= 2 ? kUnHealthy : rank == 1 ? kSubHealthy : kHealthy;
}

namespace {

// Severity for de-duplicating an NPU's codes (§4.3): ManuallySeparateNPU first.
int NpuSeverity(std::string_view level) { return LevelRank(level); }

}  // namespace

FaultMsgSignal NormalSignal(const std::string& job_id) {
  FaultMsgSignal s;
  s.job_id = job_id;
  s.signal_type = std::string(kSignalTypeNormal);
  return s;
}

FaultMsgSignal BuildFaultMsgSignal(const std::string& job_id,
                                   const std::vector<FaultDevice>& entries) {
  FaultMsgSignal msg;
  msg.job_id = job_id;
  msg.signal_type = std::string(kSignalTypeFault);
  if (entries.empty()) {
    msg.signal_type = std::string(kSignalTypeNormal);
    return msg;
  }
  // server_id -> entries, in first-seen order of servers.
  std::vector<std::string> server_order;
  std::map<std::string, std::vector<const FaultDevice*>> by_server;
  for (const FaultDevice& e : entries) {
    auto [it, inserted] = by_server.try_emplace(e.server_id);
    if (inserted) server_order.push_back(e.server_id);
    it->second.push_back(&e);
  }
  for (const std::string& server : server_order) {
    const auto& group = by_server[server];
    NodeFaultSignalInfo node;
    node.node_name = group.front()->server_name;
    node.node_ip = group.front()->host_ip;
    node.node_sn = group.front()->server_sn;
    std::vector<std::pair<std::string, std::string>> device_order;
    std::map<std::pair<std::string, std::string>, std::vector<const FaultDevice*>> by_device;
    for (const FaultDevice* e : group) {
      auto key = std::make_pair(e->device_id, e->device_type);
      auto [it, inserted] = by_device.try_emplace(key);
      if (inserted) device_order.push_back(key);
      it->second.push_back(e);
    }
    int node_state = 0;
    for (const auto& key : device_order) {
      const auto& list = by_device[key];
      DeviceFaultSignalInfo dev;
      dev.device_id = key.first;
      dev.device_type = key.second;
      int state = 0;
      std::vector<std::pair<std::string, std::string>> codes;  // code, level
      for (const FaultDevice* e : list) {
        state = std::max(state, LevelStateRank(e->level));
        if (!e->code.empty()) codes.emplace_back(e->code, e->level);
        if (e->device_type == kDeviceTypeSwitch) {
          dev.switch_fault_infos.push_back(
              SwitchFaultSignalInfo{e->code, e->switch_chip_id, e->switch_port_id,
                                    std::to_string(e->fault_time_ms), e->level});
        }
      }
      if (codes.size() > 1) {
        std::map<std::string, std::string> dedup;
        for (const auto& [code, level] : codes) {
          auto [it, inserted] = dedup.try_emplace(code, level);
          if (inserted) continue;
          if (dev.device_type == kDeviceTypeNpu) {
            if (NpuSeverity(level) < NpuSeverity(it->second)) it->second = level;
          } else {
            it->second = level;  // the later entry wins
          }
        }
        codes.assign(dedup.begin(), dedup.end());  // sorted by code
      }
      for (auto& [code, level] : codes) {
        dev.fault_codes.push_back(code);
        dev.fault_levels.push_back(level);
      }
      dev.fault_level = std::string(StateName(state));
      node_state = std::max(node_state, state);
      node.fault_devices.push_back(std::move(dev));
    }
    std::stable_sort(node.fault_devices.begin(), node.fault_devices.end(),
                     [](const DeviceFaultSignalInfo& a, const DeviceFaultSignalInfo& b) {
                       if (a.device_id != b.device_id) return a.device_id < b.device_id;
                       return a.device_type < b.device_type;
                     });
    node.fault_level = std::string(StateName(node_state));
    msg.nodes.push_back(std::move(node));
  }
  std::stable_sort(msg.nodes.begin(), msg.nodes.end(),
                   [](const NodeFaultSignalInfo& a, const NodeFaultSignalInfo& b) {
                     return a.node_ip < b.node_ip;
                   });
  if (msg.nodes.empty()) msg.signal_type = std::string(kSignalTypeNormal);
  return msg;
}

std::vector<FaultDevice> FaultQueryEntries(const JobFaultRanks& faults) {
  std::vector<FaultDevice> out;
  out.reserve(faults.devices.size() + faults.filtered_devices.size());
  out.insert(out.end(), faults.devices.begin(), faults.devices.end());
  out.insert(out.end(), faults.filtered_devices.begin(), faults.filtered_devices.end());
  return out;
}

std::vector<FaultDevice> FaultServiceEntries(const JobFaultRanks& faults) {
  std::vector<FaultDevice> out = FaultQueryEntries(faults);
  std::erase_if(out, [](const FaultDevice& d) { return d.level == model::kLevelNotHandleFault; });
  return out;
}

std::string FaultQueryNotFoundInfo(const std::string& job_id) {
  return "job with jobId: " + job_id + " not found fault info";
}

JobFaultQueryAnswer AnswerJobFaultQuery(const std::string& job_id, bool job_known,
                                        const JobFaultRanks* faults) {
  if (!job_known) return {FaultQueryNotFoundInfo(job_id), std::nullopt};
  std::vector<FaultDevice> entries;
  if (faults != nullptr) entries = FaultQueryEntries(*faults);
  return {std::string(kFaultQueryAllInfo), BuildFaultMsgSignal(job_id, entries)};
}

FaultMsgSignal BuildClusterFaultSignal(const std::vector<ClusterNodeFaults>& nodes) {
  FaultMsgSignal msg;
  msg.job_id = std::string(kClusterJobId);
  for (const ClusterNodeFaults& n : nodes) {
    NodeFaultSignalInfo node;
    node.node_name = n.node_name;
    node.node_ip = n.node_ip;
    node.node_sn = n.node_sn;
    int node_state = 0;
    if (n.device != nullptr) {
      std::map<std::string, std::vector<const NpuFault*>> by_npu;
      for (const NpuFault& f : n.device->faults) by_npu[f.npu_name].push_back(&f);
      for (const auto& [npu, list] : by_npu) {
        DeviceFaultSignalInfo dev;
        auto id = n.device->PhysicalIdOf(npu);
        dev.device_id = id.has_value() ? std::to_string(*id) : npu;
        dev.device_type = std::string(kDeviceTypeNpu);
        // Unlike the original (the last fault's level wins), the most serious one does.
        int state = 0;
        for (const NpuFault* f : list) {
          if (f->level == model::kLevelSubHealthFault) {
            state = std::max(state, 1);
          } else if (f->level != model::kLevelNotHandleFault) {
            state = 2;
          }
          if (!f->code.empty() && f->code != kPseudoCodeManuallySeparate) {
            dev.fault_codes.push_back(f->code);
            dev.fault_levels.push_back(f->level);
          }
        }
        dev.fault_level = std::string(StateName(state));
        node_state = std::max(node_state, state);
        node.fault_devices.push_back(std::move(dev));
      }
    }
    if (n.switch_record != nullptr && !n.switch_record->events.empty()) {
      const SwitchRecord& sw = *n.switch_record;
      DeviceFaultSignalInfo dev;
      dev.device_id = "-1";
      dev.device_type = std::string(kDeviceTypeSwitch);
      const auto& map = sw.info.fault_time_and_level_map;
      for (const model::SwitchFaultEvent& e : sw.events) {
        dev.fault_codes.push_back(e.assembled_fault_code);
        std::string level = sw.info.fault_level;
        const std::string key = e.assembled_fault_code + "_" + std::to_string(e.switch_chip_id) +
                                "_" + std::to_string(e.switch_port_id);
        if (map.has_value()) {
          if (auto it = map->find(key); it != map->end()) level = it->second.fault_level;
        }
        dev.fault_levels.push_back(level);
        dev.switch_fault_infos.push_back(SwitchFaultSignalInfo{
            e.assembled_fault_code, std::to_string(e.switch_chip_id),
            std::to_string(e.switch_port_id), std::to_string(e.alarm_raised_time), level});
      }
      dev.fault_level = sw.info.node_status.empty() ? std::string(kHealthy) : sw.info.node_status;
      node_state = std::max(node_state, dev.fault_level == kUnHealthy ? 2
                                        : dev.fault_level == kHealthy ? 0
                                                                      : 1);
      node.fault_devices.push_back(std::move(dev));
    }
    if (n.node_record != nullptr) {
      for (const model::FaultDev& fd : n.node_record->info.fault_dev_list) {
        DeviceFaultSignalInfo dev;
        dev.device_id = std::to_string(fd.device_id);
        dev.device_type = fd.device_type;
        dev.fault_codes = fd.fault_code;
        dev.fault_levels.assign(fd.fault_code.size(), fd.fault_level);
        if (fd.fault_level == "SeparateFault") {
          dev.fault_level = std::string(kUnHealthy);
        } else if (fd.fault_level == model::kLevelSubHealthFault) {
          dev.fault_level = std::string(kSubHealthy);
        } else if (fd.fault_level == "PreSeparateFault") {
          dev.fault_level = n.node_record->info.node_status;
        } else {
          dev.fault_level = std::string(kHealthy);
        }
        node_state = std::max(node_state, dev.fault_level == kUnHealthy ? 2
                                          : dev.fault_level == kHealthy ? 0
                                                                        : 1);
        node.fault_devices.push_back(std::move(dev));
      }
    }
    if (!n.node_ready) {
      DeviceFaultSignalInfo dev;
      dev.device_id = "-1";
      dev.device_type = std::string(kDeviceTypeNode);
      dev.fault_level = std::string(kUnHealthy);
      node_state = 2;
      node.fault_devices.push_back(std::move(dev));
    }
    if (node.fault_devices.empty()) continue;
    node.fault_level = std::string(StateName(node_state));
    msg.nodes.push_back(std::move(node));
  }
  std::stable_sort(msg.nodes.begin(), msg.nodes.end(),
                   [](const NodeFaultSignalInfo& a, const NodeFaultSignalInfo& b) {
                     return a.node_ip < b.node_ip;
                   });
  msg.signal_type = std::string(msg.nodes.empty() ? kSignalTypeNormal : kSignalTypeFault);
  return msg;
}

}  // namespace clusterd::cluster
