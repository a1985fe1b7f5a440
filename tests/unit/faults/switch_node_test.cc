// UnifiedBus switch faults (§1.2.2) and NodeD node faults (§8).
#include "common/canonical_json.h"
#include "faults/node_fault_catalog.h"
#include "faults/node_fault_engine.h"
#include "faults/switch_fault_engine.h"
#include "gtest/gtest.h"
#include "shipped_policy.h"

namespace clusterd::faults {
namespace switch_node_test {

using testing::ReadDataFile;

SwitchFaultCatalog ShippedSwitchCatalog() {
  PolicyIssues issues;
  auto c = SwitchFaultCatalog::Parse(ReadDataFile("SwitchFaultCode.json"), &issues);
  EXPECT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(issues.empty());
  return *c;
}

SwitchFaultInput Switch(std::string code, uint32_t chip, uint32_t port, Assertion a,
                        int64_t t = 1718000000000) {
  SwitchFaultInput in;
  in.assembled_code = std::move(code);
  in.chip_id = chip;
  in.port_id = port;
  in.assertion = a;
  in.alarm_time_ms = t;
  return in;
}

TEST(SwitchFaultCatalog, ShippedCountsAndLevels) {
  const SwitchFaultCatalog c = ShippedSwitchCatalog();
  EXPECT_EQ(c.levels().size(), 30u);  // 12 + 8 + 1 + 9
  EXPECT_EQ(c.Level("[0x00f1fef5,155914,npu,na]"), SwitchLevel::kRestartRequest);
  EXPECT_EQ(c.Level("[0x08520003,na,L2,na]"), SwitchLevel::kNotHandle);
  EXPECT_EQ(c.Level("[0x08520003,na,cpu,na]"), SwitchLevel::kSeparate);
  EXPECT_FALSE(c.Level("[0x0,na,na,na]").has_value());
}

TEST(SwitchFaultCatalog, LaterCategoriesOverrideAndBadCodesAreSkipped) {
  PolicyIssues issues;
  auto c = *SwitchFaultCatalog::Parse(R"({"NotHandleFaultCodes":["[0x1,na,na,na]","0x1,na,na,na",
      "[0x1,na,na]","[0x00000001,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,na,na]"],
      "ResetFaultCodes":["[0x1,na,na,na]"]})",
                                      &issues);
  EXPECT_EQ(c.Level("[0x1,na,na,na]"), SwitchLevel::kSeparate);
  EXPECT_EQ(issues.size(), 3u);
  EXPECT_FALSE(SwitchFaultCatalog::Parse(R"({"SeparateFaultCodes":[1]})", &issues).ok());
}

TEST(SwitchFaultEngine, NoFaultsIsHealthyWithEmptyCollections) {
  SwitchFaultEngine engine;
  engine.RunCycle(1718000000000);
  EXPECT_EQ(
      model::RenderSwitchInfo(engine.Snapshot(ShippedSwitchCatalog(), 1718000001)),
      R"({"FaultCode":[],"FaultLevel":"","UpdateTime":1718000001,"NodeStatus":"Healthy","FaultTimeAndLevelMap":{}})");
}

TEST(SwitchFaultEngine, UnregisteredFaultsAreNotReportedButCountAsNotHandle) {
  SwitchFaultEngine engine;
  ASSERT_TRUE(engine.Submit(Switch("[0x12345678,na,na,na]", 0, 1, Assertion::kOccur)));
  EXPECT_FALSE(engine.Submit(Switch("garbage", 0, 1, Assertion::kOccur)));
  engine.RunCycle(1718000000000);
  EXPECT_EQ(
      model::RenderSwitchInfo(engine.Snapshot(ShippedSwitchCatalog(), 1718000001)),
      R"({"FaultCode":[],"FaultLevel":"NotHandle","UpdateTime":1718000001,"NodeStatus":"Healthy","FaultTimeAndLevelMap":{}})");
}

TEST(SwitchFaultEngine, MostSevereRegisteredLevelAndStatus) {
  SwitchFaultEngine engine;
  engine.Submit(Switch("[0x00f103b6,155908,na,na]", 0, 1, Assertion::kOccur));   // SubHealth
  engine.Submit(Switch("[0x00f1fef5,155914,npu,na]", 1, 7, Assertion::kOccur));  // RestartRequest
  engine.RunCycle(1718000000000);
  model::SwitchInfo info = engine.Snapshot(ShippedSwitchCatalog(), 1718000001);
  EXPECT_EQ(info.fault_level, "RestartRequest");
  EXPECT_EQ(info.node_status, "UnHealthy");
  EXPECT_EQ(info.fault_code->size(), 2u);
  EXPECT_EQ(info.fault_time_and_level_map->at("[0x00f1fef5,155914,npu,na]_1_7").fault_level,
            "RestartRequest");
  engine.Submit(Switch("[0x00f1fef5,155914,npu,na]", 1, 7, Assertion::kRecover));
  engine.RunCycle(1718000002000);
  info = engine.Snapshot(ShippedSwitchCatalog(), 1718000002);
  EXPECT_EQ(info.fault_level, "SubHealthFault");
  EXPECT_EQ(info.node_status, "SubHealthy");
}

