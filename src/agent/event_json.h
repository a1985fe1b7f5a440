#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "agent/agent_event.h"
#include "nlohmann/json.hpp"

namespace clusterd::agent {

// The latest offset of a scripted event from the agent's start: one year (366 days). The agent
// adds the offset to its start time in milliseconds; an unbounded one overflowed that sum.
inline constexpr int64_t kMaxEventOffsetMs = int64_t{366} * 24 * 3600 * 1000;

// The stable one-event JSON format of `script:FILE` (docs/npu-agent.md):
//   {"at_ms": 0, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
// kind chip|network (npu, code), switch (chip_id, port_id, code = assembled code or hex event
// id), node (device_type, device_id, code = 8 characters). Optional: severity (0-3),
// peer_port_id (switch). `num_npus` bounds npu; at_ms is in [0, kMaxEventOffsetMs]. Errors
// name the field.
absl::StatusOr<ScheduledEvent> ParseEventJson(const nlohmann::ordered_json& line, int num_npus);

// An event from its parts (the gRPC injection service shares the rules).
struct EventFields {
  std::string kind;
  int64_t npu = -1;
  std::string code;
  std::string assertion;
  int64_t severity = -1;  // -1: unknown
  int64_t chip_id = -1, port_id = -1, peer_port_id = 0;
  std::string device_type;
  int64_t device_id = 0;
  int64_t alarm_time_ms = 0;
};
absl::StatusOr<AgentEvent> MakeEvent(const EventFields& fields, int num_npus);

}  // namespace clusterd::agent
