#include "diagnosis/degradation_handler.h"
#include "diagnosis/slow_node_algorithm.h"
#include "gtest/gtest.h"
#include "unit/diagnosis/synthetic.h"

namespace clusterd::diagnosis {
namespace node_level_test {

using testing::Fault;
using testing::Generate;
using testing::InputUpTo;
using testing::Scenario;

DetectorParams Params() { return DetectorParams{20, 3, 0.3, 3, StatisticsMode::kIntended}; }

// Runs node rounds every 5 steps from step 25 and returns the first slow result.
std::optional<NodeResult> FirstSlow(const Scenario& s, uint64_t seed, int64_t* at_step = nullptr) {
  testing::NodeData data = Generate(s, seed);
  RankSeriesState state;
  for (int64_t upto = 25; upto <= s.steps; upto += 5) {
    NodeRound round = RunNodeRound(state, InputUpTo(data, upto), Params(), 1.3);
    state = round.next;
    if (round.outcome == NodeRoundOutcome::kRan && round.result.is_slow) {
      if (at_step) *at_step = upto;
      return round.result;
    }
  }
  return std::nullopt;
}

TEST(NodeLevel, SteadyNodeIsNeverSlow) { EXPECT_FALSE(FirstSlow(Scenario{}, 7).has_value()); }

TEST(NodeLevel, SlowComputingCardIsTheLowClusterOfItsTpGroup) {
  Scenario s;
  s.fault = Fault::kSlowCard;
  s.slow_rank = 2;
  int64_t at = 0;
  auto r = FirstSlow(s, 11, &at);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(at, 65);  // the first round holding 3 slow steps
  EXPECT_EQ(r->slow_calculate_ranks, (std::vector<int64_t>{2}));
  EXPECT_TRUE(r->slow_communication_domains.empty());
  EXPECT_NEAR(r->degradation, 0.5, 0.05);  // the max over the ranks of a +50 % step change
}

TEST(NodeLevel, SlowCommunicationDomainIsTheWholeTpGroupAndNoCard) {
  Scenario s;
  s.fault = Fault::kSlowDomain;
  s.slow_rank = 5;
  auto r = FirstSlow(s, 12);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->slow_calculate_ranks.empty());
  EXPECT_EQ(r->slow_communication_domains, (std::vector<std::vector<int64_t>>{{4, 5, 6, 7}}));
}

TEST(NodeLevel, SingleSpikeOnOneRankDoesNotMakeTheNodeSlow) {
  Scenario s;
  s.fault = Fault::kSpike;
  EXPECT_FALSE(FirstSlow(s, 13).has_value());
}

TEST(NodeLevel, WithoutTpGroupsTheTemporalZpVerdictNamesTheCards) {
  Scenario s;
  s.fault = Fault::kSlowDomain;
  s.slow_rank = 1;
  s.tp_size = 1;  // every rank alone
  s.ranks = 4;
  testing::NodeData data = Generate(s, 5);
  data.groups = {};
  RankSeriesState state;
  std::optional<NodeResult> slow;
  for (int64_t upto = 25; upto <= s.steps && !slow; upto += 5) {
    NodeRound round = RunNodeRound(state, InputUpTo(data, upto), Params(), 1.3);
    state = round.next;
    if (round.result.is_slow) slow = round.result;
  }
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->slow_calculate_ranks, (std::vector<int64_t>{1}));
}

TEST(NodeLevel, NoNewStepsSkipsTheRound) {
  testing::NodeData data = Generate(Scenario{}, 1);
  RankSeriesState state;
  NodeRound first = RunNodeRound(state, InputUpTo(data, 30), Params(), 1.3);
  ASSERT_EQ(first.outcome, NodeRoundOutcome::kRan);
  NodeRound again = RunNodeRound(first.next, InputUpTo(data, 30), Params(), 1.3);
  EXPECT_EQ(again.outcome, NodeRoundOutcome::kNoNewSteps);
}

TEST(NodeLevel, CpOrExpGroupsDisableTheNodeAndNoRanksStopIt) {
  testing::NodeData data = Generate(Scenario{}, 1);
  NodeInput in = InputUpTo(data, 30);
  in.groups.groups.push_back({"group_9", "cp", 0, {0, 1}});
  EXPECT_EQ(RunNodeRound({}, in, Params(), 1.3).outcome, NodeRoundOutcome::kUnsupported);
  NodeInput empty;
  EXPECT_EQ(RunNodeRound({}, empty, Params(), 1.3).outcome, NodeRoundOutcome::kNoRanks);
}

