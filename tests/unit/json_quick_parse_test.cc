#include "common/json_quick_parse.h"

#include <cstdint>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace clusterd {
namespace json_quick_parse_test {

using nlohmann::ordered_json;

// The reading every quick parse must equal: nlohmann's own, compared by value, by text and by
// number kind.
void ExpectReadAsNlohmannDoes(const std::string& text) {
  std::optional<ordered_json> quick = ParseJsonQuickly(text);
  ASSERT_TRUE(quick.has_value()) << text;
  const ordered_json slow = ordered_json::parse(text);
  EXPECT_EQ(*quick, slow) << text;
  EXPECT_EQ(quick->dump(), slow.dump()) << text;
}

TEST(ParseJsonQuickly, ReadsObjectsAsNlohmannDoesKeepingTheWrittenKeyOrder) {
  ExpectReadAsNlohmannDoes(R"({"z":1,"a":{"y":[true,false,null],"b":"x"},"m":-2.5e-3})");
  EXPECT_EQ(ParseJsonQuickly(R"({"z":1,"a":2})")->dump(), R"({"z":1,"a":2})");
}

TEST(ParseJsonQuickly, KeepsARepeatedKeyAtItsFirstPlaceWithItsLastValue) {
  ExpectReadAsNlohmannDoes(R"({"a":1,"b":2,"a":3})");
  EXPECT_EQ(ParseJsonQuickly(R"({"a":1,"b":2,"a":3})")->dump(), R"({"a":3,"b":2})");
  // Past the linear search, the hash map must find the repeat too.
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  many += "\"k7\":\"again\",\"k39\":{}}";
  ExpectReadAsNlohmannDoes(many);
  std::optional<ordered_json> read = ParseJsonQuickly(many);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->size(), 40u);
  EXPECT_EQ((*read)["k7"], "again");
  EXPECT_EQ(read->begin().key(), "k0");
}

TEST(ParseJsonQuickly, GivesIntegersTheKindNlohmannGivesThem) {
  std::optional<ordered_json> read =
      ParseJsonQuickly(R"([0,7,-7,9223372036854775807,9223372036854775808,-9223372036854775808])");
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE((*read)[0].is_number_unsigned());
  EXPECT_TRUE((*read)[1].is_number_unsigned());
  EXPECT_TRUE((*read)[2].is_number_integer() && !(*read)[2].is_number_unsigned());
  EXPECT_EQ((*read)[3].get<uint64_t>(), 9223372036854775807u);
  EXPECT_EQ((*read)[4].get<uint64_t>(), 9223372036854775808u);
  EXPECT_EQ((*read)[5].get<int64_t>(), INT64_MIN);
  ExpectReadAsNlohmannDoes(R"([0,7,-7,18446744073709551615,-9223372036854775808,1.0,1e3,-0.0])");
}

TEST(ParseJsonQuickly, ReadsEscapesAndUtf8AsNlohmannDoes) {
  ExpectReadAsNlohmannDoes(R"(["\u0000","\"\\\/\b\f\n\r\t","\ud83d\ude00","é中","\u00e9"])");
}

TEST(ParseJsonQuickly, LeavesMalformedTextToNlohmann) {
  for (const char* text : {"", " ", "{", R"({"a":})", "[1,]", "{} x", "01", "1.", "\"\\ud800\"",
                           "\"a\tb\"", "\"\xff\"", "nul", "[1 2]"}) {
    EXPECT_FALSE(ParseJsonQuickly(text).has_value()) << text;
    EXPECT_TRUE(ordered_json::parse(text, nullptr, false).is_discarded()) << text;
  }
}

TEST(ParseJsonQuickly, LeavesToNlohmannWhatOnlyNlohmannReads) {
  // Integers beyond 64 bits (nlohmann reads a double) and a leading byte-order mark.
  for (const char* text : {"18446744073709551616", "-9223372036854775809", "\xEF\xBB\xBF{}"}) {
    EXPECT_FALSE(ParseJsonQuickly(text).has_value()) << text;
    EXPECT_FALSE(ordered_json::parse(text, nullptr, false).is_discarded()) << text;
  }
}

TEST(ParseJsonQuickly, LeavesDeepNestingAndHugeTextsToNlohmann) {
  const std::string deep = std::string(2000, '[') + std::string(2000, ']');
  EXPECT_FALSE(ParseJsonQuickly(deep).has_value());
  const std::string shallow = std::string(500, '[') + std::string(500, ']');
  EXPECT_TRUE(ParseJsonQuickly(shallow).has_value());
  std::string huge = "\"" + std::string(kMaxQuickParseBytes, 'x') + "\"";
  EXPECT_FALSE(ParseJsonQuickly(huge).has_value());
}

TEST(ParseJsonQuickly, ReadsTextsLargerThanTheThreadsParserKeeps) {
  // Past 64 KiB a parser of its own reads the text; the thread's parser still serves after.
  std::string large = "[";
  for (int i = 0; i < 20000; ++i) large += "\"node-" + std::to_string(i) + "\",";
  large += "1]";
  ASSERT_GT(large.size(), 64u << 10);
  ExpectReadAsNlohmannDoes(large);
  ExpectReadAsNlohmannDoes(R"({"small":true})");
}

}  // namespace json_quick_parse_test
}  // namespace clusterd
