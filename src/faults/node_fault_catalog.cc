#include "faults/node_fault_catalog.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "common/json_util.h"
#include "common/sv.h"
#include "faults/hex_code.h"
#include "model/node_info.h"
#include "model/switch_info.h"

namespace clusterd::faults {

std::string_view NodeLevelName(NodeLevel level) {
  switch (level) {
    case NodeLevel::kNotHandle:
      return model::kNodeLevelNotHandle;
    case NodeLevel::kPreSeparate:
      return model::kNodeLevelPreSeparate;
    case NodeLevel::kSeparate:
      return model::kNodeLevelSeparate;
  }
  return "";
}

std::string_view NodeLevelStatus(NodeLevel level) {
  switch (level) {
    case NodeLevel::kNotHandle:
      return model::kNodeStatusHealthy;
    case NodeLevel::kPreSeparate:
      return model::kNodeStatusPreSeparate;
    case NodeLevel::kSeparate:
      return model::kNodeStatusUnHealthy;
  }
  return "";
}

namespace {

bool ValidNodeCode(std::string_view code) {
  if (code.size() != 8) return false;
  for (char c : code) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<NodeFaultCatalog> NodeFaultCatalog::Parse(std::string_view text) {
  auto doc = ParseJson(text, "NodeDConfiguration.json");
  if (!doc.ok()) return doc.status();
  if (!doc->is_object()) {
    return absl::InvalidArgumentError("NodeDConfiguration.json is not an object");
  }
  auto type_code = doc->find("FaultTypeCode");
  if (type_code == doc->end() || !type_code->is_object()) {
    return absl::InvalidArgumentError("NodeDConfiguration.json: FaultTypeCode is not an object");
  }
  constexpr std::array<std::pair<std::string_view, NodeLevel>, 3> kCategories = {{
      {"NotHandleFaultCodes", NodeLevel::kNotHandle},
      {"PreSeparateFaultCodes", NodeLevel::kPreSeparate},
      {"SeparateFaultCodes", NodeLevel::kSeparate},
  }};
  NodeFaultCatalog catalog;
  for (const auto& [key, level] : kCategories) {
    auto it = type_code->find(key);
    if (it == type_code->end() || it->is_null()) continue;
    if (!it->is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat("NodeDConfiguration.json: ", Sv(key), " is not an array"));
    }
    for (const auto& entry : *it) {
      if (!entry.is_string() || !ValidNodeCode(entry.get_ref<const std::string&>())) {
        return absl::InvalidArgumentError(absl::StrCat("NodeDConfiguration.json: ", Sv(key), ": ",
                                                       entry.dump(), " is not 8 alphanumerics"));
      }
      const std::string code = AsciiUpper(entry.get_ref<const std::string&>());
      auto [pos, inserted] = catalog.levels_.try_emplace(code, level);
      if (!inserted && pos->second != level) {
        return absl::InvalidArgumentError(
            absl::StrCat("NodeDConfiguration.json: code ", code, " is in two categories"));
      }
    }
  }
  return catalog;
}

std::optional<NodeLevel> NodeFaultCatalog::Level(std::string_view code) const {
  auto it = levels_.find(Sv(code));
  if (it == levels_.end()) return std::nullopt;
  return it->second;
}

}  // namespace clusterd::faults
