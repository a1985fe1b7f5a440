#include "agent/event_json.h"

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "faults/hex_code.h"
#include "faults/switch_fault_catalog.h"
#include "model/go_json.h"

namespace clusterd::agent {
namespace {

using nlohmann::ordered_json;

absl::Status Bad(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

absl::StatusOr<faults::Assertion> AssertionOf(const std::string& text) {
  const std::optional<faults::Assertion> a = faults::ParseAssertion(text);
  if (!a.has_value()) {
    return Bad(absl::StrCat("assertion \"", text, "\" is not occur, recover or once"));
  }
  return *a;
}

absl::Status CheckUint32(int64_t value, std::string_view field) {
  if (value < 0 || value > 0xFFFFFFFFll) {
    return Bad(absl::StrCat(Sv(field), " ", value, " is not a uint32"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view EventKind(const AgentEvent& event) {
  switch (event.index()) {
    case 0: {
      const auto& e = std::get<faults::NpuFaultEvent>(event);
      return faults::IsNetworkCode(e.code) ? "network" : "chip";
    }
    case 1:
      return "switch";
    default:
      return "node";
  }
}

absl::StatusOr<AgentEvent> MakeEvent(const EventFields& f, int num_npus) {
  if (f.assertion.empty()) return Bad("assertion is missing");
  CLUSTERD_ASSIGN_OR_RETURN(faults::Assertion assertion, AssertionOf(f.assertion));
  if (f.code.empty()) return Bad("code is missing");
  if (f.severity < -1 || f.severity > 3)
    return Bad(absl::StrCat("severity ", f.severity, " is not 0-3"));
  if (f.kind == "chip" || f.kind == "network") {
    if (f.npu < 0) return Bad("npu is missing");
    if (f.npu >= num_npus) {
      return Bad(absl::StrCat("npu ", f.npu, " is not on this node (--npus ", num_npus, ")"));
    }
    const std::optional<faults::FaultCode> code = faults::ParseHexCode(f.code);
    if (!code.has_value()) return Bad(absl::StrCat("code \"", f.code, "\" is not hex"));
    faults::NpuFaultEvent e;
    e.npu = static_cast<int>(f.npu);
    e.code = *code;
    e.assertion = assertion;
    e.alarm_time_ms = f.alarm_time_ms;
    if (f.severity >= 0) e.severity = static_cast<uint32_t>(f.severity);
    return AgentEvent(e);
  }
  if (f.kind == "switch") {
    if (f.chip_id < 0) return Bad("chip_id is missing");
    if (f.port_id < 0) return Bad("port_id is missing");
    CLUSTERD_RETURN_IF_ERROR(CheckUint32(f.chip_id, "chip_id"));
    CLUSTERD_RETURN_IF_ERROR(CheckUint32(f.port_id, "port_id"));
    CLUSTERD_RETURN_IF_ERROR(CheckUint32(f.peer_port_id, "peer_port_id"));
    faults::SwitchFaultInput e;
    e.assembled_code = f.code;
    if (f.code.front() != '[') {
      // A bare event id: assemble it as "[0x<8 hex>,na,na,na]".
      const std::optional<faults::FaultCode> id = faults::ParseHexCode(f.code);
      if (!id.has_value() || *id > 0xFFFFFFFFu) {
        return Bad(absl::StrCat("code \"", f.code, "\" is neither an assembled code nor hex"));
      }
      std::string hex = faults::MinimalHex(*id);
      e.assembled_code = absl::StrCat("[0x", std::string(8 - hex.size(), '0'), hex, ",na,na,na]");
    }
    if (!faults::ParseAssembledCode(e.assembled_code).has_value()) {
      return Bad(absl::StrCat("code \"", f.code, "\" is not an assembled switch code"));
    }
    e.chip_id = static_cast<uint32_t>(f.chip_id);
    e.port_id = static_cast<uint32_t>(f.port_id);
    e.peer_port_id = static_cast<uint32_t>(f.peer_port_id);
    e.severity = f.severity < 0 ? 0 : static_cast<uint32_t>(f.severity);
    e.assertion = assertion;
    e.alarm_time_ms = f.alarm_time_ms;
    return AgentEvent(e);
  }
  if (f.kind == "node") {
    if (f.code.size() != 8) return Bad(absl::StrCat("code \"", f.code, "\" is not 8 characters"));
    faults::NodeFaultInput e;
    e.device_type = f.device_type.empty() ? "UNKNOWN" : f.device_type;
    e.device_id = f.device_id;
    e.code = faults::AsciiUpper(f.code);
    e.assertion = assertion;
    return AgentEvent(e);
  }
  return Bad(absl::StrCat("kind \"", f.kind, "\" is not chip, network, switch or node"));
}

absl::StatusOr<ScheduledEvent> ParseEventJson(const ordered_json& line, int num_npus) {
  if (!line.is_object()) return Bad("an event is a JSON object");
  namespace go_json = model::go_json;
  EventFields f;
  int64_t at_ms = 0;
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "at_ms", &at_ms));
  if (at_ms < 0) return Bad(absl::StrCat("at_ms ", at_ms, " is negative"));
  if (at_ms > kMaxEventOffsetMs) {
    return Bad(absl::StrCat("at_ms ", at_ms, " is more than a year (", kMaxEventOffsetMs, " ms)"));
  }
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(line, "kind", &f.kind));
  if (f.kind.empty()) return Bad("kind is missing");
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "npu", &f.npu));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(line, "code", &f.code));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(line, "assertion", &f.assertion));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "severity", &f.severity));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "chip_id", &f.chip_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "port_id", &f.port_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "peer_port_id", &f.peer_port_id));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadString(line, "device_type", &f.device_type));
  CLUSTERD_RETURN_IF_ERROR(go_json::ReadInt64(line, "device_id", &f.device_id));
  if (f.kind == "node" && line.contains("npu")) return Bad("a node event has no npu");
  CLUSTERD_ASSIGN_OR_RETURN(AgentEvent event, MakeEvent(f, num_npus));
  return ScheduledEvent{at_ms, std::move(event)};
}

}  // namespace clusterd::agent
