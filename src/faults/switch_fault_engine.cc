#include "faults/switch_fault_engine.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace clusterd::faults {

bool SwitchFaultEngine::Submit(const SwitchFaultInput& input) {
  const std::optional<AssembledCode> parsed = ParseAssembledCode(input.assembled_code);
  if (!parsed.has_value()) return false;
  pending_.emplace_back(input, *parsed);
  return true;
}

void SwitchFaultEngine::RunCycle(int64_t now_ms, bool npu_reset_running) {
  reset_cycles_ = npu_reset_running ? reset_cycles_ + 1 : 0;
  active_.erase(std::remove_if(active_.begin(), active_.end(),
                               [](const Active& a) { return a.remove_next_cycle; }),
                active_.end());
  for (Active& a : active_) a.added_this_cycle = false;
  std::stable_sort(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
    return a.first.alarm_time_ms < b.first.alarm_time_ms;
  });
  for (auto& [input, parsed] : pending_) {
    if (input.alarm_time_ms == 0) input.alarm_time_ms = now_ms;
    // Captures a reference, not the structured binding (clang before 16 cannot capture those).
    auto it = std::find_if(active_.begin(), active_.end(), [&in = input](const Active& a) {
      return a.input.assembled_code == in.assembled_code && a.input.chip_id == in.chip_id &&
             a.input.port_id == in.port_id;
    });
    if (input.assertion == Assertion::kRecover) {
      if (it == active_.end()) continue;
      if (it->added_this_cycle) {
        it->remove_next_cycle = true;
      } else {
        active_.erase(it);
      }
      continue;
    }
    const bool once = input.assertion == Assertion::kOnce;
    if (it != active_.end()) {
      if (!once) {
        it->remove_next_cycle = false;
        it->input.assertion = Assertion::kOccur;
      }
      continue;
    }
    active_.push_back(Active{input, parsed, input.alarm_time_ms, once, true});
  }
  pending_.clear();
}

bool SwitchFaultEngine::HasTransient() const {
  return std::any_of(active_.begin(), active_.end(),
                     [](const Active& a) { return a.remove_next_cycle; });
}

bool SwitchFaultEngine::NextCycleChangesRecord() const {
  return HasTransient() || (reset_cycles_ == 1 && !active_.empty());
}

model::SwitchInfo SwitchFaultEngine::Snapshot(const SwitchFaultCatalog& catalog,
                                              int64_t now_s) const {
  model::SwitchInfo info;
  info.fault_code.emplace();
  info.fault_time_and_level_map.emplace();
  info.update_time = now_s;
  if (active_.empty()) {
    info.node_status = std::string(model::kNodeStatusHealthy);
    return info;
  }
  // §1.2.2: levels read NotHandle from the reset's second cycle only; the first cycle (the one
  // that started the reset) shows the real levels with NodeStatus already forced Healthy.
  const bool mask_levels = reset_cycles_ >= 2;
  SwitchLevel level = SwitchLevel::kNotHandle;
  std::map<uint32_t, std::set<uint32_t>> l2_ports;  // switch chip -> ports peering an L2 switch
  for (const Active& a : active_) {
    if (a.parsed.peer_port_device == model::kPeerL2 && a.input.assertion == Assertion::kOccur) {
      l2_ports[a.input.chip_id].insert(a.input.port_id);
    }
    std::optional<SwitchLevel> code_level = catalog.Level(a.input.assembled_code);
    if (!code_level.has_value()) continue;  // unregistered: not reported, NotHandle
    if (mask_levels) code_level = SwitchLevel::kNotHandle;
    level = std::max(level, *code_level);
    model::SwitchFaultEvent event;
    event.event_type = a.parsed.event_type;
    event.assembled_fault_code = a.input.assembled_code;
    event.peer_port_device = a.parsed.peer_port_device;
    event.peer_port_id = a.input.peer_port_id;
    event.switch_chip_id = a.input.chip_id;
    event.switch_port_id = a.input.port_id;
    event.severity = a.input.severity;
    event.assertion = static_cast<uint32_t>(a.input.assertion);
    event.alarm_raised_time = a.first_seen_ms;
    info.fault_code->push_back(model::RenderSwitchFaultEvent(event));
    (*info.fault_time_and_level_map)[absl::StrCat(a.input.assembled_code, "_", a.input.chip_id, "_",
                                                  a.input.port_id)] = {
        a.first_seen_ms, std::string(SwitchLevelName(*code_level))};
  }
  for (const auto& [chip, ports] : l2_ports) {
    if (ports.size() >= static_cast<size_t>(kL2PortsForSeparate)) level = SwitchLevel::kSeparate;
  }
  info.fault_level = std::string(SwitchLevelName(level));
  info.node_status =
      std::string(reset_cycles_ >= 1 ? model::kNodeStatusHealthy : SwitchNodeStatus(level));
  return info;
}

}  // namespace clusterd::faults
