#include "faults/device_info_render.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "model/npu_name_list.h"
#include "model/switch_info.h"
#include "model/upgrade_fault_reason.h"

namespace clusterd::faults {

using model::FaultLevel;

namespace {

model::DeviceFault BuildEntry(const DeviceFaultEngine& engine, const NpuFaultState& npu,
                              Plane plane) {
  const FaultPolicy& policy = engine.policy();
  const int p = static_cast<int>(plane);
  FaultLevel escalation = FaultLevel::kNormalNPU;
  for (const EscalationReason& r : npu.reasons) {
    if (r.plane == plane) escalation = model::MostSevere(escalation, r.level);
  }
  if (plane == Plane::kChip && npu.manual) {
    escalation = model::MostSevere(escalation, FaultLevel::kManuallySeparateNPU);
  }

  model::DeviceFault fault;
  fault.fault_type = std::string(plane == Plane::kNetwork ? model::kFaultTypeCardNetworkUnhealthy
                                                          : model::kFaultTypeCardUnhealthy);
  fault.npu_name = npu.name;
  const std::string level(model::FaultLevelName(npu.level[p]));
  fault.large_model_fault_level = fault.fault_level = fault.fault_handling = level;

  std::vector<std::string> codes;
  for (const ActiveCode& c : npu.codes[p]) {
    std::string hex = policy.UpperHex(c.code);
    const FaultLevel code_level =
        model::MostSevere(engine.CodeLevel(npu, plane, c.code), escalation);
    fault.fault_time_and_level_map[hex] = {c.first_seen_ms,
                                           std::string(model::FaultLevelName(code_level))};
    codes.push_back(std::move(hex));
  }
  // Escalated codes: listed after the current ones; their map entry shows the escalation (the
  // most severe reason of the code when it has several).
  std::vector<const EscalationReason*> escalated;
  for (const EscalationReason& r : npu.reasons) {
    if (r.plane != plane || r.type == UpgradeType::kAutofill) continue;
    auto same = std::find_if(escalated.begin(), escalated.end(),
                             [&](const EscalationReason* e) { return e->code == r.code; });
    if (same == escalated.end()) {
      escalated.push_back(&r);
    } else if (model::IsMoreSevere(r.level, (*same)->level)) {
      *same = &r;
    }
  }
  for (const EscalationReason* r : escalated) {
    std::string hex = policy.UpperHex(r->code);
    fault.fault_time_and_level_map[hex] = {r->upgrade_time_ms,
                                           std::string(model::FaultLevelName(r->level))};
    if (std::find(codes.begin(), codes.end(), hex) == codes.end()) codes.push_back(std::move(hex));
  }
  fault.fault_code = absl::StrJoin(codes, ",");
  return fault;
}

std::string JoinSorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return absl::StrJoin(names, ",");
}

}  // namespace

std::vector<model::DeviceFault> BuildDeviceFaults(const DeviceFaultEngine& engine) {
  std::vector<model::DeviceFault> out;
  for (const NpuFaultState& npu : engine.npus()) {
    const auto& net = npu.codes[static_cast<int>(Plane::kNetwork)];
    const auto& chip = npu.codes[static_cast<int>(Plane::kChip)];
    if (!net.empty() || !npu.network_healthy)
      out.push_back(BuildEntry(engine, npu, Plane::kNetwork));
    if (!chip.empty() || !npu.chip_healthy) out.push_back(BuildEntry(engine, npu, Plane::kChip));
  }
  return out;
}

std::map<std::string, std::string> BuildDeviceList(const DeviceFaultEngine& engine) {
  std::vector<std::string> available, unhealthy, network_unhealthy, recovering;
  for (const NpuFaultState& npu : engine.npus()) {
    if (npu.resetting) recovering.push_back(npu.name);
    if (!npu.chip_healthy) {
      unhealthy.push_back(npu.name);
    } else if (!engine.InUse(npu.id)) {
      available.push_back(npu.name);
    }
    if (!npu.network_healthy) network_unhealthy.push_back(npu.name);
  }
  const model::DeviceListKeys keys = engine.profile().keys();
  std::map<std::string, std::string> list;
  list[keys.available] = JoinSorted(std::move(available));
  list[keys.unhealthy] = JoinSorted(std::move(unhealthy));
  list[keys.fault] = model::RenderDeviceFaults(BuildDeviceFaults(engine));
  if (engine.profile().has_network()) {
    list[keys.network_unhealthy] = JoinSorted(std::move(network_unhealthy));
    list[keys.recovering] = JoinSorted(std::move(recovering));
  }
  return list;
}

DeviceInfoContent BuildDeviceInfoContent(const DeviceFaultEngine& engine,
                                         const SwitchFaultEngine* switches,
                                         const DeviceInfoIdentity& identity, int64_t now_ms) {
  const int64_t now_s = now_ms / 1000;
  model::DeviceInfoCfg cfg;
  cfg.device_info.device_list = BuildDeviceList(engine);
  cfg.device_info.update_time = now_s;
  cfg.super_pod_id = identity.super_pod_id;
  cfg.server_index = identity.server_index;
  cfg.rack_id = identity.rack_id;

  std::optional<model::SwitchInfo> switch_info;
  if (engine.profile().writes_switch_info()) {
    switch_info = switches != nullptr ? switches->Snapshot(engine.policy().switch_codes, now_s)
                                      : model::ZeroSwitchInfo();
  }
  DeviceInfoContent content;
  content.manually_separated = engine.ManuallySeparatedNames();
  const std::string manual = model::JoinNpuNames(content.manually_separated);
  const std::string reasons = model::RenderUpgradeFaultReasons(engine.Reasons());
  content.data[std::string(model::kDeviceInfoCfgKey)] = model::RenderDeviceInfoCfg(cfg);
  if (switch_info.has_value()) {
    content.data[std::string(model::kSwitchInfoCfgKey)] = model::RenderSwitchInfo(*switch_info);
  }
  content.data[std::string(model::kManuallySeparateNpuKey)] = manual;
  content.data[std::string(model::kUpgradeFaultReasonKey)] = reasons;
  content.data[std::string(model::kDescriptionKey)] = std::string(model::kDescriptionText);
  content.fingerprint = Fingerprint(cfg.device_info.device_list, switch_info, manual, reasons);
  return content;
}

}  // namespace clusterd::faults
