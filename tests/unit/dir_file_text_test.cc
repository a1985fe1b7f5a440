// The dir store's file text (dir_files::SerializeExactly) is byte for byte what nlohmann's
// dump(2, ' ', false, strict) writes, and refuses exactly what it refuses: files written before
// and after it must read and compare the same (docs/store-layout.md).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "store/dir/dir_files.h"

namespace clusterd::store {
namespace dir_file_text_test {

using dir_files::SerializeExactly;

std::optional<std::string> Reference(const Object& object) {
  try {
    return object.dump(2, ' ', false, Object::error_handler_t::strict) + "\n";
  } catch (const Object::type_error&) {
    return std::nullopt;
  }
}

void ExpectSameText(const Object& object) {
  const std::optional<std::string> ours = SerializeExactly(object);
  const std::optional<std::string> reference = Reference(object);
  ASSERT_EQ(ours.has_value(), reference.has_value());
  if (ours.has_value()) {
    EXPECT_EQ(*ours, *reference);
  }
}

TEST(DirFileText, IsNlohmannsIndentedDumpForEveryKindOfValue) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls.push_back(static_cast<char>(c));
  Object o = Object::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"a","labels":{},"annotations":{"k":"v"},"finalizers":[]},
      "data":{"reset.json":"{\"RankList\":[1,2],\"x\":\"a\\\\b\"}"},
      "nested":[[],{},[1,[2,{"x":[]}]],{"y":{}}],
      "numbers":[0,-1,9223372036854775807,-9223372036854775808,18446744073709551615,
                 0.1,1.0,-0.0,1e100,1e-7,123456.789,2.5e-300],
      "literals":[true,false,null]})");
  o["strings"] = {controls,
                  "\x7f",
                  "quote \" backslash \\ slash /",
                  "\xc3\xa9t\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80",
                  "\xe2\x80\xa8\xe2\x80\xa9",
                  "",
                  std::string(5000, 'x') + "\"" + std::string(5000, 'y')};
  o[controls] = "a key that needs escaping";
  ExpectSameText(o);
  ExpectSameText(Object::object());
  ExpectSameText(Object::array());
  ExpectSameText(Object("a string alone"));
  ExpectSameText(Object(42));
}

TEST(DirFileText, RefusesWhatNlohmannRefusesInValuesAndKeys) {
  for (const std::string bad :
       {"\x80", "\xc0\x80", "\xc3", "a\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80",
        "\xf5\x80\x80\x80", "\xff", "ok\xc3(", "\xe0\x80\xaf"}) {
    Object in_value = {{"data", {{"k", bad}}}};
    EXPECT_FALSE(SerializeExactly(in_value).has_value()) << "value " << bad;
    EXPECT_FALSE(Reference(in_value).has_value()) << "value " << bad;
    Object in_key = {{"data", {{bad, "v"}}}};
    EXPECT_FALSE(SerializeExactly(in_key).has_value()) << "key " << bad;
  }
}

TEST(DirFileText, IndentsDeeplyNestedValuesAsNlohmannDoes) {
  Object deep = "leaf";
  for (int depth = 0; depth < 1000; ++depth) {
    deep = depth % 2 == 0 ? Object::array({deep, depth}) : Object{{"k", deep}, {"n", nullptr}};
  }
  ExpectSameText(deep);
}

// Random objects of random bytes (well-formed UTF-8 or not), nested up to four levels.
Object RandomValue(std::mt19937_64& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto random_string = [&] {
    std::string s;
    const int length = pick(12);
    for (int i = 0; i < length; ++i) {
      switch (pick(4)) {
        case 0:  // any byte
          s.push_back(static_cast<char>(pick(256)));
          break;
        case 1:  // a well-formed multi-byte character
          s += std::string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80").substr(pick(3) == 0 ? 0 : 2, 3);
          break;
        default:  // printable ASCII, quotes and backslashes among it
          s.push_back(static_cast<char>(0x20 + pick(0x5f)));
      }
    }
    return s;
  };
  switch (depth >= 4 ? pick(5) : pick(7)) {
    case 0:
      return random_string();
    case 1:
      return static_cast<int64_t>(rng());
    case 2:
      return std::ldexp(static_cast<double>(rng() % 1000000) - 500000.0, pick(80) - 40);
    case 3:
      return pick(2) == 0;
    case 4:
      return nullptr;
    case 5: {
      Object a = Object::array();
      for (int i = pick(4); i > 0; --i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      Object o = Object::object();
      for (int i = pick(4); i > 0; --i) o[random_string()] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(DirFileText, AgreesWithNlohmannOnRandomObjects) {
  std::mt19937_64 rng(20261207);
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    const Object o = {{"metadata", {{"name", "n"}}}, {"data", RandomValue(rng, 0)}};
    ExpectSameText(o);
    if (!Reference(o).has_value()) ++refused;
  }
  EXPECT_GT(refused, 100);  // both paths were taken
  EXPECT_LT(refused, 2900);
}

}  // namespace dir_file_text_test
}  // namespace clusterd::store
