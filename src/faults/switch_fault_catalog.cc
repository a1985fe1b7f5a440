#include "faults/switch_fault_catalog.h"

#include <array>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/json_util.h"
#include "common/sv.h"
#include "faults/hex_code.h"
#include "model/switch_info.h"

namespace clusterd::faults {

std::string_view SwitchLevelName(SwitchLevel level) {
  switch (level) {
    case SwitchLevel::kNotHandle:
      return model::kSwitchLevelNotHandle;
    case SwitchLevel::kSubHealth:
      return model::kSwitchLevelSubHealth;
    case SwitchLevel::kRestartRequest:
      return model::kSwitchLevelRestartRequest;
    case SwitchLevel::kPreSeparate:
      return model::kSwitchLevelPreSeparate;
    case SwitchLevel::kSeparate:
      return model::kSwitchLevelSeparate;
  }
  return "";
}

std::string_view SwitchNodeStatus(SwitchLevel level) {
  switch (level) {
    case SwitchLevel::kNotHandle:
      return model::kNodeStatusHealthy;
    case SwitchLevel::kSubHealth:
      return model::kNodeStatusSubHealthy;
    case SwitchLevel::kRestartRequest:
      return model::kNodeStatusUnHealthy;
    case SwitchLevel::kPreSeparate:
      return model::kNodeStatusPreSeparate;
    case SwitchLevel::kSeparate:
      return model::kNodeStatusUnHealthy;
  }
  return "";
}

std::optional<AssembledCode> ParseAssembledCode(std::string_view code) {
  if (code.size() < 2 || code.size() > 50 || code.front() != '[' || code.back() != ']') {
    return std::nullopt;
  }
  const std::vector<absl::string_view> parts =
      absl::StrSplit(absl::string_view(code.data() + 1, code.size() - 2), ',');
  if (parts.size() != 4) return std::nullopt;
  const std::optional<FaultCode> event =
      ParseHexCode(std::string_view(parts[0].data(), parts[0].size()));
  if (!event.has_value() || *event > 0xFFFFFFFFu) return std::nullopt;
  AssembledCode out;
  out.event_type = static_cast<uint32_t>(*event);
  if (parts[2] == "cpu") {
    out.peer_port_device = model::kPeerCpu;
  } else if (parts[2] == "npu") {
    out.peer_port_device = model::kPeerNpu;
  } else if (parts[2] == "L2") {
    out.peer_port_device = model::kPeerL2;
  } else {
    out.peer_port_device = model::kPeerNa;
  }
  return out;
}

absl::StatusOr<SwitchFaultCatalog> SwitchFaultCatalog::Parse(std::string_view text,
                                                             PolicyIssues* issues) {
  auto doc = ParseJson(text, "SwitchFaultCode.json");
  if (!doc.ok()) return doc.status();
  if (!doc->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SwitchFaultCode.json is ", doc->type_name(), ", want object"));
  }
  // Later assignments override earlier ones (§4).
  constexpr std::array<std::pair<std::string_view, SwitchLevel>, 6> kOrder = {{
      {"NotHandleFaultCodes", SwitchLevel::kNotHandle},
      {"SubHealthFaultCodes", SwitchLevel::kSubHealth},
      {"RestartRequestFaultCodes", SwitchLevel::kRestartRequest},
      {"PreSeparateFaultCodes", SwitchLevel::kPreSeparate},
      {"ResetFaultCodes", SwitchLevel::kSeparate},
      {"SeparateFaultCodes", SwitchLevel::kSeparate},
  }};
  SwitchFaultCatalog catalog;
  for (const auto& [key, level] : kOrder) {
    auto it = doc->find(key);
    if (it == doc->end() || it->is_null()) continue;
    if (!it->is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SwitchFaultCode.json: ", Sv(key), " is ", it->type_name(), ", want array"));
    }
    for (const auto& entry : *it) {
      if (!entry.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat("SwitchFaultCode.json: ", Sv(key), " has a ",
                                                       entry.type_name(), " entry"));
      }
      const std::string& code = entry.get_ref<const std::string&>();
      if (!ParseAssembledCode(code).has_value()) {
        issues->push_back({"code_skipped", absl::StrCat("SwitchFaultCode.json: ", Sv(key), ": \"",
                                                        code, "\" is not an assembled code")});
        continue;
      }
      catalog.levels_[code] = level;
    }
  }
  return catalog;
}

std::optional<SwitchLevel> SwitchFaultCatalog::Level(std::string_view assembled_code) const {
  auto it = levels_.find(Sv(assembled_code));
  if (it == levels_.end()) return std::nullopt;
  return it->second;
}

}  // namespace clusterd::faults
