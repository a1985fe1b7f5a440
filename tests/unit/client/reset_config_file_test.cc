#include "client/reset_config_file.h"

#include <filesystem>
#include <fstream>

#include "common/check_code.h"
#include "gtest/gtest.h"

namespace clusterd::client {
namespace reset_config_file_test {

// Exactly what clusterd writes for operation `fault` on ranks 8 and 9 (recovery-protocol.md §11.1).
constexpr char kFaultBody[] =
    R"({"RankList":[{"RankId":8,"LogicId":0,"Status":"fault","Policy":"","InitialPolicy":"",)"
    R"("ErrorCode":null,"ErrorCodeHex":""},{"RankId":9,"LogicId":0,"Status":"fault","Policy":"",)"
    R"("InitialPolicy":"","ErrorCode":null,"ErrorCodeHex":""}],"UpdateTime":1718000000,)"
    R"("RetryTime":0,"FaultFlushing":false,"GracefulExit":0,"RestartFaultProcess":false})";
constexpr char kClearBody[] =
    R"({"RankList":[],"UpdateTime":1718000001,"RetryTime":0,"FaultFlushing":false,"GracefulExit":0,"RestartFaultProcess":false})";
constexpr char kFlushingBody[] =
    R"({"RankList":[],"UpdateTime":1718000001,"RetryTime":0,"FaultFlushing":true,"GracefulExit":0,"RestartFaultProcess":false})";
constexpr char kRestartAllBody[] =
    R"({"RankList":[],"UpdateTime":1718000002,"RetryTime":1,"FaultFlushing":false,"GracefulExit":0,"RestartFaultProcess":false})";

ResetConfig Parse(const char* text) {
  auto config = ParseResetConfig(text);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ResetConfig{};
}

TEST(ResetConfig, ParsesTheFaultOperationBody) {
  ResetConfig c = Parse(kFaultBody);
  ASSERT_EQ(c.ranks.size(), 2u);
  EXPECT_EQ(c.ranks[0], (ResetRank{8, "fault", ""}));
  EXPECT_EQ(c.ranks[1].rank_id, 9);
  EXPECT_EQ(c.update_time, 1718000000);
  EXPECT_EQ(c.retry_time, 0);
  EXPECT_FALSE(c.fault_flushing);
  EXPECT_FALSE(c.restart_fault_process);
  EXPECT_FALSE(c.initializing);
  EXPECT_FALSE(c.HotResetMode());
}

TEST(ResetConfig, TheCreationBodyIsInitializing) {
  ResetConfig c = Parse(R"({"status":"initializing"})");
  EXPECT_TRUE(c.initializing);
  EXPECT_EQ(DecideResetAction(std::nullopt, c, {0, 1}).action, ResetAction::kNone);
}

TEST(ResetConfig, HotResetPoliciesAreRecognised) {
  EXPECT_TRUE(Parse(R"({"RankList":[{"RankId":1,"Policy":"reset"}]})").HotResetMode());
  EXPECT_TRUE(Parse(R"({"RankList":[{"RankId":1,"Policy":"restart"}]})").HotResetMode());
}

TEST(ResetConfig, MissingFieldsTakeZeroValuesNullRankListIsEmpty) {
  ResetConfig c = Parse(R"({"RankList":null,"RetryTime":3})");
  EXPECT_TRUE(c.ranks.empty());
  EXPECT_EQ(c.retry_time, 3);
  EXPECT_FALSE(c.fault_flushing);
}

TEST(ResetConfig, BadBodiesAreRejectedWithTheField) {
  EXPECT_FALSE(ParseResetConfig("[]").ok());
  EXPECT_FALSE(ParseResetConfig("{").ok());
  auto bad = ParseResetConfig(R"({"FaultFlushing":"yes"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("FaultFlushing"), std::string::npos);
  auto bad_rank = ParseResetConfig(R"({"RankList":[{"RankId":"8"}]})");
  ASSERT_FALSE(bad_rank.ok());
  EXPECT_NE(std::string(bad_rank.status().message()).find("RankList[0]"), std::string::npos);
}

TEST(ResetConfig, CheckCodeIsTheSha256OfTheExactBytes) {
  EXPECT_TRUE(VerifyResetCheckCode(kFaultBody, Sha256Hex(kFaultBody)).ok());
  EXPECT_TRUE(VerifyResetCheckCode(kFaultBody, Sha256Hex(kFaultBody) + "\n").ok());
  EXPECT_EQ(VerifyResetCheckCode(kFaultBody, Sha256Hex(kClearBody)).code(),
            absl::StatusCode::kDataLoss);
}

TEST(ResetDecision, ListedRanksWithoutRestartFaultProcessExit) {
  ResetDirective d = DecideResetAction(Parse(kClearBody), Parse(kFaultBody), {8, 9, 10});
  EXPECT_EQ(d.action, ResetAction::kExit);
  EXPECT_EQ(d.ranks, (std::vector<int64_t>{8, 9}));
}

TEST(ResetDecision, ListedRanksWithRestartFaultProcessRestartOnlyThose) {
  ResetConfig current = Parse(kFaultBody);
  current.restart_fault_process = true;
  ResetDirective d = DecideResetAction(Parse(kClearBody), current, {9, 10});
  EXPECT_EQ(d.action, ResetAction::kRestartFaultyWorkers);
  EXPECT_EQ(d.ranks, (std::vector<int64_t>{9}));
}

TEST(ResetDecision, AnAgentNotListedKeepsGoing) {
  EXPECT_EQ(DecideResetAction(Parse(kClearBody), Parse(kFaultBody), {0, 1}).action,
            ResetAction::kNone);
}

TEST(ResetDecision, FaultFlushingHoldsWorkers) {
  EXPECT_EQ(DecideResetAction(Parse(kClearBody), Parse(kFlushingBody), {0}).action,
            ResetAction::kHoldWorkers);
}

TEST(ResetDecision, ARetryTimeChangeRestartsEveryWorker) {
  EXPECT_EQ(DecideResetAction(Parse(kClearBody), Parse(kRestartAllBody), {0}).action,
            ResetAction::kRestartAllWorkers);
  // Seen at start-up, the counter is just the current value.
  EXPECT_EQ(DecideResetAction(std::nullopt, Parse(kRestartAllBody), {0}).action,
            ResetAction::kNone);
}

TEST(ResetDecision, AReplacementPodStartingWhileListedHoldsItsWorkers) {
  EXPECT_EQ(DecideResetAction(std::nullopt, Parse(kFaultBody), {8}).action,
            ResetAction::kHoldWorkers);
}

class ResetConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("reset-config-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& body, bool with_check = true, const std::string& check = "") {
    std::ofstream(dir_ / "reset.json") << body;
    if (with_check) std::ofstream(dir_ / "checkCode") << (check.empty() ? Sha256Hex(body) : check);
  }
  std::filesystem::path dir_;
};

TEST_F(ResetConfigFileTest, PollReportsOnlyChangedBodies) {
  ResetConfigFile file(dir_.string());
  Write(kClearBody);
  auto first = file.Poll({8});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->action, ResetAction::kNone);
  auto same = file.Poll({8});
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->has_value());
  Write(kFaultBody);
  auto fault = file.Poll({8});
  ASSERT_TRUE(fault.ok());
  ASSERT_TRUE(fault->has_value());
  EXPECT_EQ((*fault)->action, ResetAction::kExit);
}

TEST_F(ResetConfigFileTest, AMismatchedCheckCodeIsAnError) {
  ResetConfigFile file(dir_.string());
  Write(kFaultBody, true, Sha256Hex(kClearBody));
  EXPECT_EQ(file.Read().status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(file.Poll({8}).ok());
  EXPECT_FALSE(file.last().has_value());
}

TEST_F(ResetConfigFileTest, WithoutCheckCodeTheBodyIsTrusted) {
  ResetConfigFile file(dir_.string());
  Write(kFlushingBody, /*with_check=*/false);
  auto c = file.Read();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->fault_flushing);
}

TEST_F(ResetConfigFileTest, AMissingFileIsNotFound) {
  ResetConfigFile file((dir_ / "absent").string());
  EXPECT_EQ(file.Read().status().code(), absl::StatusCode::kNotFound);
}

}  // namespace reset_config_file_test
}  // namespace clusterd::client
