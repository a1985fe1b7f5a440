#include "faults/write_gate.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace clusterd::faults {

std::string StripFaultTimes(std::string_view text) {
  static constexpr std::string_view kKey = "\"fault_time\":";
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t hit = text.find(kKey, pos);
    if (hit == std::string_view::npos) break;
    size_t end = hit + kKey.size();
    size_t digits = end;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits > end && digits < text.size() && text[digits] == ',') {
      out.append(text.substr(pos, hit - pos));
      pos = digits + 1;
    } else {
      out.append(text.substr(pos, end - pos));
      pos = end;
    }
  }
  out.append(text.substr(pos));
  return out;
}

DeviceInfoFingerprint Fingerprint(const std::map<std::string, std::string>& device_list,
                                  const std::optional<model::SwitchInfo>& switch_info,
                                  std::string_view manually_separate, std::string_view reasons) {
  DeviceInfoFingerprint f;
  for (const auto& [k, v] : device_list) f.device_list[k] = StripFaultTimes(v);
  if (switch_info.has_value()) {
    f.has_switch = true;
    if (switch_info->fault_code.has_value()) {
      f.switch_codes.insert(switch_info->fault_code->begin(), switch_info->fault_code->end());
    }
    f.switch_level = switch_info->fault_level;
    f.switch_status = switch_info->node_status;
  }
  f.manually_separate = std::string(manually_separate);
  f.reasons = std::string(reasons);
  return f;
}

bool SameNodeInfo(const model::NodeInfo& a, const model::NodeInfo& b) {
  if (a.node_status != b.node_status || a.fault_dev_list.size() != b.fault_dev_list.size()) {
    return false;
  }
  auto normalise = [](const model::NodeInfo& info) {
    std::vector<std::tuple<std::string, int64_t, std::string, std::vector<std::string>>> out;
    for (const model::FaultDev& d : info.fault_dev_list) {
      std::vector<std::string> codes = d.fault_code;
      std::sort(codes.begin(), codes.end());
      codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
      out.emplace_back(d.device_type, d.device_id, d.fault_level, std::move(codes));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  return normalise(a) == normalise(b);
}

std::optional<int64_t> NextWriteMs(bool changed, std::optional<int64_t> last_write_ms,
                                   int64_t min_spacing_ms, int64_t refresh_ms, int64_t now_ms) {
  if (!last_write_ms.has_value()) return now_ms;
  if (changed) return std::max(now_ms, *last_write_ms + min_spacing_ms);
  return std::max(now_ms, *last_write_ms + refresh_ms);
}

}  // namespace clusterd::faults
