#include "cluster/fault_centre_key.h"

#include <array>
#include <utility>

namespace clusterd::cluster {
namespace {

using Kind = FaultCentreKey::Kind;

struct Spelling {
  Kind kind;
  std::string_view text;  // a prefix for kinds with a name, the whole key otherwise
  bool named;
};

constexpr std::array<Spelling, 13> kSpellings = {{
    {Kind::kDeviceInfo, "dev/", true},
    {Kind::kNodeInfo, "nod/", true},
    {Kind::kK8sNode, "k8s/", true},
    {Kind::kPublicFaultCm, "pf/", true},
    {Kind::kJob, "job/", true},
    {Kind::kJobIndex, "#index", false},
    {Kind::kPublicFaultExpiry, "#pf-expire", false},
    {Kind::kManualTriage, "#manual-triage", false},
    {Kind::kManualSync, "#manual-sync", false},
    {Kind::kManualConfig, "#manual-config", false},
    {Kind::kManualConfigChanged, "#manual-config-changed", false},
    {Kind::kStatistic, "#statistic", false},
    {Kind::kConfigPoll, "#config-poll", false},
}};

}  // namespace

std::string FaultCentreKeyCodec::Encode(const FaultCentreKey& key) {
  for (const Spelling& s : kSpellings) {
    if (s.kind != key.kind) continue;
    std::string out(s.text);
    if (s.named) out += key.name;
    return out;
  }
  return "";  // unreachable: every kind is spelled
}

std::optional<FaultCentreKey> FaultCentreKeyCodec::Decode(std::string_view text) {
  for (const Spelling& s : kSpellings) {
    if (s.named) {
      if (text.size() > s.text.size() && text.substr(0, s.text.size()) == s.text) {
        return FaultCentreKey{s.kind, std::string(text.substr(s.text.size()))};
      }
    } else if (text == s.text) {
      return FaultCentreKey::Of(s.kind);
    }
  }
  return std::nullopt;
}

}  // namespace clusterd::cluster
