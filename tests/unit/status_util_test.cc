#include "common/status_util.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace status_util_test {

// This Abseil has no status matchers; `arg` is an absl::StatusOr.
MATCHER_P(IsOkAndHolds, expected, "") {
  if (!arg.ok()) {
    *result_listener << "status " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(::testing::Eq(expected), *arg, result_listener);
}

TEST(Annotate, PrefixesTheMessageAndKeepsTheCode) {
  absl::Status status = Annotate(absl::NotFoundError("key x missing"), "pod default/pt-0");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "pod default/pt-0: key x missing");
}

TEST(Annotate, LeavesOkAlone) { EXPECT_TRUE(Annotate(absl::OkStatus(), "context").ok()); }

TEST(Annotate, EmptyMessageBecomesTheContext) {
  absl::Status status = Annotate(absl::Status(absl::StatusCode::kInternal, ""), "store");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "store");
}

TEST(Annotate, KeepsPayloads) {
  absl::Status original = absl::UnavailableError("down");
  original.SetPayload("type.example/retry", absl::Cord("5s"));
  absl::Status status = Annotate(original, "etcd");
  ASSERT_TRUE(status.GetPayload("type.example/retry").has_value());
  EXPECT_EQ(*status.GetPayload("type.example/retry"), "5s");
}

absl::Status Step(absl::Status result, int* calls) {
  ++*calls;
  return result;
}

absl::Status TwoSteps(absl::Status first, int* calls) {
  CLUSTERD_RETURN_IF_ERROR(Step(first, calls));
  CLUSTERD_RETURN_IF_ERROR(Step(absl::OkStatus(), calls));
  return absl::OkStatus();
}

TEST(ReturnIfError, ContinuesOnOk) {
  int calls = 0;
  EXPECT_TRUE(TwoSteps(absl::OkStatus(), &calls).ok());
  EXPECT_EQ(calls, 2);
}

TEST(ReturnIfError, ReturnsTheErrorAndEvaluatesOnce) {
  int calls = 0;
  absl::Status status = TwoSteps(absl::AbortedError("first failed"), &calls);
  EXPECT_EQ(status, absl::AbortedError("first failed"));
  EXPECT_EQ(calls, 1);
}

absl::StatusOr<int> Half(int n) {
  if (n % 2 != 0) return absl::InvalidArgumentError("odd");
  return n / 2;
}

absl::Status CheckEven(int n) {
  CLUSTERD_RETURN_IF_ERROR(Half(n));  // a StatusOr works too
  return absl::OkStatus();
}

TEST(ReturnIfError, AcceptsStatusOr) {
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(3), absl::InvalidArgumentError("odd"));
}

absl::StatusOr<int> Quarter(int n) {
  CLUSTERD_ASSIGN_OR_RETURN(int half, Half(n));
  CLUSTERD_ASSIGN_OR_RETURN(auto quarter, Half(half));
  return quarter;
}

TEST(AssignOrReturn, DeclaresAndAssigns) {
  EXPECT_THAT(Quarter(8), IsOkAndHolds(2));
  EXPECT_EQ(Quarter(6).status(), absl::InvalidArgumentError("odd"));  // second step fails
  EXPECT_EQ(Quarter(5).status(), absl::InvalidArgumentError("odd"));  // first step fails
}

absl::Status AssignExisting(int n, int* out) {
  CLUSTERD_ASSIGN_OR_RETURN(*out, Half(n));
  return absl::OkStatus();
}

TEST(AssignOrReturn, AssignsToAnExistingVariable) {
  int out = -1;
  EXPECT_TRUE(AssignExisting(10, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_FALSE(AssignExisting(7, &out).ok());
  EXPECT_EQ(out, 5);  // untouched on error
}

absl::StatusOr<std::unique_ptr<std::string>> MakeName(bool ok) {
  if (!ok) return absl::NotFoundError("no name");
  return std::make_unique<std::string>("pt-0");
}

absl::StatusOr<std::string> UseName(bool ok) {
  CLUSTERD_ASSIGN_OR_RETURN(std::unique_ptr<std::string> name, MakeName(ok));
  return *name;
}

TEST(AssignOrReturn, MovesMoveOnlyValues) {
  EXPECT_THAT(UseName(true), IsOkAndHolds("pt-0"));
  EXPECT_EQ(UseName(false).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace status_util_test
}  // namespace clusterd
