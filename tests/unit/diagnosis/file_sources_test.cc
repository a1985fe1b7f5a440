#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "diagnosis/file_pingmesh_result_source.h"
#include "diagnosis/file_profiling_data_source.h"
#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace file_sources_test {

namespace fs = std::filesystem;

// The file sources are the one place the diagnosis controllers touch the node-side files, so
// they keep the temporary directories the controller tests no longer need.
class FileSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::path(::testing::TempDir()) /
        absl::StrCat("diag-src-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  static void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  fs::path root_;
};

TEST_F(FileSourceTest, ProfilingMissingRankIsNotFoundNamingTheFile) {
  FileProfilingDataSource source(root_.string(), 1024);
  EXPECT_TRUE(source.Ranks("job").empty());
  EXPECT_FALSE(source.HasParallelGroups("job", 0));
  auto pg = source.ParallelGroups("job", 0);
  ASSERT_FALSE(pg.ok());
  EXPECT_TRUE(absl::IsNotFound(pg.status()));
  EXPECT_NE(pg.status().message().find((root_ / "job" / "0" / "parallel_group.json").string()),
            absl::string_view::npos)
      << pg.status();
}

TEST_F(FileSourceTest, ProfilingOversizedParallelGroupKeepsItsFirstLineAndTheNewestTail) {
  Write(root_ / "job" / "3" / "parallel_group.json", "head\nold-line\nnew-line\n");
  FileProfilingDataSource source(root_.string(), 12);
  auto pg = source.ParallelGroups("job", 3);
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->text, "head\nnew-line\n");
}

TEST_F(FileSourceTest, ProfilingGoodFilesAreListedAndRead) {
  const std::string groups = R"({"group_0":{"group_name":"tp","group_rank":0,"global_ranks":[0]}})";
  Write(root_ / "job" / "0" / "parallel_group.json", groups);
  Write(root_ / "job" / "0" / "steptime.csv", "step time,durations\n1,100\n2,110\n");
  fs::create_directories(root_ / "job" / "not-a-rank");
  FileProfilingDataSource source(root_.string(), 1024);
  EXPECT_EQ(source.Ranks("job"), (std::vector<int64_t>{0}));
  EXPECT_TRUE(source.HasParallelGroups("job", 0));
  auto pg = source.ParallelGroups("job", 0);
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->text, groups);
  EXPECT_EQ(pg->name, (root_ / "job" / "0" / "parallel_group.json").string());
  std::unique_ptr<RankProfileReader> reader = source.OpenRank("job", 0, 16);
  const RankProfile& p = reader->Refresh(nullptr);
  EXPECT_EQ(p.rank, 0);
  ASSERT_EQ(p.step_time.size(), 2u);
  EXPECT_EQ(p.step_time[1].step, 2);
}

TEST_F(FileSourceTest, PingmeshMissingDirectoryAndCathelperNameThePath) {
  FilePingmeshResultSource source(root_.string(), 1024);
  const std::string dir = (root_ / "cluster" / "super-pod-7").string();
  EXPECT_EQ(source.PodDir("7"), dir);
  auto results = source.PingResults("7");
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find(dir), absl::string_view::npos) << results.status();
  auto conf = source.Cathelper("7");
  ASSERT_FALSE(conf.ok());
  EXPECT_TRUE(absl::IsNotFound(conf.status()));
  EXPECT_NE(conf.status().message().find("cathelper.conf"), absl::string_view::npos);
  EXPECT_FALSE(source.HasTopology("7"));
}

TEST_F(FileSourceTest, PingmeshOversizedResultIsRefusedWithItsLimit) {
  FilePingmeshResultSource source(root_.string(), 8);
  Write(fs::path(source.PodDir("0")) / "ping_result_0.csv", "0123456789\n");
  auto results = source.PingResults("0");
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 1u);
  ASSERT_FALSE((*results)[0].text.ok());
  EXPECT_EQ((*results)[0].text.status().message(),
            absl::StrCat((*results)[0].name, ": larger than 8 bytes"));
}

TEST_F(FileSourceTest, PingmeshGoodFilesAreReadInNameOrder) {
  FilePingmeshResultSource source(root_.string(), 1024);
  const fs::path dir = source.PodDir("0");
  Write(dir / "ping_result_1.csv", "b\n");
  Write(dir / "ping_result_0.csv-bak", "a\n");
  Write(dir / "ping_list_0.json", "[]");
  Write(dir / "cathelper.conf", "netFault=on\n");
  Write(dir / "super-pod-0.json", "{}");
  auto results = source.PingResults("0");
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].name, (dir / "ping_result_0.csv-bak").string());
  EXPECT_EQ(*(*results)[0].text, "a\n");
  EXPECT_EQ(*(*results)[1].text, "b\n");
  EXPECT_EQ(*source.Cathelper("0"), "netFault=on\n");
  EXPECT_TRUE(source.HasTopology("0"));
}

}  // namespace file_sources_test
}  // namespace clusterd::diagnosis
