#include "faults/fault_code_catalog.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json_util.h"
#include "common/sv.h"

namespace clusterd::faults {
namespace {

using nlohmann::ordered_json;

struct Category {
  std::string_view key;
  FaultLevel level;
  bool network;
};

// Precedence order of §3.2 (chip) and §3.3 (network): the first category wins.
constexpr std::array<Category, 12> kCategories = {{
    {"SeparateNPUCodes", FaultLevel::kSeparateNPU, false},
    {"PreSeparateNPUCodes", FaultLevel::kPreSeparateNPU, false},
    {"RestartNPUCodes", FaultLevel::kRestartNPU, false},
    {"FreeRestartNPUCodes", FaultLevel::kFreeRestartNPU, false},
    {"RestartBusinessCodes", FaultLevel::kRestartBusiness, false},
    {"RestartRequestCodes", FaultLevel::kRestartRequest, false},
    {"SubHealthFaultCodes", FaultLevel::kSubHealthFault, false},
    {"NotHandleFaultCodes", FaultLevel::kNotHandleFault, false},
    {"SeparateNPUNetworkCodes", FaultLevel::kSeparateNPU, true},
    {"PreSeparateNPUNetworkCodes", FaultLevel::kPreSeparateNPU, true},
    {"SubHealthFaultNetworkCodes", FaultLevel::kSubHealthFault, true},
    {"NotHandleFaultNetworkCodes", FaultLevel::kNotHandleFault, true},
}};

bool NetworkListAccepts(FaultLevel level) {
  return level == FaultLevel::kSeparateNPU || level == FaultLevel::kPreSeparateNPU ||
         level == FaultLevel::kSubHealthFault || level == FaultLevel::kNotHandleFault;
}

// Keeps the more severe of an existing and a new level, which is the precedence order.
void Assign(absl::flat_hash_map<FaultCode, FaultLevel>& map, FaultCode code, FaultLevel level) {
  auto [it, inserted] = map.try_emplace(code, level);
  if (!inserted) it->second = model::MostSevere(it->second, level);
}

}  // namespace

bool IsNetworkCode(FaultCode code) {
  return code == kRoceLinkDown || code == kUboePortDown || code == kUboeSubHealth ||
         code == kUboePreSeparate;
}

absl::StatusOr<FaultCodeCatalog> FaultCodeCatalog::Parse(std::string_view text,
                                                         PolicyIssues* issues) {
  auto parsed = ParseJson(text, "faultCode.json");
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("faultCode.json is ", parsed->type_name(), ", want object"));
  }
  FaultCodeCatalog catalog;
  for (const Category& category : kCategories) {
    auto it = parsed->find(category.key);
    if (it == parsed->end() || it->is_null()) continue;
    if (!it->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat("faultCode.json: ", Sv(category.key), " is ",
                                                     it->type_name(), ", want array"));
    }
    for (const ordered_json& entry : *it) {
      if (!entry.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat("faultCode.json: ", Sv(category.key),
                                                       " has a ", entry.type_name(), " entry"));
      }
      const std::string& spelled = entry.get_ref<const std::string&>();
      const std::optional<FaultCode> code = ParseHexCode(spelled);
      if (!code.has_value()) {
        issues->push_back({"code_skipped", absl::StrCat("faultCode.json: ", Sv(category.key),
                                                        ": \"", spelled, "\" is not a hex code")});
        continue;
      }
      catalog.spellings_.try_emplace(*code, AsciiLower(spelled));
      if (category.network) {
        Assign(catalog.network_levels_, *code, category.level);
      } else if (IsNetworkCode(*code)) {
        // §3.3: chip lists feed the network lists; restart lists cannot apply to a link.
        if (NetworkListAccepts(category.level)) {
          Assign(catalog.network_levels_, *code, category.level);
        } else {
          issues->push_back({"network_code_demoted",
                             absl::StrCat("faultCode.json: network code ", spelled, " in ",
                                          Sv(category.key), " is treated as NotHandleFault")});
          Assign(catalog.network_levels_, *code, FaultLevel::kNotHandleFault);
        }
      } else {
        Assign(catalog.chip_levels_, *code, category.level);
      }
    }
  }
  return catalog;
}

std::optional<FaultLevel> FaultCodeCatalog::KnownChipLevel(FaultCode code) const {
  auto it = chip_levels_.find(code);
  if (it == chip_levels_.end()) return std::nullopt;
  return it->second;
}

FaultLevel FaultCodeCatalog::ChipCodeLevel(FaultCode code, Severity severity) const {
  if (auto it = chip_levels_.find(code); it != chip_levels_.end()) return it->second;
  if (!severity.has_value() || *severity > 1) return FaultLevel::kSeparateNPU;
  return FaultLevel::kNotHandleFault;
}

FaultLevel FaultCodeCatalog::NetworkCodeLevel(FaultCode code) const {
  if (auto it = network_levels_.find(code); it != network_levels_.end()) return it->second;
  return FaultLevel::kPreSeparateNPU;
}

const std::string* FaultCodeCatalog::Spelling(FaultCode code) const {
  auto it = spellings_.find(code);
  return it == spellings_.end() ? nullptr : &it->second;
}

}  // namespace clusterd::faults
