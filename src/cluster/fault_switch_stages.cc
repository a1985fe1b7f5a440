// The switch- and node-centre processors of fault-pipeline.md §7.3 (see fault_stages.h).
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cluster/fault_stages.h"

namespace clusterd::cluster {

int SwitchLevelRank(std::string_view level) {
  if (level == model::kSwitchLevelSeparate) return 4;
  if (level == model::kSwitchLevelPreSeparate) return 3;
  if (level == model::kSwitchLevelRestartRequest) return 2;
  if (level == model::kSwitchLevelSubHealth) return 1;
  if (level == model::kSwitchLevelNotHandle) return 0;
  return -1;
}

std::string SwitchLevelAlias(std::string_view level) {
  if (level == "ResetFault" || level == "SeparateFault") return "Separate";
  if (level == "RestartRequestFault") return std::string(model::kLevelRestartRequest);
  if (level == "PreSeparateFault") return "PreSeparate";
  return std::string(level);
}

std::string SwitchNodeStatusFor(std::string_view level) {
  switch (SwitchLevelRank(level)) {
    case 1:
      return std::string(model::kNodeStatusSubHealthy);
    case 2:
    case 4:
      return std::string(model::kNodeStatusUnHealthy);
    case 3:
      return std::string(model::kNodeStatusPreSeparate);
    default:
      return std::string(model::kNodeStatusHealthy);
  }
}

namespace {

std::string SwitchKey(const model::SwitchFaultEvent& e) {
  return absl::StrCat(e.assembled_fault_code, "_", e.switch_chip_id, "_", e.switch_port_id);
}

std::optional<int64_t> SwitchFilterSeconds(const std::vector<const FaultJobPolicy*>& policies,
                                           const std::string& code, const std::string& level) {
  std::optional<int64_t> best;
  std::string upper = code;
  absl::AsciiStrToUpper(&upper);
  for (const FaultJobPolicy* p : policies) {
    if (p == nullptr) continue;
    std::optional<int64_t> s;
    for (const CustomFilterRule& r : p->code_rules) {
      if (r.key == upper) {
        s = r.seconds;
        break;
      }
    }
    if (!s.has_value()) {
      for (const CustomFilterRule& r : p->level_rules) {
        if (SwitchLevelAlias(r.key) == level) {
          s = r.seconds;
          break;
        }
      }
    }
    if (s.has_value() && (!best.has_value() || *s > *best)) best = s;
  }
  return best;
}

}  // namespace

StageResult ApplySwitchCustomFilter(SwitchRecord& record,
                                    const std::vector<const FaultJobPolicy*>& policies,
                                    int64_t now_ms) {
  StageResult result;
  if (policies.empty() || !record.info.fault_code.has_value() ||
      !record.info.fault_time_and_level_map.has_value()) {
    return result;
  }
  auto& map = *record.info.fault_time_and_level_map;
  std::vector<model::SwitchFaultEvent> kept_events;
  std::set<std::string> hidden_texts;
  for (const model::SwitchFaultEvent& e : record.events) {
    const std::string key = SwitchKey(e);
    auto m = map.find(key);
    const std::string level = m != map.end() ? m->second.fault_level : record.info.fault_level;
    auto seconds = SwitchFilterSeconds(policies, e.assembled_fault_code, level);
    int64_t received = now_ms;
    if (auto r = record.received_ms.find(key); r != record.received_ms.end()) received = r->second;
    if (seconds.has_value() && now_ms <= received + *seconds * 1000) {
      result.Due(received + *seconds * 1000 + 1);
      hidden_texts.insert(model::RenderSwitchFaultEvent(e));
      map.erase(key);
      result.changed = true;
      continue;
    }
    kept_events.push_back(e);
  }
  if (!result.changed) return result;
  record.events = std::move(kept_events);
  auto& codes = *record.info.fault_code;
  std::vector<std::string> kept_codes;
  for (std::string& text : codes) {
    auto parsed = model::ParseSwitchFaultEvent(text);
    if (parsed.ok() && hidden_texts.count(model::RenderSwitchFaultEvent(*parsed)) != 0) continue;
    kept_codes.push_back(std::move(text));
  }
  codes = std::move(kept_codes);
  std::string level;
  for (const auto& [key, value] : map) {
    if (SwitchLevelRank(value.fault_level) > SwitchLevelRank(level)) level = value.fault_level;
  }
  if (map.empty()) level.clear();
  record.info.fault_level = level;
  record.info.node_status = SwitchNodeStatusFor(level);
  return result;
}

void UpdateSwitchLinkDownMemory(const SwitchRecord& record, std::optional<int64_t>& memory_ms,
                                int64_t now_ms) {
  for (const model::SwitchFaultEvent& e : record.events) {
    if (e.assembled_fault_code != kSwitchL2LinkDown) continue;
    int64_t t = now_ms;
    if (auto r = record.received_ms.find(SwitchKey(e)); r != record.received_ms.end()) {
      t = r->second;
    }
    if (!memory_ms.has_value() || t > *memory_ms) memory_ms = t;
  }
  if (memory_ms.has_value() && now_ms - *memory_ms > kSwitchLinkDownMemoryMs) memory_ms.reset();
}

StageResult ApplySwitchPreSeparate(SwitchRecord& record, bool any_npu_used) {
  StageResult result;
  if (record.info.node_status == model::kNodeStatusUnHealthy ||
      record.info.fault_level != model::kSwitchLevelPreSeparate) {
    return result;
  }
  const std::string status(any_npu_used ? model::kNodeStatusHealthy : model::kNodeStatusUnHealthy);
  if (record.info.node_status != status) {
    record.info.node_status = status;
    result.changed = true;
  }
  return result;
}

StageResult ApplyNodePreSeparate(NodeRecord& record, bool any_npu_used) {
  StageResult result;
  if (record.info.node_status == model::kNodeStatusUnHealthy) return result;
  int worst = 0;  // 0 NotHandle, 1 PreSeparate, 2 Separate
  for (const model::FaultDev& d : record.info.fault_dev_list) {
    if (d.fault_level == model::kNodeLevelSeparate) worst = std::max(worst, 2);
    if (d.fault_level == model::kNodeLevelPreSeparate) worst = std::max(worst, 1);
  }
  if (worst != 1) return result;
  const std::string status(any_npu_used ? model::kNodeStatusHealthy : model::kNodeStatusUnHealthy);
  if (record.info.node_status != status) {
    record.info.node_status = status;
    result.changed = true;
  }
  return result;
}

}  // namespace clusterd::cluster
