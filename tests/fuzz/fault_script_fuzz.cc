// Feeds an npu-agent fault script (`--faults script:FILE`, JSON lines: docs/npu-agent.md) to its
// parser, for a node of 8 NPUs and for one of 16, and plays what parsed through an agent (memory
// store, manual clock, shipped policy files): its events are injected at their offsets from the
// agent's start, fault cycles run and the ConfigMaps are written, for up to an hour of agent
// time.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "agent/agent_core.h"
#include "agent/fault_script.h"
#include "agent/script_schedule.h"
#include "common/clock.h"
#include "fuzz_util.h"
#include "store/object_store.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  (void)agent::ParseFaultScript(text, 16);
  agent::FaultScript script = agent::ParseFaultScript(text, 8);
  if (script.events.empty()) return 0;

  agent::AgentOptions options;
  options.node = "node-1";
  options.profile = *faults::ChipProfile::FromName("Ascend910");
  options.num_npus = 8;
  options.files = agent::PolicyFiles::InDirectory(CLUSTERD_DATA_DIR);
  options.zone = absl::UTCTimeZone();
  ManualClock clock;
  std::unique_ptr<store::ObjectStore> store = *store::OpenStore("memory");
  agent::AgentCore core(std::move(options), *store, clock);
  if (!core.Start().ok()) return 0;
  core.AddSchedule(std::make_unique<agent::ScriptSchedule>(std::move(script.events)));
  const absl::Time until = clock.Now() + absl::Hours(1);
  for (int step = 0; step < 64; ++step) {
    const absl::Time wake = core.NextWakeup();
    if (wake > until) break;
    if (wake > clock.Now()) clock.Set(wake);
    core.Step();
  }
  return 0;
}
