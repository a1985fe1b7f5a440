// ClusterD manual separation (fault-pipeline.md §1.10, §7.4).
#include "cluster/manual_separation_engine.h"

#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace fault_manual_separation_test {

constexpr int64_t kNow = 1718000000000;
constexpr int64_t kHour = 3600 * 1000;

FaultOccurrence Occ(const std::string& npu, const std::string& code, int64_t t,
                    const std::string& node = "node-1", const std::string& job = "job") {
  return FaultOccurrence{node, npu, code, t, job};
}

ManualSeparationEngine Enabled(int64_t threshold = 3, int64_t window = 24, int64_t free_hours = 48) {
  ManualSeparationEngine e;
  e.SetPolicy(ManualSeparationPolicy{true, window, threshold, free_hours});
  return e;
}

auto Always() {
  return [](const std::string&) { return true; };
}

TEST(ManualSeparationPolicy, ParsesTheDocumentedYaml) {
  auto p = ParseManualSeparationPolicy(
      "enabled: true\nseparate:\n  fault_window_hours: 24\n  fault_threshold: 3\nrelease:\n  fault_free_hours: -1\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, (ManualSeparationPolicy{true, 24, 3, -1}));
}

TEST(ManualSeparationPolicy, OutOfRangeRejectsEvenWhenDisabled) {
  EXPECT_FALSE(ParseManualSeparationPolicy("enabled: false\nseparate:\n  fault_threshold: 51\n").ok());
  EXPECT_FALSE(ParseManualSeparationPolicy("separate:\n  fault_window_hours: 0\n").ok());
  EXPECT_FALSE(ParseManualSeparationPolicy("release:\n  fault_free_hours: 241\n").ok());
  EXPECT_FALSE(ParseManualSeparationPolicy("enabled: [\n").ok());
  auto absent = ParseManualSeparationPolicy("separate:\n  fault_threshold: 2\n");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->enabled);
}

TEST(ManualSeparationEngine, ThresholdOneSeparatesAfterTheTriageWindow) {
  ManualSeparationEngine e = Enabled(1);
  e.Submit({Occ("Ascend910-3", "80E01801", kNow)});
  EXPECT_EQ(e.NextTriageDue(), kNow + 30000);
  EXPECT_TRUE(e.Triage(kNow + 29999, Always()).empty());
  EXPECT_EQ(e.Triage(kNow + 30000, Always()), std::set<std::string>{"node-1"});
  EXPECT_EQ(e.NpusOn("node-1"), std::vector<std::string>{"Ascend910-3"});
  EXPECT_EQ(e.cache().at("node-1").at("Ascend910-3")[0],
            (ManualDetail{"80E01801", "ManuallySeparateNPU", kNow}));
}

TEST(ManualSeparationEngine, SameCodeOnAnotherNpuIsSoftwareAndDiscarded) {
  ManualSeparationEngine e = Enabled(1);
  e.Submit({Occ("Ascend910-3", "80E01801", kNow), Occ("Ascend910-4", "80E01801", kNow + 1000)});
  EXPECT_TRUE(e.Triage(kNow + 60000, Always()).empty());
  EXPECT_TRUE(e.cache().empty());
  EXPECT_FALSE(e.NextTriageDue().has_value());
}

TEST(ManualSeparationEngine, CountsWithinTheWindowUpToTheThreshold) {
  ManualSeparationEngine e = Enabled(3, 24);
  for (int i = 0; i < 2; ++i) {
    e.Submit({Occ("Ascend910-3", "80E01801", kNow + i * kHour)});
    e.Triage(kNow + i * kHour + 30000, Always());
  }
  EXPECT_EQ(e.CountOf("node-1", "Ascend910-3", "80E01801"), 2u);
  EXPECT_TRUE(e.cache().empty());
  // Third occurrence 25 h after the first: first..last of the last 3 is not < 24 h.
  e.Submit({Occ("Ascend910-3", "80E01801", kNow + 25 * kHour)});
  EXPECT_TRUE(e.Triage(kNow + 25 * kHour + 30000, Always()).empty());
  e.Submit({Occ("Ascend910-3", "80E01801", kNow + 26 * kHour)});
  EXPECT_TRUE(e.Triage(kNow + 26 * kHour + 30000, Always()).empty());  // 1 h .. 26 h
  e.Submit({Occ("Ascend910-3", "80E01801", kNow + 27 * kHour)});
  EXPECT_EQ(e.Triage(kNow + 27 * kHour + 30000, Always()).size(), 1u);  // 25 h .. 27 h
  EXPECT_EQ(e.CountOf("node-1", "Ascend910-3", "80E01801"), 0u);  // cleared on separation
}

