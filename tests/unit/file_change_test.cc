// FileChange (common/file_change.h): a change of the file, and, when asked for, its removal.
#include "common/file_change.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace file_change_test {

class FileChangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/change-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  ManualClock clock_{absl::FromUnixSeconds(1'800'000'000)};
};

TEST_F(FileChangeTest, ARemovedFileKeepsWhatWasReadUnlessRemovalIsAChange) {
  const std::string path = dir_ + "/f.json";
  std::ofstream(path) << "{}";
  FileChange keeping(path, clock_, absl::ZeroDuration());
  FileChange following(path, clock_, absl::ZeroDuration(), /*removal_is_a_change=*/true);
  EXPECT_TRUE(keeping.Changed());
  EXPECT_TRUE(following.Changed());
  EXPECT_FALSE(following.Changed());
  std::filesystem::remove(path);
  EXPECT_FALSE(keeping.Changed());
  EXPECT_TRUE(following.Changed());
  EXPECT_FALSE(following.Changed()) << "one change per removal";
  std::ofstream(path) << "{}";
  EXPECT_TRUE(following.Changed()) << "back again";
}

TEST_F(FileChangeTest, AFileThatNeverExistedIsNoChange) {
  FileChange following(dir_ + "/absent", clock_, absl::ZeroDuration(), true);
  EXPECT_FALSE(following.Changed());
  EXPECT_FALSE(following.Changed());
}

}  // namespace file_change_test
}  // namespace clusterd
