// Feeds an npu-agent fault script (`--faults script:FILE`, JSON lines: docs/npu-agent.md) to its
// parser, for a node of 8 NPUs and for one of 16.
#include <cstddef>
#include <cstdint>

#include "agent/fault_script.h"
#include "fuzz_util.h"

using namespace clusterd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  (void)agent::ParseFaultScript(text, 8);
  (void)agent::ParseFaultScript(text, 16);
  return 0;
}
