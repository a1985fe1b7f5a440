// Replay of the InfiniteHBD fault trace: episodes are paired, mapped onto NPU fault codes the
// catalog knows, spread over the simulated nodes and compressed in time; bad traces are reported
// with the scenario's file and line.
#include "sim/trace_replay.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "faults/fault_code_catalog.h"
#include "faults/hex_code.h"
#include "gtest/gtest.h"

namespace clusterd::sim {
namespace trace_replay_test {

std::string Event(const std::string& node, double day, const std::string& type,
                  const std::string& cls = "GPU",
                  const std::string& desc = "GPU DBE(Double Bit ECC) > Threshold",
                  const std::string& level = "Hardware Failure") {
  return absl::StrCat(R"({"node_id":")", node, R"(","event_time":)", day, R"(,"event_type":")",
                      type, R"(","fault_type":{"Level":")", level, R"(","Class":")", cls,
                      R"(","Desc":")", desc, R"("}})");
}

std::string Trace(const std::vector<std::string>& events) {
  return absl::StrCat("[", absl::StrJoin(events, ","), "]");
}

TEST(TraceReplay, PairsStartsWithTheirEndsPerNodeAndType) {
  TraceParseStats stats;
  auto episodes = ParseTrace(
      Trace({Event("a", 2, "fault_start"), Event("b", 1, "fault_start"), Event("a", 3, "fault_end"),
             Event("c", 4, "fault_end"), Event("b", 1.5, "fault_start", "Fan", "Speed Critical")}),
      &stats);
  ASSERT_TRUE(episodes.ok()) << episodes.status();
  ASSERT_EQ(episodes->size(), 3u);
  EXPECT_EQ(stats.events, 5);
  EXPECT_EQ(stats.unmatched_ends, 1);  // c ends a fault it never started
  // Ordered by start.
  EXPECT_EQ((*episodes)[0].node_id, "b");
  EXPECT_FALSE((*episodes)[0].end_day.has_value());
  EXPECT_EQ((*episodes)[1].cls, "Fan");
  EXPECT_EQ((*episodes)[2].node_id, "a");
  ASSERT_TRUE((*episodes)[2].end_day.has_value());
  EXPECT_DOUBLE_EQ(*(*episodes)[2].end_day, 3);
}

TEST(TraceReplay, RejectsMalformedTracesWithTheEventIndex) {
  EXPECT_FALSE(ParseTrace("{").ok());
  EXPECT_FALSE(ParseTrace("{}").ok());
  auto bad_type = ParseTrace(Trace({Event("a", 1, "fault_start"), Event("a", 2, "fault_middle")}));
  ASSERT_FALSE(bad_type.ok());
  EXPECT_TRUE(absl::StrContains(bad_type.status().message(), "trace event 1"));
  EXPECT_FALSE(ParseTrace(R"([{"node_id":"a","event_time":-1,"event_type":"fault_start",
      "fault_type":{}}])")
                   .ok());
  EXPECT_FALSE(ParseTrace(R"([{"node_id":"","event_time":1,"event_type":"fault_start",
      "fault_type":{}}])")
                   .ok());
  EXPECT_FALSE(ParseTrace(R"([{"node_id":"a","event_time":1,"event_type":"fault_start"}])").ok());
}

TEST(TraceReplay, MapsGpuClusterFaultsOntoNpuFaultHandling) {
  auto map = [](const std::string& cls, const std::string& desc,
                const std::string& level = "Hardware Failure") {
    TraceEpisode e;
    e.level = level;
    e.cls = cls;
    e.desc = desc;
    return MapTraceFault(e);
  };
  EXPECT_EQ(map("GPU", "GPU DBE(Double Bit ECC) > Threshold")->code, "80E01801");
  EXPECT_EQ(map("GPU", "GPU Lost")->code, "80E3A201");
  EXPECT_EQ(map("GPU", "GPU PCI link width low")->code, "81A3880C");
  EXPECT_EQ(map("Parameter Plane Cable", "Link Down")->kind, "network");
  EXPECT_EQ(map("NIC", "NIC Link Speed low")->code, "81078605");
  EXPECT_EQ(map("Fan", "Redundancy Lost")->code, "0100000D");
  EXPECT_EQ(map("Motherboard", "Motherboard Failed")->kind, "node");
  EXPECT_EQ(map("Training Task Troubleshooting", "Suspect Machine Offline", "Other Failure")->code,
            "2C000031");
  EXPECT_FALSE(map("Other Failures", "Unknown Error", "Software Failure").has_value());
  EXPECT_FALSE(map("Stress Test Failure", "Unknown Error", "Other Failure").has_value());
}

