// Repeat offenders (docs/goodput.md): a node that faults three times within the window gets one
// verdict with the reason; the policy is off by default and refuses nonsense.
#include "cluster/repeat_offenders.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace repeat_offenders_test {

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);
absl::Time At(int minutes) { return kT0 + absl::Minutes(minutes); }

OffenderPolicy Enabled(std::string action = "cordon") {
  OffenderPolicy p;
  p.enabled = true;
  p.faults = 3;
  p.window = absl::Hours(1);
  p.action = std::move(action);
  return p;
}

TEST(RepeatOffenders, OffByDefaultCountsButJudgesNobody) {
  RepeatOffenders r(kT0);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(r.ObserveFault("node-1", "3", "code" + std::to_string(i), "RestartNPU", At(i)));
  }
  EXPECT_EQ(r.nodes().at("node-1").total, 5);
  EXPECT_FALSE(r.nodes().at("node-1").offender);
}

TEST(RepeatOffenders, TheThirdFaultWithinTheWindowMakesAnOffenderOnce) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled(), kT0);
  EXPECT_FALSE(r.ObserveFault("node-1", "3", "80E01801", "RestartNPU", At(0)));
  EXPECT_FALSE(r.ObserveFault("node-1", "3", "80C98009", "SeparateNPU", At(10)));
  // A sub-health fault does not interrupt training: not counted against the node.
  EXPECT_FALSE(r.ObserveFault("node-1", "4", "81078603", "SubHealthFault", At(15)));
  std::optional<OffenderVerdict> v =
      r.ObserveFault("node-1", "5", "8C1F860B", "RestartNPU", At(20));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->node, "node-1");
  EXPECT_EQ(v->action, "cordon");
  EXPECT_TRUE(absl::StrContains(v->reason, "3 faults within 1h (policy: 3)")) << v->reason;
  EXPECT_TRUE(absl::StrContains(v->reason, "80E01801@3 RestartNPU")) << v->reason;
  // A fourth: still an offender, no second verdict (no second cordon).
  EXPECT_FALSE(r.ObserveFault("node-1", "6", "8C1F860B", "RestartNPU", At(25)));
  EXPECT_TRUE(r.nodes().at("node-1").offender);
}

TEST(RepeatOffenders, ACodeOnManyNpusAtOnceIsOneFaultOfTheNode) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled(), kT0);
  for (int npu = 0; npu < 8; ++npu) {
    EXPECT_FALSE(r.ObserveFault("node-1", std::to_string(npu), "8C03A000", "RestartNPU",
                                At(0) + absl::Milliseconds(npu)));
  }
  EXPECT_EQ(r.nodes().at("node-1").total, 1);
  EXPECT_EQ(r.nodes().at("node-1").recent.front().npus, 8);
  EXPECT_EQ(r.nodes().at("node-1").by_npu.size(), 8u);
  EXPECT_FALSE(r.nodes().at("node-1").offender);
}

TEST(RepeatOffenders, FaultsSpreadBeyondTheWindowDoNotAddUp) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled(), kT0);
  EXPECT_FALSE(r.ObserveFault("node-1", "0", "a", "RestartNPU", At(0)));
  EXPECT_FALSE(r.ObserveFault("node-1", "0", "b", "RestartNPU", At(50)));
  EXPECT_FALSE(r.ObserveFault("node-1", "0", "c", "RestartNPU", At(100)));
}

TEST(RepeatOffenders, AFaultStillActiveIsOneOccurrence) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled(), kT0);
  r.ObserveFault("node-1", "0", "a", "RestartNPU", At(0));
  r.ObserveFault("node-1", "0", "a", "SeparateNPU", At(1));  // the same fault, a new level
  r.ObserveFault("node-1", "0", "a", "SeparateNPU", At(2));
  EXPECT_EQ(r.nodes().at("node-1").total, 1);
  r.ObserveClear("node-1", "0", "a");
  r.ObserveFault("node-1", "0", "a", "RestartNPU", At(3));  // it came back
  EXPECT_EQ(r.nodes().at("node-1").total, 2);
}

