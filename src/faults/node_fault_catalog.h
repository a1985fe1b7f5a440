#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace clusterd::faults {

// NodeD levels, least severe first (numeric 0..2 of §3.5).
enum class NodeLevel : uint8_t { kNotHandle, kPreSeparate, kSeparate };
std::string_view NodeLevelName(NodeLevel level);  // NotHandleFault, PreSeparateFault, SeparateFault
std::string_view NodeLevelStatus(NodeLevel level);  // Healthy, PreSeparate, UnHealthy

// NodeDConfiguration.json (§8). Any invalid code, or a code in two categories, rejects the
// whole configuration (the caller keeps the previous one).
class NodeFaultCatalog {
 public:
  static absl::StatusOr<NodeFaultCatalog> Parse(std::string_view text);
  // Level of an upper-case 8-character code; nullopt when unconfigured (the code is dropped).
  std::optional<NodeLevel> Level(std::string_view code) const;
  const absl::flat_hash_map<std::string, NodeLevel>& levels() const { return levels_; }

 private:
  absl::flat_hash_map<std::string, NodeLevel> levels_;
};

}  // namespace clusterd::faults