TEST(TraceReplay, PlansCompressedTimeNodesInOrderAndStableNpus) {
  auto episodes = ParseTrace(Trace({
      Event("x", 10, "fault_start"),
      Event("x", 12, "fault_end"),
      Event("y", 11, "fault_start", "Fan", "Speed Critical (Sensor)"),
      Event("z", 12, "fault_start", "Other Failures", "Unknown Error", "Software Failure"),
      Event("w", 13, "fault_start", "Parameter Plane Cable", "Link Down"),
      Event("v", 14, "fault_start"),
      Event("x", 15, "fault_start", "GPU", "GPU Lost"),
  }));
  ASSERT_TRUE(episodes.ok());
  ReplaySpec spec;
  spec.days_per_second = 2;
  spec.start_s = 5;
  spec.max_events = 10;
  ClusterSpec cluster;
  cluster.nodes = 3;
  cluster.npus_per_node = 8;
  ReplayPlan plan = PlanReplay(*episodes, spec, cluster);
  EXPECT_EQ(plan.episodes, 6);
  EXPECT_EQ(plan.played, 5);
  EXPECT_EQ(plan.skipped["Software Failure / Other Failures"], 1);
  ASSERT_EQ(plan.faults.size(), 5u);
  const FaultSpec& dbe = plan.faults[0];
  EXPECT_DOUBLE_EQ(dbe.at_s, 5);             // the first played episode starts at start_s
  EXPECT_DOUBLE_EQ(dbe.clear_after_s, 1.0);  // 2 days at 2 days/s
  EXPECT_EQ(dbe.node, "node-1");
  EXPECT_GE(dbe.npu, 0);
  EXPECT_LT(dbe.npu, 8);
  EXPECT_EQ(plan.faults[1].kind, "node");  // fan: y -> node-2, no NPU
  EXPECT_EQ(plan.faults[1].node, "node-2");
  EXPECT_EQ(plan.faults[1].npu, -1);
  EXPECT_DOUBLE_EQ(plan.faults[1].at_s, 5.5);
  EXPECT_DOUBLE_EQ(plan.faults[1].clear_after_s, 0);  // open: never cleared
  EXPECT_EQ(plan.faults[2].node, "node-3");           // w
  EXPECT_EQ(plan.faults[3].node, "node-1");           // v wraps around
  EXPECT_EQ(plan.faults[4].node, "node-1");           // x keeps its node
  EXPECT_EQ(plan.faults[4].code, "80E3A201");
  // The same trace gives the same plan.
  ReplayPlan again = PlanReplay(*episodes, spec, cluster);
  for (size_t i = 0; i < plan.faults.size(); ++i)
    EXPECT_EQ(again.faults[i].npu, plan.faults[i].npu);

  spec.max_events = 2;
  spec.from_day = 10.5;
  ReplayPlan window = PlanReplay(*episodes, spec, cluster);
  ASSERT_EQ(window.played, 2);
  EXPECT_EQ(window.skipped["before from_day"], 1);
  EXPECT_DOUBLE_EQ(window.first_day, 11);
  EXPECT_DOUBLE_EQ(window.faults[0].at_s, 5);
}

TEST(TraceReplay, TheShippedTraceReplaysWithCodesTheCatalogKnows) {
  std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/faultCode.json");
  std::stringstream text;
  text << in.rdbuf();
  faults::PolicyIssues issues;
  auto catalog = faults::FaultCodeCatalog::Parse(text.str(), &issues);
  ASSERT_TRUE(catalog.ok());

  Scenario s;
  s.file = "<test>";
  s.cluster.nodes = 4;
  s.replay = ReplaySpec{};
  s.replay->line = 7;
  s.replay->trace = "infinitehbd-trace/fault_trace.json";
  s.replay->max_events = 100000;
  s.replay->days_per_second = 10;
  auto plan = ExpandReplay(&s, CLUSTERD_DATA_DIR);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->episodes, 584);
  EXPECT_GT(plan->played, 250);  // every hardware episode has an NPU counterpart
  EXPECT_EQ(s.faults.size(), static_cast<size_t>(plan->played));
  std::set<std::string> nodes;
  for (const FaultSpec& f : s.faults) {
    nodes.insert(f.node);
    if (f.kind == "chip") {
      EXPECT_TRUE(catalog->KnownChipLevel(*faults::ParseHexCode(f.code)).has_value()) << f.code;
    }
    if (f.kind == "network") {
      EXPECT_TRUE(faults::IsNetworkCode(*faults::ParseHexCode(f.code)));
    }
    if (f.kind == "node") {
      EXPECT_EQ(f.code.size(), 8u);
    }
  }
  EXPECT_EQ(nodes.size(), 4u);
  EXPECT_LE(s.faults.back().at_s, 348 / 10.0 + 1);
}

TEST(TraceReplay, AMissingOrBadTraceNamesTheScenarioLine) {
  Scenario s;
  s.file = "/tmp/s.yaml";
  s.replay = ReplaySpec{};
  s.replay->line = 12;
  s.replay->trace = "no-such-trace.json";
  auto plan = ExpandReplay(&s, "/nonexistent");
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StartsWith(plan.status().message(), "/tmp/s.yaml:12: cannot open"))
      << plan.status();

  const std::string bad = (std::filesystem::temp_directory_path() / "bad-trace.json").string();
  std::ofstream(bad) << "[1,2]";
  s.replay->trace = bad;
  plan = ExpandReplay(&s, "/nonexistent");
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "trace event 0")) << plan.status();
  std::filesystem::remove(bad);
}

}  // namespace trace_replay_test
}  // namespace clusterd::sim
