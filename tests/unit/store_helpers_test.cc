// The free helpers of store/object_store.h and the shared write rules (store/admission.h).

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/admission.h"
#include "store/object_store.h"
#include "store_test_util.h"

namespace clusterd::store {
namespace store_helpers_test {

using testing::ConfigMap;
using ::testing::HasSubstr;
using testing::Node;

Object WithLabels(const Object& labels) { return ConfigMap("default", "a", labels); }

TEST(StoreLabelSelector, EmptySelectsEverything) {
  auto s = LabelSelector::Parse("  ");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->Empty());
  EXPECT_TRUE(s->Matches(WithLabels({})));
  EXPECT_EQ(s->ToString(), "");
}

TEST(StoreLabelSelector, ParsesEveryOperatorAndPrintsThemBack) {
  auto s = LabelSelector::Parse("a=b, c==d ,e!=f,g,!h,example.com/role=npu");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(), "a=b,c=d,e!=f,g,!h,example.com/role=npu");
}

TEST(StoreLabelSelector, MatchesAsKubernetesDoes) {
  auto s = *LabelSelector::Parse("app=x,tier!=db,gpu,!spot");
  EXPECT_TRUE(s.Matches(WithLabels({{"app", "x"}, {"gpu", ""}})));
  EXPECT_TRUE(s.Matches(WithLabels({{"app", "x"}, {"gpu", "1"}, {"tier", "web"}})));
  EXPECT_FALSE(s.Matches(WithLabels({{"app", "y"}, {"gpu", "1"}})));
  EXPECT_FALSE(s.Matches(WithLabels({{"app", "x"}, {"gpu", "1"}, {"tier", "db"}})));
  EXPECT_FALSE(s.Matches(WithLabels({{"app", "x"}})));
  EXPECT_FALSE(s.Matches(WithLabels({{"app", "x"}, {"gpu", "1"}, {"spot", "true"}})));
  EXPECT_FALSE(s.Matches(Object::object()));
  // key!=value holds for an object without the label.
  EXPECT_TRUE(LabelSelector::Parse("a!=b")->Matches(Object::object()));
  EXPECT_TRUE(LabelSelector::Parse("a=")->Matches(WithLabels({{"a", ""}})));
}

TEST(StoreLabelSelector, RejectsMalformedSelectorsWithTheTermAndTheSyntax) {
  for (const char* bad :
       {"a=b,", ",a", "=b", "a b=c", "!a=b", "a=b c", "a/b/c=d", "-a=b", "a in (b)", "a=-b"}) {
    auto s = LabelSelector::Parse(bad);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr("key=value")) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr(bad)) << bad;
  }
}

TEST(StoreMergePatch, FollowsRfc7386) {
  // The examples of RFC 7386, section 3.
  struct Case {
    const char* target;
    const char* patch;
    const char* want;
  };
  const Case cases[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", R"(null)", R"(null)"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const Case& c : cases) {
    Object target = Object::parse(c.target);
    ApplyMergePatch(target, Object::parse(c.patch));
    EXPECT_EQ(target, Object::parse(c.want)) << c.target << " + " << c.patch;
  }
}

TEST(StoreValidateObject, AcceptsAWellFormedObject) {
  EXPECT_TRUE(ValidateObject(kConfigMaps, ConfigMap("kube-system", "a.b-c", {{"x", "y"}})).ok());
  EXPECT_TRUE(ValidateObject(kNodes, Node("node-1")).ok());
}