TEST(SwitchFaultEngine, SixteenOrMoreL2PortsOfOneChipForceSeparate) {
  const SwitchFaultCatalog catalog = ShippedSwitchCatalog();
  SwitchFaultEngine engine;
  for (uint32_t port = 0; port < 15; ++port) {
    engine.Submit(Switch("[0x08520003,na,L2,na]", 2, port, Assertion::kOccur));
  }
  engine.Submit(Switch("[0x08520003,na,L2,na]", 3, 0, Assertion::kOccur));  // another chip
  engine.RunCycle(1718000000000);
  EXPECT_EQ(engine.Snapshot(catalog, 1).fault_level, "NotHandle");
  engine.Submit(Switch("[0x08520003,na,L2,na]", 2, 15, Assertion::kOccur));
  engine.RunCycle(1718000001000);
  EXPECT_EQ(engine.Snapshot(catalog, 1).fault_level, "Separate");
  EXPECT_EQ(engine.Snapshot(catalog, 1).node_status, "UnHealthy");
  // Decision (docs/compatibility-node.md): 17 still separates; the original's equality test
  // would report NotHandle.
  engine.Submit(Switch("[0x08520003,na,L2,na]", 2, 16, Assertion::kOccur));
  engine.RunCycle(1718000002000);
  EXPECT_EQ(engine.Snapshot(catalog, 1).fault_level, "Separate");
  // Ports peering a CPU or NPU do not count.
  SwitchFaultEngine other;
  for (uint32_t port = 0; port < 16; ++port) {
    other.Submit(Switch("[0x08520003,na,cpu,na]", 2, port, Assertion::kOnce));
  }
  other.RunCycle(1718000000000);
  EXPECT_EQ(other.Snapshot(catalog, 1).fault_level, "Separate");  // registered Separate code
  SwitchFaultEngine notices;
  for (uint32_t port = 0; port < 16; ++port) {
    notices.Submit(Switch("[0x08520003,na,L2,na]", 2, port, Assertion::kOnce));
  }
  notices.RunCycle(1718000000000);
  EXPECT_EQ(notices.Snapshot(catalog, 1).fault_level, "NotHandle");  // notices are not "occur"
}

TEST(SwitchFaultEngine, AHotResetForcesHealthyThenNotHandleUntilItEnds) {
  const SwitchFaultCatalog catalog = ShippedSwitchCatalog();
  SwitchFaultEngine engine;
  engine.Submit(Switch("[0x00f1fef5,155914,npu,na]", 1, 7, Assertion::kOccur));  // RestartRequest
  engine.RunCycle(1718000000000);
  EXPECT_FALSE(engine.NextCycleChangesRecord());
  engine.RunCycle(1718000001000, /*npu_reset_running=*/true);  // the reset's first cycle
  model::SwitchInfo info = engine.Snapshot(catalog, 1718000001);
  EXPECT_EQ(info.node_status, "Healthy");
  EXPECT_EQ(info.fault_level, "RestartRequest");
  EXPECT_EQ(info.fault_time_and_level_map->at("[0x00f1fef5,155914,npu,na]_1_7").fault_level,
            "RestartRequest");
  EXPECT_TRUE(engine.NextCycleChangesRecord());
  engine.RunCycle(1718000002000, true);  // second cycle
  info = engine.Snapshot(catalog, 1718000002);
  EXPECT_EQ(
      model::RenderSwitchInfo(info),
      R"({"FaultCode":["{\"EventType\":15859445,\"AssembledFaultCode\":\"[0x00f1fef5,155914,npu,na]\",\"PeerPortDevice\":1,\"PeerPortId\":0,\"SwitchChipId\":1,\"SwitchPortId\":7,\"Severity\":0,\"Assertion\":1,\"AlarmRaisedTime\":1718000000000}"],"FaultLevel":"NotHandle","UpdateTime":1718000002,"NodeStatus":"Healthy","FaultTimeAndLevelMap":{"[0x00f1fef5,155914,npu,na]_1_7":{"fault_time":1718000000000,"fault_level":"NotHandle"}}})");
  EXPECT_FALSE(engine.NextCycleChangesRecord());
  engine.RunCycle(1718000003000, true);
  EXPECT_EQ(engine.Snapshot(catalog, 1718000003).fault_level, "NotHandle");
  engine.RunCycle(1718000004000, false);  // the reset is over
  info = engine.Snapshot(catalog, 1718000004);
  EXPECT_EQ(info.node_status, "UnHealthy");
  EXPECT_EQ(info.fault_level, "RestartRequest");
  EXPECT_EQ(info.fault_time_and_level_map->at("[0x00f1fef5,155914,npu,na]_1_7").fault_level,
            "RestartRequest");
  // A reset that starts again begins again with its first cycle.
  engine.RunCycle(1718000005000, true);
  EXPECT_EQ(engine.Snapshot(catalog, 1718000005).fault_level, "RestartRequest");
  EXPECT_EQ(engine.Snapshot(catalog, 1718000005).node_status, "Healthy");
}

