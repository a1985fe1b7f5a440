// Feeds the PublicFault value of a public-fault ConfigMap (or the JSON a sender such as CCAE or
// pingmesh posts) to its decoder and the §9.2 validation against the shipped configuration, and
// the same text as a publicFaultConfiguration.json / publicCustomization.json file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cluster/public_fault_request.h"
#include "fuzz_util.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  static const cluster::PublicFaultConfig shipped = [] {
    absl::StatusOr<cluster::PublicFaultConfig> c =
        cluster::ParsePublicFaultConfig(fuzz::ReadDataFile("publicFaultConfiguration.json"));
    return c.ok() ? *c : cluster::PublicFaultConfig{};
  }();
  (void)cluster::ParsePublicFaultConfig(text);
  absl::StatusOr<cluster::PublicFaultRequest> request = cluster::ParsePublicFaultRequest(text);
  if (!request.ok()) return 0;
  auto node_by_serial = [](const std::string& sn) -> std::optional<std::string> {
    if (sn == "SN-1") return "node-1";
    return std::nullopt;
  };
  cluster::PublicFaultVerdict verdict =
      cluster::ValidatePublicFaultRequest(*request, shipped, node_by_serial);
  (void)cluster::InvalidPublicFaultInfo(verdict.info);
  return 0;
}
