// Fault episodes (docs/goodput.md): one row per incident of a job, from the fault's own time to
// training again, with the demo table's durations; bounded, persisted, and never negative.
#include "cluster/fault_episodes.h"

#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace fault_episodes_test {

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);
absl::Time At(double seconds) { return kT0 + absl::Milliseconds(seconds * 1000); }

EpisodeFault Fault(std::string node, std::string npu, std::string code, double at) {
  return EpisodeFault{std::move(node), std::move(npu), std::move(code), "SeparateNPU", At(at)};
}

TEST(FaultEpisodes, AFaultToTrainingAgainGivesTheDemoTablesDurations) {
  FaultEpisodes episodes;
  episodes.FaultsHit("uid-1", "default/gpt", {Fault("node-4", "1", "80C98009", 0)}, At(0.1));
  episodes.CycleStarted("uid-1", "default/gpt", At(10));
  episodes.StrategyDecided("uid-1", "recover", At(21));
  episodes.FaultsCleared("uid-1", At(25));  // the cycle runs on: the episode stays open
  episodes.CycleEnded("uid-1", "succeeded", At(21.5));

  ASSERT_EQ(episodes.episodes().size(), 1u);
  const nlohmann::ordered_json e = FaultEpisodes::EpisodeJson(episodes.episodes()[0], At(30));
  EXPECT_EQ(e["name"], "gpt");
  EXPECT_EQ(e["namespace"], "default");
  EXPECT_EQ(e["where"], "node-4/npu1");
  EXPECT_EQ(e["code"], "80C98009");
  EXPECT_EQ(e["state"], "resumed");
  EXPECT_EQ(e["outcome"], "succeeded");
  EXPECT_EQ(e["strategies"], nlohmann::ordered_json::array({"recover"}));
  EXPECT_DOUBLE_EQ(e["seconds"]["detected"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(e["seconds"]["notified"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(e["seconds"]["decided"].get<double>(), 21);
  EXPECT_DOUBLE_EQ(e["seconds"]["resumed"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(e["seconds"]["total"].get<double>(), 21.5);
  EXPECT_TRUE(e["seconds"]["open"].is_null());
}

TEST(FaultEpisodes, FaultsUntilTheCycleEndsJoinOneEpisodeAndFallbacksAreKeptInOrder) {
  FaultEpisodes episodes;
  episodes.FaultsHit("uid-1", "default/gpt", {Fault("node-1", "0", "A", 0)}, At(1));
  episodes.CycleStarted("uid-1", "default/gpt", At(2));
  episodes.StrategyDecided("uid-1", "recover", At(3));
  std::vector<EpisodeFault> storm;
  for (int npu = 1; npu < 8; ++npu) storm.push_back(Fault("node-2", std::to_string(npu), "B", 4));
  episodes.FaultsHit("uid-1", "default/gpt", storm, At(4));
  episodes.StrategyDecided("uid-1", "recover", At(5));  // the same again: not repeated
  episodes.StrategyDecided("uid-1", "dump", At(6));
  episodes.StrategyDecided("uid-1", "exit", At(7));
  episodes.CycleEnded("uid-1", "succeeded", At(9));
  // After the end, a new fault is a new episode.
  episodes.FaultsHit("uid-1", "default/gpt", {Fault("node-3", "2", "C", 20)}, At(20));

  ASSERT_EQ(episodes.episodes().size(), 2u);
  const FaultEpisode& first = episodes.episodes()[0];
  EXPECT_EQ(first.fault_count, 8);
  EXPECT_EQ(first.Where(), "8 NPUs on 2 nodes");
  EXPECT_EQ(first.strategies, (std::vector<std::string>{"recover", "dump", "exit"}));
  const nlohmann::ordered_json list = episodes.ToJson("", At(21));
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["where"], "node-3/npu2");  // newest first
  EXPECT_EQ(list["items"][0]["state"], "waiting");
  EXPECT_DOUBLE_EQ(list["items"][0]["seconds"]["open"].get<double>(), 1);
  EXPECT_EQ(episodes.ToJson("gpt", At(21))["items"].size(), 2u);
  EXPECT_EQ(episodes.ToJson("default/gpt", At(21))["items"].size(), 2u);
  EXPECT_EQ(episodes.ToJson("other", At(21))["items"].size(), 0u);
}

TEST(FaultEpisodes, AFaultThatClearsBeforeAnyCycleClosesAsCleared) {
  FaultEpisodes episodes;
  episodes.FaultsHit("uid-1", "default/gpt", {Fault("node-1", "-1", "X", 0)}, At(0));
  episodes.FaultsCleared("uid-1", At(5));
  ASSERT_EQ(episodes.episodes().size(), 1u);
  EXPECT_EQ(episodes.episodes()[0].Where(), "node-1");
  const nlohmann::ordered_json e = FaultEpisodes::EpisodeJson(episodes.episodes()[0], At(6));
  EXPECT_EQ(e["state"], "cleared");
  EXPECT_TRUE(e["seconds"]["total"].is_null());
  // A strategy or a cycle end with no cycle started changes nothing.
  episodes.StrategyDecided("uid-1", "retry", At(7));
  episodes.CycleEnded("uid-1", "succeeded", At(8));
  EXPECT_TRUE(episodes.episodes()[0].strategies.empty());
}

TEST(FaultEpisodes, ACycleWithNoFaultSeenFirstIsAnEpisodeOfItsOwn) {
  FaultEpisodes episodes;
  episodes.CycleStarted("uid-1", "default/llama", At(3));
  episodes.StrategyDecided("uid-1", "retry", At(4));
  episodes.CycleEnded("uid-1", "succeeded", At(5));
  ASSERT_EQ(episodes.episodes().size(), 1u);
  const nlohmann::ordered_json e = FaultEpisodes::EpisodeJson(episodes.episodes()[0], At(6));
  EXPECT_EQ(e["where"], "-");
  EXPECT_DOUBLE_EQ(e["seconds"]["total"].get<double>(), 2);
}

TEST(FaultEpisodes, AClockStepBackwardsOrANodeClockAheadGivesNoNegativeDuration) {
  FaultEpisodes episodes;
  // The fault's own time is 30 s after clusterd saw it (the node's clock is ahead).
  episodes.FaultsHit("uid-1", "default/gpt", {Fault("node-1", "0", "A", 130)}, At(100));
  episodes.CycleStarted("uid-1", "default/gpt", At(90));  // clusterd's clock stepped back
  episodes.StrategyDecided("uid-1", "recover", At(80));
  episodes.CycleEnded("uid-1", "succeeded", At(70));
  const nlohmann::ordered_json e = FaultEpisodes::EpisodeJson(episodes.episodes()[0], At(60));
  for (const char* span : {"detected", "notified", "decided", "resumed", "total"}) {
    ASSERT_TRUE(e["seconds"][span].is_number()) << span;
    EXPECT_GE(e["seconds"][span].get<double>(), 0) << span;
  }
}

TEST(FaultEpisodes, TheNewestAreKeptAndAnEpisodeListsABoundedNumberOfFaults) {
  FaultEpisodes episodes(/*capacity=*/3);
  for (int i = 0; i < 5; ++i) {
    const std::string job = "uid-" + std::to_string(i);
    episodes.FaultsHit(job, "default/j" + std::to_string(i), {Fault("node-1", "0", "A", i)}, At(i));
  }
  ASSERT_EQ(episodes.episodes().size(), 3u);
  EXPECT_EQ(episodes.episodes().front().job_id, "uid-2");

  FaultEpisodes big;
  std::vector<EpisodeFault> many;
  for (int i = 0; i < 100; ++i) many.push_back(Fault("node-" + std::to_string(i), "0", "A", 0));
  big.FaultsHit("uid-1", "default/j", many, At(1));
  EXPECT_EQ(big.episodes()[0].faults.size(), kMaxFaultsPerEpisode);
  EXPECT_EQ(big.episodes()[0].fault_count, 100);
  EXPECT_EQ(big.episodes()[0].Where(), "32+ NPUs on 32 nodes");
}

TEST(FaultEpisodes, AJobNamedLaterGetsItsNameOnEpisodesOpenedBefore) {
  FaultEpisodes episodes;
  episodes.FaultsHit("uid-1", "", {Fault("node-1", "0", "A", 0)}, At(0));
  episodes.NameJob("uid-2", "default/other");
  episodes.NameJob("uid-1", "default/gpt");
  episodes.NameJob("uid-1", "default/renamed");  // a name once given stays
  EXPECT_EQ(episodes.episodes()[0].job_name, "default/gpt");
}

TEST(FaultEpisodes, SaveAndRestoreKeepEveryFieldAndRefuseMalformedState) {
  FaultEpisodes episodes;
  episodes.FaultsHit("uid-1", "default/gpt", {Fault("node-4", "1", "80C98009", 0)}, At(0.1));
  episodes.CycleStarted("uid-1", "default/gpt", At(10));
  episodes.StrategyDecided("uid-1", "recover", At(21));
  episodes.CycleEnded("uid-1", "succeeded", At(21.5));
  episodes.FaultsHit("uid-2", "team/llama", {Fault("node-1", "3", "A", 30)}, At(30));

  FaultEpisodes restored;
  ASSERT_TRUE(restored.Restore(nlohmann::json::parse(episodes.Save().dump())).ok());
  EXPECT_EQ(restored.ToJson("", At(40)), episodes.ToJson("", At(40)));
  // Ids go on from the saved ones; the open episode stays open across the restart.
  restored.CycleStarted("uid-2", "team/llama", At(41));
  EXPECT_EQ(restored.episodes().size(), 2u);
  restored.FaultsHit("uid-3", "team/x", {Fault("node-2", "0", "B", 50)}, At(50));
  EXPECT_EQ(restored.episodes().back().id, 3u);

  FaultEpisodes untouched;
  untouched.FaultsHit("uid-9", "default/a", {Fault("node-1", "0", "A", 0)}, At(0));
  for (const char* bad :
       {R"([])", R"({"version":2,"episodes":[]})", R"({"version":1,"episodes":[{"id":1}]})",
        R"({"version":1,"episodes":[{"id":"x","job":1}]})"}) {
    EXPECT_FALSE(untouched.Restore(nlohmann::json::parse(bad)).ok()) << bad;
    EXPECT_EQ(untouched.episodes().size(), 1u) << bad;
  }
}

}  // namespace fault_episodes_test
}  // namespace clusterd::cluster
