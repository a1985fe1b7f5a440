#include "diagnosis/feat_conf.h"

#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace feat_conf_test {

constexpr std::string_view kShipped =
    R"({"jobName":"default-test-pytorch-2pod-16npu","jobNamespace":"default","normalNumber":20,"nSigma":3,
     "degradationPercentage":0.3,"nConsecAnomaliesSignifySlow":3,"nSecondsDoOneDetection":30,
     "clusterMeanDistance":1.3,"cardOneNode":16,"SlowNode":1})";

TEST(FeatConf, ParsesTheDocumentedExampleWithCaseInsensitiveKeys) {
  auto c = ParseAndValidateFeatConf(kShipped, "test");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "default-test-pytorch-2pod-16npu");
  EXPECT_EQ(c->job_namespace, "default");
  EXPECT_EQ(c->normal_number, 20);
  EXPECT_EQ(c->n_sigma, 3);
  EXPECT_DOUBLE_EQ(c->degradation_percentage, 0.3);
  EXPECT_EQ(c->n_consec_anomalies, 3);
  EXPECT_EQ(c->n_seconds_do_one_detection, 30);
  EXPECT_DOUBLE_EQ(c->cluster_mean_distance, 1.3);
  EXPECT_EQ(c->card_one_node, 16);
  EXPECT_TRUE(c->Enabled());  // "SlowNode" ≡ "slowNode"
}

TEST(FeatConf, ParsesServersFilledInByTheEngine) {
  auto c = ParseFeatConf(
      R"({"jobName":"j","servers":[{"Sn":"s1","Ip":"10.0.0.1","RankIds":[0,1]}],"rankIds":[0,1]})",
      "t");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->servers.size(), 1u);
  EXPECT_EQ(c->servers[0].ip, "10.0.0.1");
  EXPECT_EQ(c->servers[0].rank_ids, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c->rank_ids, (std::vector<int64_t>{0, 1}));
}

struct Bad {
  std::string json;
  std::string reason;
};

class FeatConfRejects : public ::testing::TestWithParam<Bad> {};

TEST_P(FeatConfRejects, WithAReason) {
  auto c = ParseAndValidateFeatConf(GetParam().json, "cm x");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(c.status().message()).find(GetParam().reason), std::string::npos)
      << c.status();
}

std::string With(std::string_view field, std::string_view value) {
  std::string base = R"({"jobName":"j","normalNumber":20,"nSigma":3,"degradationPercentage":0.3,)"
                     R"("nConsecAnomaliesSignifySlow":3,"nSecondsDoOneDetection":30,)"
                     R"("clusterMeanDistance":1.3,"cardOneNode":16,"slowNode":1)";
  return base + ",\"" + std::string(field) + "\":" + std::string(value) + "}";
}

INSTANTIATE_TEST_SUITE_P(
    Rules, FeatConfRejects,
    ::testing::Values(
        Bad{With("jobName", "\"\""), "jobName is empty"},
        Bad{With("normalNumber", "0"), "normalNumber must be > 0, got 0"},
        Bad{With("nSigma", "-1"), "nSigma must be >= 0, got -1"},
        Bad{With("degradationPercentage", "0"), "degradationPercentage must be > 0"},
        Bad{With("nConsecAnomaliesSignifySlow", "0"),
            "nConsecAnomaliesSignifySlow must be >= 1, got 0"},
        Bad{With("nSecondsDoOneDetection", "-5"), "nSecondsDoOneDetection must be >= 0"},
        Bad{With("clusterMeanDistance", "1"), "clusterMeanDistance must be > 1, got 1"},
        Bad{With("cardOneNode", "0"), "cardOneNode must be > 0"},
        Bad{With("normalNumber", "\"20\""), "field normalNumber: want an integer"},
        Bad{With("normalNumber", "2.5"), "field normalNumber: want an integer"},
        Bad{"[1,2]", "not a JSON object"}, Bad{"{\"jobName\":", "cm x"}));

TEST(FeatConf, SameThresholdsIgnoresTheSwitchAndRanks) {
  auto a = ParseAndValidateFeatConf(kShipped, "a");
  ASSERT_TRUE(a.ok());
  FeatConf b = *a;
  b.slow_node = 0;
  b.rank_ids = {1, 2};
  EXPECT_TRUE(a->SameThresholds(b));
  b.degradation_percentage = 0.5;
  EXPECT_FALSE(a->SameThresholds(b));
}

TEST(FeatConf, JobJsonKeepsTheEngineFieldOrderAndOmitsZeroThresholds) {
  FeatConf c;
  c.job_name = "j";
  c.job_id = "uid-1";
  c.normal_number = 20;
  c.slow_node = 1;
  c.job_namespace = "default";
  EXPECT_EQ(FeatConfToJson(c).dump(),
            R"({"jobName":"j","jobId":"uid-1","normalNumber":20,"rankIds":[],"slowNode":1,)"
            R"("jobNamespace":"default","servers":[]})");
}

}  // namespace feat_conf_test
}  // namespace clusterd::diagnosis
