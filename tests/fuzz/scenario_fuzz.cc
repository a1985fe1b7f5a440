// Feeds a clustersim scenario file (YAML, docs/clustersim.md) to its parser and validation,
// with the shipped fault-code catalog checking chip codes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "faults/fault_code_catalog.h"
#include "fuzz_util.h"
#include "sim/scenario.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const faults::FaultCodeCatalog* catalog = [] {
    faults::PolicyIssues issues;
    absl::StatusOr<faults::FaultCodeCatalog> parsed =
        faults::FaultCodeCatalog::Parse(fuzz::ReadDataFile("faultCode.json"), &issues);
    return parsed.ok() ? new faults::FaultCodeCatalog(*std::move(parsed)) : nullptr;
  }();
  const std::string_view text = fuzz::AsText(data, size);
  (void)sim::ParseScenario(text, "fuzz.yaml", catalog);
  return 0;
}
