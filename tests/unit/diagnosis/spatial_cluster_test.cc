#include "diagnosis/spatial_cluster.h"

#include "diagnosis/slow_node_algorithm.h"
#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace spatial_cluster_test {

TEST(SpatialCluster, WorkedExampleFindsTheLowRank) {
  // §6.8: TP group [0,1,2,3], last three ZP_device values in ms.
  auto found = SlowRanksBySpatialClustering(
      {0, 1, 2, 3}, {{5.0, 5.2, 5.1}, {5.1, 5.0, 5.3}, {0.8, 0.9, 0.7}, {5.2, 5.1, 5.0}}, 3, 1.3);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, (std::vector<int64_t>{2}));
}

TEST(SpatialCluster, WorkedExampleColumnZeroSplit) {
  auto low = SplitLowCluster({5.0, 5.1, 0.8, 5.2}, 1.3);
  ASSERT_TRUE(low.has_value());
  EXPECT_EQ(*low, (std::vector<size_t>{2}));
  EXPECT_FALSE(SplitLowCluster({0.8}, 1.3).has_value());
}

TEST(SpatialCluster, HomogeneousGroupHasNoOutlier) {
  EXPECT_FALSE(SlowRanksBySpatialClustering(
                   {0, 1, 2, 3},
                   {{5.0, 5.2, 5.1}, {5.1, 5.0, 5.3}, {5.3, 5.1, 5.2}, {5.2, 5.1, 5.0}}, 3, 1.3)
                   .has_value());
  EXPECT_FALSE(SplitLowCluster({2, 2, 2}, 1.3).has_value());  // all gaps 0
}

TEST(SpatialCluster, GapSmallerThanHalfTheRangeIsNoSplit) {
  EXPECT_FALSE(SplitLowCluster({1, 2, 3, 4}, 1.1).has_value());
}

TEST(SpatialCluster, RatioMustExceedD) {
  EXPECT_FALSE(SplitLowCluster({4.0, 5.0, 5.0}, 1.3).has_value());  // 5/4 = 1.25
  EXPECT_TRUE(SplitLowCluster({3.0, 5.0, 5.0}, 1.3).has_value());
}

TEST(SpatialCluster, SecondSplitReportsPositionsOfTheOriginalVector) {
  // First split: {0.1, 1.0} vs {10, 10}; second split of the low values: {0.1} vs {1.0}.
  auto pos = AbnormalPositions({10, 1.0, 10, 0.1}, 1.3);
  ASSERT_TRUE(pos.has_value());
  EXPECT_EQ(*pos, (std::vector<size_t>{3}));
}

TEST(SpatialCluster, DisagreeingColumnsGiveNoResult) {
  EXPECT_FALSE(SlowRanksBySpatialClustering({0, 1, 2}, {{1, 5, 5}, {5, 1, 5}, {5, 5, 5}}, 3, 1.3)
                   .has_value());
  // One column without an outlier while the others have one.
  EXPECT_FALSE(SlowRanksBySpatialClustering({0, 1, 2}, {{1, 1, 5}, {5, 5, 5}, {5, 5, 5}}, 3, 1.3)
                   .has_value());
}

TEST(SpatialCluster, TooShortSeriesGiveNoResult) {
  EXPECT_FALSE(SlowRanksBySpatialClustering({0, 1}, {{1, 1}, {5, 5, 5}}, 3, 1.3).has_value());
}

TEST(ClusterLevel, WorkedPpExample) {
  const std::vector<std::vector<int64_t>> pp = {{0, 8, 16, 24}};
  EXPECT_EQ(SlowPpDomains({0, 8}, pp), (std::vector<std::vector<int64_t>>{{0, 8}, {8, 16}}));
  EXPECT_EQ(SlowNetworkRanks({0, 8}, pp), (std::vector<int64_t>{8}));
}

TEST(ClusterLevel, LastRankOfAPpGroupContributesNoDomain) {
  EXPECT_TRUE(SlowPpDomains({24}, {{0, 8, 16, 24}}).empty());
}

TEST(ClusterLevel, MergeConfirmsTpDomainsAcrossNodesAndTakesTheMaxDegradation) {
  ParallelGroups global;
  global.groups = {{"g_1", "tp", 0, {0, 1, 2, 3}}, {"g_2", "pp", 0, {0, 8}}};
  NodeResult a;
  a.node_ip = "10.0.0.1";
  a.is_slow = true;
  a.degradation = 0.4;
  a.slow_calculate_ranks = {2};
  a.slow_communication_domains = {{0, 1}};
  a.slow_send_ranks = {0};
  NodeResult b;
  b.node_ip = "10.0.0.2";
  b.is_slow = true;
  b.degradation = 0.5;
  b.slow_communication_domains = {{2, 3}};
  ClusterResult r = MergeNodeResults({a, b}, global);
  EXPECT_TRUE(r.is_slow);
  EXPECT_DOUBLE_EQ(r.degradation, 0.5);
  EXPECT_EQ(r.slow_calculate_ranks, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.slow_communication_domains,
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {0, 8}}));
  EXPECT_EQ(
      r.ToJson("job-1", "10.0.0.9").dump(),
      R"({"slownode_job-1":{"10.0.0.9":{"isSlow":1,"degradationLevel":"50.00%","jobId":"job-1",)"
      R"("slowCalculateRanks":[2],"slowCommunicationDomains":[[0,1,2,3],[0,8]],)"
      R"("slowHostNodes":[],"slowIORanks":[],"slowCommunicationRanks":[]}}})");
}

TEST(ClusterLevel, NoSlowNodeIsNotSlow) {
  NodeResult a;
  a.node_ip = "n";
  ClusterResult r = MergeNodeResults({a}, {});
  EXPECT_FALSE(r.is_slow);
  EXPECT_EQ(r.ToJson("j", "c")["slownode_j"]["c"]["degradationLevel"], "0.0%");
}

}  // namespace spatial_cluster_test
}  // namespace clusterd::diagnosis