TEST(NodeLevel, MissingCommDataStillDetectsButLocalizesNothing) {
  Scenario s;
  s.fault = Fault::kSlowCard;
  testing::NodeData data = Generate(s, 3);
  for (auto& r : data.ranks) r.comm.reset();
  RankSeriesState state;
  std::optional<NodeResult> slow;
  for (int64_t upto = 25; upto <= s.steps && !slow; upto += 5) {
    NodeInput in = InputUpTo(data, upto);
    NodeRound round = RunNodeRound(state, in, Params(), 1.3);
    state = round.next;
    if (round.result.is_slow) slow = round.result;
  }
  ASSERT_TRUE(slow.has_value());
  EXPECT_TRUE(slow->slow_calculate_ranks.empty());
}

TEST(NodeLevel, ResultJsonHasTheNodeFieldOrder) {
  NodeResult r;
  r.node_ip = "10.0.1.11";
  r.is_slow = true;
  r.degradation = 0.4767;
  r.slow_calculate_ranks = {2};
  EXPECT_EQ(r.ToJson("j").dump(),
            R"({"slownode_j":{"10.0.1.11":{"isSlow":1,"degradationLevel":"47.67%","jobId":"j",)"
            R"("nodeRank":"10.0.1.11","slowCalculateRanks":[2],"slowCommunicationDomains":[],)"
            R"("slowSendRanks":[],"slowHostNodes":[],"slowIORanks":[]}}})");
}

// The degradation handler (§6.2 step 6).
ClusterResult Slow(std::vector<int64_t> ranks = {2}) {
  ClusterResult r;
  r.is_slow = true;
  r.degradation = 0.5;
  r.slow_calculate_ranks = std::move(ranks);
  return r;
}

std::vector<DegradationActionKind> Kinds(const DegradationStep& s) {
  std::vector<DegradationActionKind> out;
  for (const auto& a : s.actions) out.push_back(a.kind);
  return out;
}

TEST(DegradationHandler, FirstSlowResultTurnsHeavyProfilingOnAndTheFifthConfirms) {
  using K = DegradationActionKind;
  DegradationState s;
  DegradationStep step = AdvanceDegradation(s, Slow());
  EXPECT_EQ(Kinds(step), (std::vector<K>{K::kHeavyProfilingOn}));
  s = step.next;
  for (int i = 2; i <= 4; ++i) {
    step = AdvanceDegradation(s, Slow());
    EXPECT_TRUE(step.actions.empty()) << i;
    s = step.next;
  }
  step = AdvanceDegradation(s, Slow());
  EXPECT_EQ(Kinds(step), (std::vector<K>{K::kLogConfirmed, K::kReportSlow, K::kHeavyProfilingOff}));
  EXPECT_EQ(step.actions[1].ranks, (std::vector<int64_t>{2}));
  EXPECT_TRUE(step.next.degraded);
  EXPECT_FALSE(step.next.heavy_profiling);
  s = step.next;
  step = AdvanceDegradation(s, Slow());
  EXPECT_EQ(Kinds(step), (std::vector<K>{K::kLogAlreadyDegraded}));
  step = AdvanceDegradation(step.next, ClusterResult{});
  EXPECT_EQ(Kinds(step), (std::vector<K>{K::kReportRecovery}));
  EXPECT_EQ(step.actions[0].ranks, (std::vector<int64_t>{2}));
  EXPECT_FALSE(step.next.degraded);
}

TEST(DegradationHandler, ANormalResultWhileHeavyResetsTheCount) {
  using K = DegradationActionKind;
  DegradationState s = AdvanceDegradation({}, Slow()).next;
  s = AdvanceDegradation(s, Slow()).next;
  DegradationStep step = AdvanceDegradation(s, ClusterResult{});
  EXPECT_EQ(Kinds(step), (std::vector<K>{K::kHeavyProfilingOff}));
  EXPECT_TRUE(step.next.history.empty());
}

TEST(DegradationHandler, ConfirmationWithoutSlowRanksDefersTheReport) {
  using K = DegradationActionKind;
  DegradationState s;
  for (int i = 0; i < 5; ++i) s = AdvanceDegradation(s, Slow({})).next;
  EXPECT_TRUE(s.degraded);
  EXPECT_TRUE(s.report_pending);
  DegradationStep step = AdvanceDegradation(s, Slow({7}));
  EXPECT_EQ(Kinds(step), (std::vector<K>{K::kLogAlreadyDegraded, K::kReportSlow}));
  EXPECT_EQ(step.actions[1].ranks, (std::vector<int64_t>{7}));
}

TEST(DegradationHandler, RecoveryWithNothingReportedSendsNothing) {
  DegradationState s;
  for (int i = 0; i < 5; ++i) s = AdvanceDegradation(s, Slow({})).next;
  DegradationStep step = AdvanceDegradation(s, ClusterResult{});
  EXPECT_TRUE(step.actions.empty());
  EXPECT_FALSE(step.next.degraded);
}

}  // namespace node_level_test
}  // namespace clusterd::diagnosis