TEST(RepeatOffenders, AVerdictLapsesWhenItsFaultsAgeOut) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled("none"), kT0);
  r.ObserveFault("node-1", "0", "a", "RestartNPU", At(0));
  r.ObserveFault("node-1", "1", "b", "RestartNPU", At(1));
  ASSERT_TRUE(r.ObserveFault("node-1", "2", "c", "RestartNPU", At(2)).has_value());
  r.Expire(At(30));
  EXPECT_TRUE(r.nodes().at("node-1").offender);
  r.Expire(At(61));
  EXPECT_FALSE(r.nodes().at("node-1").offender);
}

TEST(RepeatOffenders, EnablingThePolicyJudgesWhatWasAlreadySeen) {
  RepeatOffenders r(kT0);
  r.ObserveFault("node-1", "0", "a", "RestartNPU", At(0));
  r.ObserveFault("node-1", "1", "b", "RestartNPU", At(1));
  r.ObserveFault("node-1", "2", "c", "RestartNPU", At(2));
  std::vector<OffenderVerdict> v = r.SetPolicy(Enabled("taint"), At(3));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].action, "taint");
}

TEST(RepeatOffenders, TheViewGivesMtbfAndPutsOffendersFirst) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled(), kT0);
  r.ObserveFault("node-2", "0", "x", "RestartNPU", At(0));
  for (int i = 0; i < 3; ++i)
    r.ObserveFault("node-1", "1", "c" + std::to_string(i), "RestartNPU", At(i));
  auto json = r.ToJson(At(60));
  ASSERT_EQ(json["items"].size(), 2u);
  EXPECT_EQ(json["items"][0]["node"], "node-1");
  EXPECT_EQ(json["items"][0]["offender"], true);
  EXPECT_EQ(json["items"][0]["mtbfSeconds"], 1200.0);  // 3600 s observed / 3 faults
  EXPECT_EQ(json["items"][0]["npus"][0]["npu"], "1");
  EXPECT_EQ(json["items"][1]["mtbfSeconds"], 3600.0);
  EXPECT_EQ(json["policy"]["action"], "cordon");
}

TEST(RepeatOffenders, SaveAndRestore) {
  RepeatOffenders r(kT0);
  r.SetPolicy(Enabled(), kT0);
  for (int i = 0; i < 3; ++i)
    r.ObserveFault("node-1", "1", "c" + std::to_string(i), "RestartNPU", At(i));
  RepeatOffenders back(At(100));
  ASSERT_TRUE(back.Restore(nlohmann::json::parse(r.Save().dump())).ok());
  EXPECT_EQ(back.nodes().at("node-1").total, 3);
  EXPECT_TRUE(back.nodes().at("node-1").offender);
  EXPECT_EQ(back.ToJson(At(60))["observingSince"], r.ToJson(At(60))["observingSince"]);
  EXPECT_FALSE(back.Restore(nlohmann::json::parse(R"({"version":"1","nodes":[]})")).ok());
  EXPECT_FALSE(back.Restore(nlohmann::json::parse(R"({"version":1,"nodes":[{"node":1}]})")).ok());
  EXPECT_EQ(back.nodes().size(), 1u);
}

TEST(OffenderPolicy, ParsesAndRefusesNonsenseWithTheReason) {
  absl::StatusOr<OffenderPolicy> p = ParseOffenderPolicy(
      R"({"enabled":true,"faults":4,"windowHours":12,"levels":["RestartNPU"],"action":"taint"})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->faults, 4);
  EXPECT_EQ(p->window, absl::Hours(12));
  EXPECT_EQ(p->action, "taint");
  struct Bad {
    const char* text;
    const char* reason;
  };
  for (const Bad& b :
       {Bad{"[", "not JSON"}, Bad{"[]", "not an object"}, Bad{R"({"faults":1})", "outside 2..1000"},
        Bad{R"({"faults":"3"})", "not an integer"},
        Bad{R"({"windowHours":-1})", "outside (0, 2160]"},
        Bad{R"({"levels":["Broken"]})", "not a fault level"},
        Bad{R"({"action":"reboot"})", "not one of none, cordon, taint"},
        Bad{R"({"enable":true})", "unknown key \"enable\""}}) {
    absl::StatusOr<OffenderPolicy> bad = ParseOffenderPolicy(b.text);
    ASSERT_FALSE(bad.ok()) << b.text;
    EXPECT_TRUE(absl::StrContains(bad.status().message(), b.reason)) << bad.status();
  }
}

}  // namespace repeat_offenders_test
}  // namespace clusterd::cluster
