// clusterctl -o jsonpath: the kubectl template subset, on the shapes clusterd's API serves.
#include "client/json_path.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace clusterd::client {
namespace json_path_test {

const nlohmann::ordered_json kList = nlohmann::ordered_json::parse(R"({
  "kind": "GoodputList",
  "items": [
    {"metadata": {"name": "llama", "labels": {"app.kubernetes.io/name": "x"}}, "ettr": 0.97, "ok": true},
    {"metadata": {"name": "gpt"}, "ettr": 0.71, "ranks": [1, 2]}
  ]
})");

std::string Render(std::string_view t) {
  absl::StatusOr<std::string> out = RenderJsonPath(t, kList);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

TEST(JsonPath, FieldsIndexesAndWildcards) {
  EXPECT_EQ(Render("{.kind}"), "GoodputList");
  EXPECT_EQ(Render("{.items[0].metadata.name}"), "llama");
  EXPECT_EQ(Render("{.items[-1].metadata.name}"), "gpt");
  EXPECT_EQ(Render("{.items[*].metadata.name}"), "llama gpt");
  EXPECT_EQ(Render("{$.items[*].ettr}"), "0.97 0.71");
  EXPECT_EQ(Render("{.items[0].metadata.labels['app.kubernetes.io/name']}"), "x");
  EXPECT_EQ(Render("{.items[1].ranks}"), "[1,2]");
  EXPECT_EQ(Render("{.items[0].ok}"), "true");
  EXPECT_EQ(Render("name={.items[1].metadata.name}!"), "name=gpt!");
}

TEST(JsonPath, RangeAndQuotedLiterals) {
  EXPECT_EQ(Render(R"({range .items[*]}{.metadata.name}{"\t"}{.ettr}{"\n"}{end})"),
            "llama\t0.97\ngpt\t0.71\n");
  EXPECT_EQ(Render(R"({range .items}{.metadata.name},{end})"), "llama,gpt,");
}

TEST(JsonPath, MissingKeysPrintNothing) {
  EXPECT_EQ(Render("{.nothing.here}"), "");
  EXPECT_EQ(Render("{.items[7].metadata.name}"), "");
  EXPECT_EQ(Render("{.kind.deeper}"), "");
}

TEST(JsonPath, MalformedTemplatesAreRefusedWithThePosition) {
  for (const char* bad : {"{.items", "{.items[0}", "{.items[x]}", "{range .items[*]}{.a}", "{end}",
                          "{.a..b}", "{\"open}", "{items}"}) {
    absl::StatusOr<std::string> out = RenderJsonPath(bad, kList);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(out.status().message(), "position")) << out.status();
  }
}

}  // namespace json_path_test
}  // namespace clusterd::client
