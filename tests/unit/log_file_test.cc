// The run log on disk (common/log_file.h): size rotation and the age limit of the backups.
#include "common/log_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "spdlog/details/log_msg.h"

namespace clusterd {
namespace log_file_test {

class LogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/log-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Touch(const std::string& path, int64_t mtime) {
    std::ofstream(path) << "old\n";
    struct utimbuf times = {static_cast<time_t>(mtime), static_cast<time_t>(mtime)};
    ASSERT_EQ(utime(path.c_str(), &times), 0);
  }
  std::string dir_;
};

TEST_F(LogFileTest, RotatesBySizeAndKeepsTheBackupCount) {
  absl::StatusOr<std::shared_ptr<spdlog::sinks::sink>> sink =
      OpenRotatingLogFile(dir_ + "/clusterd.log", 1024, 2, 7);
  ASSERT_TRUE(sink.ok()) << sink.status();
  const std::string line(200, 'x');
  for (int i = 0; i < 40; ++i) {
    (*sink)->log(spdlog::details::log_msg("clusterd", spdlog::level::info, line));
  }
  (*sink)->flush();
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/clusterd.log"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/clusterd.1.log"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/clusterd.2.log"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/clusterd.3.log"));
  EXPECT_LE(std::filesystem::file_size(dir_ + "/clusterd.1.log"), 1024u);
}

TEST_F(LogFileTest, BackupsOlderThanTheAgeAreRemoved) {
  const int64_t now = 1'800'000'000;
  const int64_t day = 24 * 3600;
  Touch(dir_ + "/clusterd.1.log", now - 1 * day);
  Touch(dir_ + "/clusterd.2.log", now - 8 * day);
  Touch(dir_ + "/clusterd.3.log", now - 30 * day);
  Touch(dir_ + "/clusterd.log", now - 30 * day);  // the live file is never removed
  EXPECT_EQ(RemoveAgedLogBackups(dir_ + "/clusterd.log", 30, 7 * day, now), 2u);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/clusterd.1.log"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/clusterd.2.log"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/clusterd.3.log"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/clusterd.log"));
}

TEST_F(LogFileTest, AFileThatCannotBeOpenedIsNamed) {
  std::ofstream(dir_ + "/not-a-dir") << "";
  absl::StatusOr<std::shared_ptr<spdlog::sinks::sink>> sink =
      OpenRotatingLogFile(dir_ + "/not-a-dir/clusterd.log", 1024, 2, 7);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find(dir_ + "/not-a-dir/clusterd.log"), std::string::npos)
      << sink.status();
}

}  // namespace log_file_test
}  // namespace clusterd
