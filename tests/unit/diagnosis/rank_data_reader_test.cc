#include "diagnosis/rank_data_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace rank_data_reader_test {

namespace fs = std::filesystem;

class RankDataReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test and process: CTest runs the tests of this fixture in parallel
    // processes, and a shared directory was removed under a running test by the next SetUp.
    dir_ = fs::path(::testing::TempDir()) /
           ("diag-reader-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Append(const std::string& file, const std::string& text) {
    std::ofstream(dir_ / file, std::ios::app) << text;
  }
  fs::path dir_;
};

TEST_F(RankDataReaderTest, ReadsOnlyAppendedCompleteLines) {
  RankDataReader reader(dir_.string(), 3, 100);
  EXPECT_TRUE(reader.Refresh(nullptr).step_time.empty());  // no file yet
  EXPECT_FALSE(reader.profile().comm.has_value());
  Append("steptime.csv", "step time,durations\n1,100\n2,1");
  EXPECT_EQ(reader.Refresh(nullptr).step_time, (Series{{1, 100}}));
  Append("steptime.csv", "10\n3,120\n");
  EXPECT_EQ(reader.Refresh(nullptr).step_time, (Series{{1, 100}, {2, 110}, {3, 120}}));
  EXPECT_EQ(reader.Refresh(nullptr).step_time.size(), 3u);  // nothing new
  Append("comm.csv",
         "step_index,ZP_device,ZP_host,PP_device,PP_host,dataloader_host\n1,5,6,0,0,7\n");
  ASSERT_TRUE(reader.Refresh(nullptr).comm.has_value());
  EXPECT_EQ(reader.profile().comm->zp_device, (Series{{1, 5}}));
}

TEST_F(RankDataReaderTest, RewrittenFileStartsOverAndVanishedFileEmpties) {
  RankDataReader reader(dir_.string(), 0, 100);
  Append("steptime.csv", "step time,durations\n1,100\n2,110\n3,120\n");
  EXPECT_EQ(reader.Refresh(nullptr).step_time.size(), 3u);
  fs::remove(dir_ / "steptime.csv");
  Append("steptime.csv", "step time,durations\n1,500\n");
  EXPECT_EQ(reader.Refresh(nullptr).step_time, (Series{{1, 500}}));
  fs::remove(dir_ / "steptime.csv");
  EXPECT_TRUE(reader.Refresh(nullptr).step_time.empty());
}

TEST_F(RankDataReaderTest, KeepsTheNewestSamples) {
  RankDataReader reader(dir_.string(), 0, 3);
  Append("steptime.csv", "step time,durations\n1,1\n2,2\n3,3\n4,4\n5,5\n");
  EXPECT_EQ(reader.Refresh(nullptr).step_time, (Series{{3, 3}, {4, 4}, {5, 5}}));
}

TEST_F(RankDataReaderTest, BadHeaderIsAProblem) {
  RankDataReader reader(dir_.string(), 7, 10);
  Append("steptime.csv", "garbage\n1,2\n");
  std::vector<std::string> problems;
  reader.Refresh(&problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("rank 7"), std::string::npos) << problems[0];
}

}  // namespace rank_data_reader_test
}  // namespace clusterd::diagnosis
