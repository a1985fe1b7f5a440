#include "common/json_util.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace json_util_test {

// This Abseil has no status matchers; `arg` is an absl::StatusOr.
MATCHER_P(IsOkAndHolds, expected, "") {
  if (!arg.ok()) {
    *result_listener << "status " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(::testing::Eq(expected), *arg, result_listener);
}

using nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseJson, KeepsKeyOrder) {
  absl::StatusOr<ordered_json> parsed = ParseJson(R"({"b":1,"a":[true,null]})", "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->dump(), R"({"b":1,"a":[true,null]})");
}

TEST(ParseJson, MalformedTextNamesTheInputAndTheBytePosition) {
  absl::StatusOr<ordered_json> parsed = ParseJson(R"({"a":})", "configmap kube-system/x");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(),
              HasSubstr("configmap kube-system/x: malformed JSON at byte 6: "));
  EXPECT_THAT(parsed.status().message(), Not(HasSubstr("json.exception")));
}

TEST(ParseJson, EmptyInputIsMalformed) {
  absl::StatusOr<ordered_json> parsed = ParseJson("", "reset.json");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("reset.json: malformed JSON at byte 1"));
}

TEST(ParseJson, TrailingGarbageIsMalformed) {
  EXPECT_EQ(ParseJson("{} x", "t").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseJson, InvalidUtf8IsMalformed) {
  EXPECT_EQ(ParseJson("\"\xff\"", "t").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseJson, NumberOutOfDoubleRangeIsAnErrorNotAThrow) {
  absl::StatusOr<ordered_json> parsed = ParseJson("[1e999]", "t");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("t: malformed JSON"));
}

TEST(ParseJson, OversizedInputIsRejectedBeforeParsing) {
  absl::StatusOr<ordered_json> parsed = ParseJson("[1,2,3,4,5]", "configmap default/big", 10);
  EXPECT_EQ(parsed.status(),
            absl::InvalidArgumentError("configmap default/big is 11 bytes, over the limit of 10"));
  EXPECT_TRUE(ParseJson("[1,2,3,45]", "t", 10).ok());
}

TEST(ParseJson, DefaultLimitIsOneMebibyte) {
  std::string text = "\"" + std::string((1 << 20) - 2, 'x') + "\"";
  EXPECT_TRUE(ParseJson(text, "t").ok());
  text.insert(1, "x");
  EXPECT_EQ(ParseJson(text, "t").status(),
            absl::InvalidArgumentError("t is 1048577 bytes, over the limit of 1048576"));
}

TEST(ParseJson, NestingIsLimitedLikeGo) {
  std::string ok(kMaxJsonDepth, '[');
  ok.append(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(ok, "t").ok());

  std::string deep(kMaxJsonDepth + 1, '[');
  deep.append(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(ParseJson(deep, "t").status(),
            absl::InvalidArgumentError("t: JSON nested deeper than 10000 levels at byte 10001"));
}

TEST(ParseJson, BracketsInsideStringsDoNotCountAsNesting) {
  std::string text = "[\"" + std::string(2 * kMaxJsonDepth, '[') + "\\\"{\"]";
  absl::StatusOr<ordered_json> parsed = ParseJson(text, "t");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)[0].get<std::string>().size(), 2u * kMaxJsonDepth + 2);
}

class GettersTest : public ::testing::Test {
 protected:
  ordered_json obj_ = ordered_json::parse(R"({
    "name": "pt-0", "rank": -3, "big": 9223372036854775807, "huge": 9223372036854775808,
    "ratio": 1.0, "exp": 1e3, "enabled": true, "none": null, "text_number": "5"
  })");
};

TEST_F(GettersTest, GetStringReturnsTheValue) {
  EXPECT_THAT(GetString(obj_, "name"), IsOkAndHolds("pt-0"));
}

TEST_F(GettersTest, MissingKeyIsNotFoundAndNamesTheKey) {
  EXPECT_EQ(GetString(obj_, "absent").status(), absl::NotFoundError("field \"absent\" is missing"));
  EXPECT_EQ(GetInt64(obj_, "absent").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(GetBool(obj_, "absent").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(GettersTest, WrongTypeIsInvalidArgumentAndNamesBothTypes) {
  EXPECT_EQ(GetString(obj_, "rank").status(),
            absl::InvalidArgumentError("field \"rank\" is number, want string"));
  EXPECT_EQ(GetString(obj_, "none").status(),
            absl::InvalidArgumentError("field \"none\" is null, want string"));
  EXPECT_EQ(GetBool(obj_, "name").status(),
            absl::InvalidArgumentError("field \"name\" is string, want boolean"));
  EXPECT_EQ(GetInt64(obj_, "text_number").status(),
            absl::InvalidArgumentError("field \"text_number\" is string, want integer"));
}

TEST_F(GettersTest, NonObjectIsInvalidArgument) {
  const ordered_json array = ordered_json::array({1});
  EXPECT_EQ(GetString(array, "name").status(),
            absl::InvalidArgumentError("cannot read field \"name\": value is array, not object"));
  EXPECT_EQ(GetInt64(ordered_json(), "x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetBool(ordered_json("s"), "x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GettersTest, GetInt64AcceptsTheSignedRange) {
  EXPECT_THAT(GetInt64(obj_, "rank"), IsOkAndHolds(-3));
  EXPECT_THAT(GetInt64(obj_, "big"), IsOkAndHolds(INT64_MAX));
}

TEST_F(GettersTest, GetInt64RejectsValuesAboveInt64) {
  EXPECT_EQ(
      GetInt64(obj_, "huge").status(),
      absl::InvalidArgumentError("field \"huge\" is 9223372036854775808, out of the int64 range"));
}

TEST_F(GettersTest, GetInt64RejectsFractionsAndExponentsLikeGo) {
  EXPECT_EQ(GetInt64(obj_, "ratio").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetInt64(obj_, "exp").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GettersTest, GetBoolReturnsTheValue) {
  EXPECT_THAT(GetBool(obj_, "enabled"), IsOkAndHolds(true));
}

TEST_F(GettersTest, StringOrFallsBackUnlessTheFieldIsAString) {
  EXPECT_EQ(StringOr(obj_, "name", "dflt"), "pt-0");
  EXPECT_EQ(StringOr(obj_, "absent", "dflt"), "dflt");
  EXPECT_EQ(StringOr(obj_, "rank", "dflt"), "dflt");
  EXPECT_EQ(StringOr(obj_, "none", ""), "");
  EXPECT_EQ(StringOr(ordered_json::array(), "name", "dflt"), "dflt");
}

}  // namespace json_util_test
}  // namespace clusterd
