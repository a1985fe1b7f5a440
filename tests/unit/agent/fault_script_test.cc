#include "agent/fault_script.h"

#include "agent/event_json.h"
#include "gtest/gtest.h"

namespace clusterd::agent {
namespace fault_script_test {

TEST(FaultScript, ParsesEventsSkipsCommentsAndSortsByOffset) {
  const FaultScript s = ParseFaultScript(R"(# a comment

{"at_ms": 500, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
   {"at_ms": 0, "kind": "network", "npu": 1, "code": "81078603", "assertion": "recover"}
{"at_ms": 0, "kind": "switch", "chip_id": 1, "port_id": 7, "code": "[0x00f1fef5,155914,npu,na]", "assertion": "once", "severity": 2}
{"at_ms": 9, "kind": "node", "device_type": "PSU", "device_id": 1, "code": "2c000031", "assertion": "occur"}
)",
                                         8);
  EXPECT_TRUE(s.errors.empty());
  ASSERT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.events[0].at_ms, 0);
  EXPECT_EQ(EventKind(s.events[0].event), "network");
  EXPECT_EQ(EventKind(s.events[1].event), "switch");
  EXPECT_EQ(EventKind(s.events[2].event), "node");
  EXPECT_EQ(std::get<faults::NodeFaultInput>(s.events[2].event).code, "2C000031");
  const auto& chip = std::get<faults::NpuFaultEvent>(s.events[3].event);
  EXPECT_EQ(chip.npu, 3);
  EXPECT_EQ(chip.code, 0x80E01801u);
  EXPECT_EQ(chip.assertion, faults::Assertion::kOccur);
  EXPECT_FALSE(chip.severity.has_value());
}

TEST(FaultScript, MalformedLinesAreReportedWithTheirNumberAndSkipped) {
  const FaultScript s = ParseFaultScript(
      "{\"at_ms\":0,\"kind\":\"chip\",\"npu\":0,\"code\":\"80E01801\",\"assertion\":\"occur\"}\n"
      "not json\n"
      "{\"at_ms\":0,\"kind\":\"chip\",\"npu\":8,\"code\":\"80E01801\",\"assertion\":\"occur\"}\n"
      "{\"at_ms\":0,\"kind\":\"chip\",\"npu\":1,\"code\":\"xyz\",\"assertion\":\"occur\"}\n"
      "{\"at_ms\":0,\"kind\":\"chip\",\"npu\":1,\"code\":\"80E01801\",\"assertion\":\"maybe\"}\n"
      "{\"at_ms\":-1,\"kind\":\"chip\",\"npu\":1,\"code\":\"80E01801\",\"assertion\":\"occur\"}\n"
      "{\"at_ms\":\"0\",\"kind\":\"chip\",\"npu\":1,\"code\":\"80E01801\",\"assertion\":\"occur\"}"
      "\n"
      "{\"at_ms\":0,\"kind\":\"gpu\",\"npu\":1,\"code\":\"80E01801\",\"assertion\":\"occur\"}\n"
      "{\"at_ms\":0,\"kind\":\"switch\",\"port_id\":1,\"code\":\"1\",\"assertion\":\"occur\"}\n"
      "{\"at_ms\":0,\"kind\":\"node\",\"npu\":1,\"code\":\"2C000031\",\"assertion\":\"occur\"}\n"
      "[1,2]\n"
      "{\"at_ms\":0,\"kind\":\"chip\",\"npu\":1,\"code\":\"80E01801\"}\n",
      8);
  EXPECT_EQ(s.events.size(), 1u);
  ASSERT_EQ(s.errors.size(), 11u);
  EXPECT_EQ(s.errors[0].line, 2);
  EXPECT_EQ(s.errors[1].line, 3);
  EXPECT_NE(s.errors[1].message.find("npu 8 is not on this node"), std::string::npos);
  EXPECT_EQ(s.errors[10].line, 12);
  EXPECT_NE(s.errors[10].message.find("assertion is missing"), std::string::npos);
}

// Reproduced with fuzz_fault_script under UBSan (tests/fuzz/corpus/fault_script/
// at_ms_int64_max.jsonl): an at_ms near INT64_MAX parsed, and the agent's start + at_ms
// overflowed (undefined behaviour) each time it computed its next wakeup.
TEST(FaultScript, AtMsOverAYearIsRefused) {
  const FaultScript s = ParseFaultScript(
      "{\"at_ms\": 9223372036854775807, \"kind\": \"chip\", \"npu\": 3, \"code\": "
      "\"80E01801\", \"assertion\": \"occur\"}\n"
      "{\"at_ms\": 31622400000, \"kind\": \"chip\", \"npu\": 3, \"code\": \"80E01801\", "
      "\"assertion\": \"occur\"}\n",
      8);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].line, 1);
  EXPECT_NE(s.errors[0].message.find("is more than a year"), std::string::npos)
      << s.errors[0].message;
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].at_ms, kMaxEventOffsetMs);
}

TEST(EventJson, BareSwitchEventIdIsAssembled) {
  EventFields f;
  f.kind = "switch";
  f.chip_id = 0;
  f.port_id = 2;
  f.code = "8520003";
  f.assertion = "occur";
  auto e = MakeEvent(f, 8);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(std::get<faults::SwitchFaultInput>(*e).assembled_code, "[0x08520003,na,na,na]");
}

TEST(EventJson, NodeCodesMustBeEightCharacters) {
  EventFields f;
  f.kind = "node";
  f.code = "2C00003";
  f.assertion = "occur";
  EXPECT_FALSE(MakeEvent(f, 8).ok());
}

}  // namespace fault_script_test
}  // namespace clusterd::agent
