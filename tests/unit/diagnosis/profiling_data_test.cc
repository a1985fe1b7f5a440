#include "diagnosis/profiling_data.h"

#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace profiling_data_test {

TEST(StepTimeCsv, ParsesRows) {
  auto s = ParseStepTimeCsv("step time,durations\n1,1000\n2,1010\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (Series{{1, 1000}, {2, 1010}}));
}

TEST(StepTimeCsv, SkipsZeroInfAndMaxFloatValues) {
  ParseStats stats;
  auto s = ParseStepTimeCsv(
      "step time,durations\n1,0\n2,inf\n3,-inf\n4,1.7976931348623157e308\n5,nan\n6,7\n", &stats);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Series{{6, 7}}));
  EXPECT_EQ(stats.skipped_values, 5);
}

TEST(StepTimeCsv, DropsATruncatedLastLineAndMalformedRows) {
  ParseStats stats;
  auto s = ParseStepTimeCsv("step time,durations\n1,1000\nx,2\n3,1,4\n4,10", &stats);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Series{{1, 1000}}));
  EXPECT_EQ(stats.malformed_rows, 3);
}

TEST(StepTimeCsv, EmptyFileIsAnEmptySeriesAndAMissingHeaderAnError) {
  auto empty = ParseStepTimeCsv("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto header_only = ParseStepTimeCsv("step time,durations\n");
  ASSERT_TRUE(header_only.ok());
  EXPECT_TRUE(header_only->empty());
  auto no_header = ParseStepTimeCsv("1,1000\n");
  EXPECT_EQ(no_header.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CommCsv, MatchesColumnsIgnoringCaseAndUnderscores) {
  auto c = ParseCommCsv(
      "STEPINDEX,zp_Device,ZPHOST,pp_device,PP_host,DataLoader_Host\n5,10,11,12,13,14\n6,0,21,inf,"
      "23,24\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->zp_device, (Series{{5, 10}}));
  EXPECT_EQ(c->zp_host, (Series{{5, 11}, {6, 21}}));
  EXPECT_EQ(c->pp_device, (Series{{5, 12}}));
  EXPECT_EQ(c->dataloader_host, (Series{{5, 14}, {6, 24}}));
}

TEST(CommCsv, WithoutStepColumnIsAnError) { EXPECT_FALSE(ParseCommCsv("ZP_device\n1\n").ok()); }

TEST(ParallelGroups, OrdersKeysByTheirNumberAndFindsDistinctGroups) {
  auto g = ParseParallelGroups(
      R"({"group_10":{"group_name":"pp","group_rank":0,"global_ranks":[0,8]},
          "group_2":{"group_name":"tp","group_rank":1,"global_ranks":[0,1,2,3]},
          "group_3":{"group_name":"tp","group_rank":1,"global_ranks":[0,1,2,3]}})",
      "pg");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->groups[0].key, "group_2");
  EXPECT_EQ(g->Distinct("tp"), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(g->Distinct("pp"), (std::vector<std::vector<int64_t>>{{0, 8}}));
  EXPECT_FALSE(g->HasCpOrExp());
}

TEST(ParallelGroups, RejectsMalformedGroupsWithTheGroupName) {
  auto g = ParseParallelGroups(R"({"g_1":{"group_name":"tp","global_ranks":["a"]}})", "pg");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("g_1"), std::string::npos);
  EXPECT_FALSE(ParseParallelGroups("{\"g_1\":", "pg").ok());
}

TEST(DegradationLevelText, FormatsPercentWithTwoDecimals) {
  EXPECT_EQ(DegradationLevel(0.47666), "47.67%");
  EXPECT_EQ(DegradationLevel(0), "0.0%");
  EXPECT_EQ(DegradationLevel(-0.1), "0.0%");
}

}  // namespace profiling_data_test
}  // namespace clusterd::diagnosis
