// The README's main job, end to end.
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "test_env.h"

namespace clusterd {
namespace {

TEST(Demo, RunsToCompletionAndExitsZero) {
  testing::TempDir dir;
  testing::CommandResult r = testing::RunCommand(std::string(CLUSTERSIM_BIN) +
                                                 " --demo --clusterd " + CLUSTERD_BIN +
                                                 " --state-dir " + dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "demo passed")) << r.output;
}

}  // namespace
}  // namespace clusterd