TEST(SwitchFaultEngine, SixteenL2PortsStillForceSeparateDuringAHotReset) {
  const SwitchFaultCatalog catalog = ShippedSwitchCatalog();
  SwitchFaultEngine engine;
  for (uint32_t port = 0; port < 16; ++port) {
    engine.Submit(Switch("[0x08520003,na,L2,na]", 2, port, Assertion::kOccur));
  }
  engine.Submit(Switch("[0x00f1fef5,155914,npu,na]", 1, 7, Assertion::kOccur));
  engine.RunCycle(1718000000000, true);
  engine.RunCycle(1718000001000, true);
  const model::SwitchInfo info = engine.Snapshot(catalog, 1718000001);
  EXPECT_EQ(info.fault_level, "Separate");
  EXPECT_EQ(info.node_status, "Healthy");  // forced whatever the level
  EXPECT_EQ(info.fault_time_and_level_map->at("[0x00f1fef5,155914,npu,na]_1_7").fault_level,
            "NotHandle");
}

TEST(NodeFaultCatalog, ShippedFile) {
  auto c = NodeFaultCatalog::Parse(ReadDataFile("NodeDConfiguration.json"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->levels().size(), 59u);
  EXPECT_EQ(c->Level("2C000031"), NodeLevel::kSeparate);
  EXPECT_EQ(c->Level("0000001D"), NodeLevel::kPreSeparate);
  EXPECT_EQ(c->Level("0100000D"), NodeLevel::kNotHandle);
}

TEST(NodeFaultCatalog, InvalidCodesOrConflictsRejectTheWholeConfiguration) {
  EXPECT_FALSE(
      NodeFaultCatalog::Parse(R"({"FaultTypeCode":{"SeparateFaultCodes":["2C00003"]}})").ok());
  EXPECT_FALSE(
      NodeFaultCatalog::Parse(R"({"FaultTypeCode":{"SeparateFaultCodes":["2C00003!"]}})").ok());
  EXPECT_FALSE(NodeFaultCatalog::Parse(
                   R"({"FaultTypeCode":{"SeparateFaultCodes":["2c000031"],
                                        "NotHandleFaultCodes":["2C000031"]}})")
                   .ok());
  auto ok = NodeFaultCatalog::Parse(
      R"({"FaultTypeCode":{"SeparateFaultCodes":["2c000031","2C000031"]}})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->Level("2C000031"), NodeLevel::kSeparate);
}

TEST(NodeFaultEngine, LevelsStatusAndUnconfiguredCodes) {
  const NodeFaultCatalog catalog =
      *NodeFaultCatalog::Parse(ReadDataFile("NodeDConfiguration.json"));
  NodeFaultEngine engine;
  engine.Submit({"PSU", 1, "2c000031", Assertion::kOccur});
  engine.Submit({"CPU", 0, "0000001D", Assertion::kOccur});
  engine.Submit({"CPU", 0, "0100000D", Assertion::kOccur});
  engine.Submit({"Fan", 2, "DEADBEEF", Assertion::kOccur});  // unconfigured: device dropped
  engine.RunCycle();
  EXPECT_EQ(
      CanonicalJson(model::ToJson(engine.Snapshot(catalog))),
      R"({"FaultDevList":[{"DeviceType":"CPU","DeviceId":0,"FaultCode":["0000001D","0100000D"],"FaultLevel":"PreSeparateFault"},{"DeviceType":"PSU","DeviceId":1,"FaultCode":["2C000031"],"FaultLevel":"SeparateFault"}],"NodeStatus":"UnHealthy"})");
  engine.Submit({"PSU", 1, "2C000031", Assertion::kRecover});
  engine.RunCycle();
  EXPECT_EQ(engine.Snapshot(catalog).node_status, "PreSeparate");
}

TEST(NodeFaultEngine, OnceIsReportedForOneCycle) {
  const NodeFaultCatalog catalog =
      *NodeFaultCatalog::Parse(ReadDataFile("NodeDConfiguration.json"));
  NodeFaultEngine engine;
  engine.Submit({"PSU", 1, "2C000031", Assertion::kOnce});
  engine.RunCycle();
  EXPECT_EQ(engine.Snapshot(catalog).node_status, "UnHealthy");
  EXPECT_TRUE(engine.HasTransient());
  engine.RunCycle();
  EXPECT_EQ(engine.Snapshot(catalog).node_status, "Healthy");
  EXPECT_TRUE(engine.Snapshot(catalog).fault_dev_list.empty());
}

}  // namespace switch_node_test
}  // namespace clusterd::faults