TEST(ManualSeparationEngine, GonePodGroupDiscardsItsBuffer) {
  ManualSeparationEngine e = Enabled(1);
  e.Submit({Occ("Ascend910-3", "80E01801", kNow)});
  EXPECT_TRUE(e.Triage(kNow + 30000, [](const std::string&) { return false; }).empty());
  EXPECT_FALSE(e.NextTriageDue().has_value());
}

TEST(ManualSeparationEngine, DisablingClearsEverything) {
  ManualSeparationEngine e = Enabled(1);
  e.Submit({Occ("Ascend910-3", "80E01801", kNow)});
  e.Triage(kNow + 30000, Always());
  e.SetPolicy(ManualSeparationPolicy{});
  EXPECT_TRUE(e.cache().empty());
  e.Submit({Occ("Ascend910-3", "80E01801", kNow)});  // ignored while disabled
  EXPECT_FALSE(e.NextTriageDue().has_value());
}

TEST(ManualSeparationEngine, SyncHonoursOperatorDeletionsAndReleases) {
  ManualSeparationEngine e = Enabled(1, 24, 48);
  e.Submit({Occ("Ascend910-3", "A", kNow), Occ("Ascend910-5", "B", kNow + 10 * kHour)});
  e.Triage(kNow + 10 * kHour + 30000, Always());
  ASSERT_EQ(e.NpusOn("node-1").size(), 2u);
  auto plan = e.Sync(ManualCache{}, kNow + 11 * kHour);
  ASSERT_TRUE(plan.write.has_value());
  e.Written(*plan.write);
  // The operator deletes Ascend910-3 from Total.
  ManualCache edited = *plan.write;
  edited["node-1"].erase("Ascend910-3");
  plan = e.Sync(edited, kNow + 12 * kHour);
  EXPECT_EQ(plan.changed_nodes, std::set<std::string>{"node-1"});
  EXPECT_EQ(e.NpusOn("node-1"), std::vector<std::string>{"Ascend910-5"});
  e.Written(*plan.write);
  // 48 h after its separation Ascend910-5 is released and the CM deleted.
  plan = e.Sync(*plan.write, kNow + 58 * kHour + 30000);
  EXPECT_TRUE(plan.delete_cm);
  EXPECT_TRUE(e.cache().empty());
}

TEST(ManualSeparationEngine, CmRoundTrip) {
  ManualCache cache;
  cache["node-1"]["Ascend910-5"] = {ManualDetail{"80E01801", "ManuallySeparateNPU", 7}};
  cache["node-1"]["Ascend910-3"] = {ManualDetail{"A", "ManuallySeparateNPU", 8}};
  auto data = RenderManualInfo(cache);
  EXPECT_EQ(
      data.at("node-1"),
      R"({"Total":["Ascend910-3","Ascend910-5"],"Detail":{"Ascend910-3":[{"FaultCode":"A","FaultLevel":"ManuallySeparateNPU","LastSeparateTime":8}],"Ascend910-5":[{"FaultCode":"80E01801","FaultLevel":"ManuallySeparateNPU","LastSeparateTime":7}]}})");
  std::vector<std::string> problems;
  data["node-2"] = "garbage";
  EXPECT_EQ(ParseManualInfo(data, &problems), cache);
  EXPECT_EQ(problems.size(), 1u);
}

}  // namespace fault_manual_separation_test
}  // namespace clusterd::cluster