TEST(StoreValidateObject, RejectsBadNamesNamespacesAndMaps) {
  auto invalid = [](std::string_view resource, const Object& o, std::string_view why) {
    absl::Status s = ValidateObject(resource, o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << o.dump();
    EXPECT_THAT(std::string(s.message()), HasSubstr(why)) << o.dump();
  };
  invalid(kConfigMaps, ConfigMap("default", "Upper"), "DNS-1123 subdomain");
  invalid(kConfigMaps, ConfigMap("default", "-a"), "DNS-1123 subdomain");
  invalid(kConfigMaps, ConfigMap("default", "a..b"), "DNS-1123 subdomain");
  invalid(kConfigMaps, ConfigMap("default", std::string(254, 'a')), "DNS-1123 subdomain");
  EXPECT_TRUE(ValidateObject(kConfigMaps, ConfigMap("default", std::string(253, 'a'))).ok());
  invalid(kConfigMaps, ConfigMap("", "a"), "metadata.namespace is required");
  invalid(kConfigMaps, ConfigMap("Bad_NS", "a"), "DNS-1123 label");
  Object node = Node("n");
  node["metadata"]["namespace"] = "default";
  invalid(kNodes, node, "cluster-scoped");
  invalid(kConfigMaps, ConfigMap("default", "a", {{"k", 1}}), "metadata.labels.k must be a string");
  Object annotations = ConfigMap("default", "a");
  annotations["metadata"]["annotations"] = Object::array();
  invalid(kConfigMaps, annotations, "metadata.annotations must be an object");
  invalid(kConfigMaps, Object::array(), "must be a JSON object");
  invalid(kConfigMaps, {{"kind", "ConfigMap"}}, "metadata must be an object");
  invalid("widgets", ConfigMap("default", "a"), "unknown resource \"widgets\"");
}

TEST(StoreObjectKey, PrintsResourceNamespaceAndName) {
  EXPECT_EQ((ObjectKey{"configmaps", "kube-system", "a"}).ToString(), "configmaps/kube-system/a");
  EXPECT_EQ((ObjectKey{"nodes", "", "n1"}).ToString(), "nodes/n1");
  EXPECT_EQ(KeyOf(kNodes, Node("n1")), (ObjectKey{"nodes", "", "n1"}));
  EXPECT_TRUE(IsClusterScoped(kNodes));
  EXPECT_FALSE(IsClusterScoped(kPods));
  EXPECT_TRUE(IsKnownResource(kAscendJobs));
  EXPECT_FALSE(IsKnownResource("services"));
}

TEST(StoreOpenStore, AcceptsMemoryAndDirAndNamesTheSyntaxOtherwise) {
  EXPECT_TRUE(OpenStore("memory").ok());
  testing::TempDir dir;
  EXPECT_TRUE(OpenStore("dir:" + dir.path() + "/state").ok());
  // Outside a pod "kube" needs a kubeconfig (tests/fixtures has the kube store's own tests).
  if (std::getenv("KUBERNETES_SERVICE_HOST") == nullptr) {
    auto kube = OpenStore("kube");
    EXPECT_EQ(kube.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(kube.status().message(), HasSubstr("--kubeconfig"));
  }
  for (const char* bad : {"", "mem", "dir:", "dir", "etcd:x"}) {
    auto s = OpenStore(bad);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr("\"memory\", \"dir:PATH\" or \"kube\"")) << bad;
  }
}

TEST(StoreAdmission, MetadataFieldsGoWhereKubernetesPutsThem) {
  Object o = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", "a"}, {"namespace", "n"}, {"labels", {{"x", "y"}}}}}};
  SetMetadataField(o, "creationTimestamp", "t");
  SetMetadataField(o, "uid", "u");
  SetResourceVersion(o, 7);
  std::vector<std::string> keys;
  for (const auto& [k, v] : o["metadata"].items()) keys.push_back(k);
  EXPECT_THAT(keys, ::testing::ElementsAre("name", "namespace", "uid", "resourceVersion",
                                           "creationTimestamp", "labels"));
  Object no_meta = {{"apiVersion", "v1"}, {"kind", "Node"}, {"spec", Object::object()}};
  SetMetadataField(no_meta, "name", "n");
  keys.clear();
  for (const auto& [k, v] : no_meta.items()) keys.push_back(k);
  EXPECT_THAT(keys, ::testing::ElementsAre("apiVersion", "kind", "metadata", "spec"));
}

TEST(StoreAdmission, UidsAreRandomVersion4) {
  std::string a = NewUid();
  EXPECT_THAT(a, ::testing::MatchesRegex(
                     "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_NE(a, NewUid());
}

TEST(StoreAdmission, TimestampsAreRfc3339UtcSeconds) {
  EXPECT_EQ(FormatTimestamp(absl::FromUnixSeconds(1718000000) + absl::Milliseconds(900)),
            "2024-06-10T06:13:20Z");
}

TEST(StoreAdmission, ResourceVersionsAreDecimal) {
  EXPECT_EQ(ParseResourceVersion("42"), 42u);
  EXPECT_EQ(ParseResourceVersion(""), std::nullopt);
  EXPECT_EQ(ParseResourceVersion("4x"), std::nullopt);
  EXPECT_EQ(ParseResourceVersion("-1"), std::nullopt);
}

TEST(StoreChangesNothing, LeavesOutOnlyTheResourceVersion) {
  const Object stored = Object::parse(
      R"({"metadata":{"name":"a","resourceVersion":"7","uid":"u"},"data":{"k":"1"}})");
  EXPECT_TRUE(ChangesNothing(stored, stored));
  EXPECT_TRUE(ChangesNothing(
      stored, Object::parse(R"({"metadata":{"name":"a","uid":"u"},"data":{"k":"1"}})")));
  EXPECT_TRUE(ChangesNothing(
      stored,
      Object::parse(
          R"({"metadata":{"name":"a","resourceVersion":"9","uid":"u"},"data":{"k":"1"}})")));
  // Anything else is a change: a value, a member added or dropped, a metadata field, the order.
  EXPECT_FALSE(ChangesNothing(
      stored, Object::parse(R"({"metadata":{"name":"a","uid":"u"},"data":{"k":"2"}})")));
  EXPECT_FALSE(ChangesNothing(
      stored, Object::parse(R"({"metadata":{"name":"a","uid":"u"},"data":{"k":"1"},"x":1})")));
  EXPECT_FALSE(ChangesNothing(stored, Object::parse(R"({"metadata":{"name":"a","uid":"u"}})")));
  EXPECT_FALSE(ChangesNothing(
      stored, Object::parse(R"({"metadata":{"name":"a","uid":"v"},"data":{"k":"1"}})")));
  EXPECT_FALSE(
      ChangesNothing(stored, Object::parse(R"({"metadata":{"name":"a"},"data":{"k":"1"}})")));
  EXPECT_FALSE(ChangesNothing(
      stored, Object::parse(R"({"data":{"k":"1"},"metadata":{"name":"a","uid":"u"}})")));
  EXPECT_FALSE(ChangesNothing(stored, Object::parse("[1]")));
}

}  // namespace store_helpers_test
}  // namespace clusterd::store
