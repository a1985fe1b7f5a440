#include "common/canonical_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace clusterd {
namespace canonical_json_test {

using nlohmann::ordered_json;

TEST(QuoteGoString, PlainAsciiIsQuotedUnchanged) {
  EXPECT_EQ(QuoteGoString("Ascend910-3"), R"("Ascend910-3")");
  EXPECT_EQ(QuoteGoString(""), R"("")");
}

TEST(QuoteGoString, QuoteIsBackslashEscaped) {
  EXPECT_EQ(QuoteGoString(R"(say "hi")"), R"("say \"hi\"")");
}

TEST(QuoteGoString, BackslashIsDoubled) { EXPECT_EQ(QuoteGoString(R"(a\b)"), R"("a\\b")"); }

TEST(QuoteGoString, NewlineCarriageReturnAndTabUseShortEscapes) {
  EXPECT_EQ(QuoteGoString("a\nb\rc\td"), R"("a\nb\rc\td")");
}

TEST(QuoteGoString, OtherControlCharactersUseLowerCaseUnicodeEscapes) {
  // Go before 1.22 (what the spec fixes) writes \b and \f as \u0008 and \u000c.
  EXPECT_EQ(QuoteGoString("\b\f\x01"), R"("\u0008\u000c\u0001")");
  EXPECT_EQ(QuoteGoString(std::string("\0\x1f", 2)), R"("\u0000\u001f")");
  EXPECT_EQ(QuoteGoString("\x1b"), R"("\u001b")");
}

TEST(QuoteGoString, DeleteIsNotAControlCharacterForGo) {
  EXPECT_EQ(QuoteGoString("\x7f"), "\"\x7f\"");
}

TEST(QuoteGoString, HtmlSpecialCharactersAreEscaped) {
  EXPECT_EQ(QuoteGoString("<a>&"), R"("\u003ca\u003e\u0026")");
}

TEST(QuoteGoString, LineAndParagraphSeparatorsAreEscaped) {
  EXPECT_EQ(QuoteGoString("a\u2028b\u2029c"), R"("a\u2028b\u2029c")");
  // Neighbours of U+2028/9 stay raw.
  EXPECT_EQ(QuoteGoString("\u2027\u202a"), "\"\u2027\u202a\"");
}

TEST(QuoteGoString, OtherNonAsciiIsRawUtf8) {
  EXPECT_EQ(QuoteGoString("中"), "\"中\"");
  EXPECT_EQ(QuoteGoString("é\U0001F600"), "\"é\U0001F600\"");
  EXPECT_EQ(QuoteGoString("\u00a0"), "\"\u00a0\"");
}

TEST(QuoteGoString, InvalidUtf8BytesBecomeReplacementEscapes) {
  EXPECT_EQ(QuoteGoString("a\xff"
                          "b"),
            R"("a\ufffdb")");
  // Like Go, every byte that does not start a valid sequence is replaced on its own.
  EXPECT_EQ(QuoteGoString("\xe4\xb8"), R"("\ufffd\ufffd")");                      // truncated 中
  EXPECT_EQ(QuoteGoString("\xc0\xaf"), R"("\ufffd\ufffd")");                      // overlong '/'
  EXPECT_EQ(QuoteGoString("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");            // surrogate D800
  EXPECT_EQ(QuoteGoString("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // > U+10FFFF
  EXPECT_EQ(QuoteGoString("\x80"
                          "中"),
            "\"\\ufffd中\"");
}

TEST(QuoteGoString, EncodedReplacementCharacterStaysRaw) {
  EXPECT_EQ(QuoteGoString("\xef\xbf\xbd"), "\"\xef\xbf\xbd\"");
}

TEST(CanonicalJson, NullEmptyArrayAndEmptyObjectDiffer) {
  ordered_json record;
  record["nil"] = nullptr;
  record["empty_list"] = ordered_json::array();
  record["empty_map"] = ordered_json::object();
  EXPECT_EQ(CanonicalJson(record), R"({"nil":null,"empty_list":[],"empty_map":{}})");
  EXPECT_EQ(CanonicalJson(ordered_json()), "null");
}

TEST(CanonicalJson, StdMapBackedObjectsComeOutSortedByByteValue) {
  nlohmann::json map = {{"b", 1}, {"é", 2}, {"a", 3}, {"_", 4}, {"B", 5}, {"a0", 6}};
  EXPECT_EQ(CanonicalJson(map), R"({"B":5,"_":4,"a":3,"a0":6,"b":1,"é":2})");
}

TEST(CanonicalJson, SortedObjectSortsTopLevelKeysByByteValue) {
  ordered_json map;
  map["b"] = 1;
  map["é"] = 2;
  map["a"] = ordered_json{{"z", 1}, {"y", 2}};  // a record inside: keeps its order
  map["B"] = 5;
  EXPECT_EQ(CanonicalJson(SortedObject(map)), R"({"B":5,"a":{"z":1,"y":2},"b":1,"é":2})");
  EXPECT_EQ(CanonicalJson(map), R"({"b":1,"é":2,"a":{"z":1,"y":2},"B":5})");
}

TEST(CanonicalJson, SortedObjectLeavesNonObjectsAlone) {
  EXPECT_EQ(SortedObject(ordered_json::array({2, 1})), ordered_json::array({2, 1}));
  EXPECT_EQ(SortedObject(ordered_json("x")), ordered_json("x"));
  EXPECT_TRUE(SortedObject(ordered_json::object()).is_object());
}

TEST(CanonicalJson, NestedRecordsKeepTheirFieldOrder) {
  ordered_json inner;
  inner["fault_time"] = 1718000000123;
  inner["fault_level"] = "RestartBusiness";
  ordered_json outer;
  outer["z_first"] = inner;
  outer["a_second"] = ordered_json::array({inner});
  EXPECT_EQ(CanonicalJson(outer),
            R"({"z_first":{"fault_time":1718000000123,"fault_level":"RestartBusiness"},)"
            R"("a_second":[{"fault_time":1718000000123,"fault_level":"RestartBusiness"}]})");
}

TEST(CanonicalJson, KeysAreEscapedLikeValues) {
  ordered_json object;
  object["<k>\n"] = "v&";
  EXPECT_EQ(CanonicalJson(object), R"({"\u003ck\u003e\n":"v\u0026"})");
}

TEST(CanonicalJson, IntegersAreDecimalOverTheFullSignedAndUnsignedRange) {
  ordered_json values = ordered_json::array();
  values.push_back(0);
  values.push_back(-1);
  values.push_back(std::numeric_limits<int64_t>::min());
  values.push_back(std::numeric_limits<int64_t>::max());
  values.push_back(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(CanonicalJson(values),
            "[0,-1,-9223372036854775808,9223372036854775807,18446744073709551615]");
}

TEST(CanonicalJson, BooleansAndStrings) {
  EXPECT_EQ(CanonicalJson(ordered_json::array({true, false, "x"})), R"([true,false,"x"])");
}

TEST(CanonicalJson, FloatsUseGoShortestForm) {
  ordered_json values = ordered_json::array(
      {1.5, 100.0, -0.0, 0.1, 0.000001, 1e-7, 1.25e-10, 1e20, 1e21, 123456789e20, -2.5e-300});
  EXPECT_EQ(CanonicalJson(values),
            "[1.5,100,-0,0.1,0.000001,1e-7,1.25e-10,100000000000000000000,1e+21,1.23456789e+28,"
            "-2.5e-300]");
}

TEST(CanonicalJson, NonFiniteFloatsComeOutAsNull) {
  ordered_json values =
      ordered_json::array({std::nan(""), std::numeric_limits<double>::infinity()});
  EXPECT_EQ(CanonicalJson(values), "[null,null]");
}

TEST(CanonicalJson, BinaryIsBase64LikeGoByteSlices) {
  EXPECT_EQ(CanonicalJson(ordered_json::binary({'h', 'i', '!'})), R"("aGkh")");
}

TEST(CanonicalJson, MatchesNlohmannDumpWhenNoEscapingRulesDiffer) {
  auto value = ordered_json::parse(R"({"b":[1,-2,"x y",null,{"k":true}],"a":"q\"\\/"})");
  EXPECT_EQ(CanonicalJson(value), value.dump());
}

TEST(CanonicalJson, DeepNestingDoesNotExhaustTheStack) {
  std::string text(10000, '[');
  text.append(10000, ']');
  EXPECT_EQ(CanonicalJson(ordered_json::parse(text)), text);
}

}  // namespace canonical_json_test
}  // namespace clusterd
