// §11.1: the reset ConfigMap's content, golden.

#include "recovery/reset_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clusterd::recovery {
namespace reset_config_test {

using ::testing::HasSubstr;

const absl::Time kT = absl::FromUnixSeconds(1718000100);

TEST(ResetConfig, GoldenFaultWriteAndCheckCode) {
  // fault-pipeline.md §1.5 example: rank 8 faulty.
  auto info =
      ApplyResetOperation(R"({"status":"initializing"})", ResetOperation::kFault, {8}, false, kT);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(RenderResetJson(*info),
            R"({"RankList":[{"RankId":8,"LogicId":0,"Status":"fault","Policy":"",)"
            R"("InitialPolicy":"","ErrorCode":null,"ErrorCodeHex":""}],"UpdateTime":1718000100,)"
            R"("RetryTime":0,"FaultFlushing":false,"GracefulExit":0,"RestartFaultProcess":false})");
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "reset-config-demo"}, {"namespace", "ns"}, {"resourceVersion", "41"}}},
      {"data",
       {{"reset.json", R"({"status":"initializing"})"},
        {"checkCode", ""},
        {"restartType", "podReschedule"}}}};
  auto updated = ResetConfigMapUpdate(cm, ResetOperation::kFault, {8}, false, kT);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["data"]["checkCode"],
            "3bf30c2c7650e08869d36bac819a0f046febed183167399904a561c2a27ebb75");
  EXPECT_EQ((*updated)["data"].size(), 2u);  // restartType dropped
  EXPECT_EQ((*updated)["metadata"]["resourceVersion"], "41");
}

TEST(ResetConfig, FourOperations) {
  const std::string old =
      R"({"RankList":[{"RankId":1,"Policy":""}],"UpdateTime":5,"RetryTime":3,"FaultFlushing":true,"GracefulExit":0,"RestartFaultProcess":true})";
  auto clear = ApplyResetOperation(old, ResetOperation::kClear, {1}, true, kT);
  ASSERT_TRUE(clear.ok());
  EXPECT_EQ(RenderResetJson(*clear),
            R"({"RankList":[],"UpdateTime":1718000100,"RetryTime":3,"FaultFlushing":false,)"
            R"("GracefulExit":0,"RestartFaultProcess":false})");
  auto flushing = ApplyResetOperation(old, ResetOperation::kNotifyFaultFlushing, {}, false, kT);
  EXPECT_TRUE(flushing->fault_flushing);
  EXPECT_TRUE(flushing->rank_list.empty());
  auto fault = ApplyResetOperation(old, ResetOperation::kFault, {4, 5}, true, kT);
  EXPECT_EQ(fault->rank_list, (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(fault->restart_fault_process);
  EXPECT_FALSE(fault->fault_flushing);
  EXPECT_EQ(fault->retry_time, 3);
  auto restart = ApplyResetOperation(old, ResetOperation::kRestartAllProcess, {}, false, kT);
  EXPECT_EQ(restart->retry_time, 4);
  EXPECT_TRUE(restart->rank_list.empty());
  EXPECT_EQ(restart->graceful_exit, 0);
}

// Reproduced with fuzz_reset_json under UBSan: an old RetryTime of INT64_MAX made the
// restart-all rewrite's RetryTime + 1 overflow (undefined behaviour). A RetryTime out of the
// agents' 32-bit range counts from 0, like one that is not an integer.
TEST(ResetConfig, RetryTimeOutOfRangeCountsFromZero) {
  for (const char* retry : {"9223372036854775807", "2147483647", "-3", "\"7\""}) {
    const std::string old = std::string(R"({"RankList":[],"RetryTime":)") + retry + "}";
    auto restart = ApplyResetOperation(old, ResetOperation::kRestartAllProcess, {}, false, kT);
    ASSERT_TRUE(restart.ok()) << retry;
    EXPECT_EQ(restart->retry_time, 1) << retry;
  }
  auto kept = ApplyResetOperation(R"({"RetryTime":2147483646})", ResetOperation::kRestartAllProcess,
                                  {}, false, kT);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->retry_time, 2147483647);
}

TEST(ResetConfig, RefusedInHotResetMode) {
  for (const char* policy : {"reset", "restart"}) {
    const std::string old =
        std::string(R"({"RankList":[{"RankId":1,"Policy":")") + policy + R"("}],"RetryTime":0})";
    auto r = ApplyResetOperation(old, ResetOperation::kClear, {}, false, kT);
    EXPECT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("hot reset"));
  }
  EXPECT_TRUE(ApplyResetOperation(R"({"RankList":[{"Policy":"isolate"}]})", ResetOperation::kClear,
                                  {}, false, kT)
                  .ok());
}

TEST(ResetConfig, OldValueMustBeAJsonObject) {
  EXPECT_FALSE(ApplyResetOperation("[]", ResetOperation::kClear, {}, false, kT).ok());
  EXPECT_FALSE(ApplyResetOperation("not json", ResetOperation::kClear, {}, false, kT).ok());
  store::Object no_key = {{"metadata", {{"name", "reset-config-x"}, {"namespace", "ns"}}},
                          {"data", {{"other", "1"}}}};
  auto r = ResetConfigMapUpdate(no_key, ResetOperation::kClear, {}, false, kT);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("configmap ns/reset-config-x"));
}

TEST(ResetConfig, NamesAndOperationNames) {
  EXPECT_EQ(ResetConfigMapName("demo"), "reset-config-demo");
  for (auto op : {ResetOperation::kClear, ResetOperation::kNotifyFaultFlushing,
                  ResetOperation::kFault, ResetOperation::kRestartAllProcess}) {
    EXPECT_EQ(ParseResetOperation(ResetOperationName(op)), op);
  }
  EXPECT_EQ(ResetOperationName(ResetOperation::kNotifyFaultFlushing), "notifyFaultFlushing");
}

}  // namespace reset_config_test
}  // namespace clusterd::recovery
