// FieldSelector (store/object_store.h) and the fields each resource may be selected by
// (CheckFieldSelector, store/admission.h): the API server's fieldSelector, as tables.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/admission.h"
#include "store/object_store.h"

namespace clusterd::store {
namespace field_selector_test {

using ::testing::HasSubstr;

Object Pod(std::string_view name, std::string_view node, std::string_view phase) {
  Object o;
  o["apiVersion"] = "v1";
  o["kind"] = "Pod";
  o["metadata"]["name"] = name;
  o["metadata"]["namespace"] = "default";
  if (!node.empty()) o["spec"]["nodeName"] = node;
  if (!phase.empty()) o["status"]["phase"] = phase;
  return o;
}

TEST(StoreFieldSelector, ParsesAndPrintsBack) {
  struct Case {
    std::string text;
    std::string printed;
  };
  const Case cases[] = {
      {"", ""},
      {"  ", ""},
      {"spec.nodeName=node-1", "spec.nodeName=node-1"},
      {"spec.nodeName==node-1", "spec.nodeName=node-1"},
      {"status.phase!=Failed", "status.phase!=Failed"},
      {"a=b,c==d,e!=f", "a=b,c=d,e!=f"},
      {" a = b , c!=d ", "a=b,c!=d"},
      {"a=b,,c=d", "a=b,c=d"},  // as Kubernetes: empty terms are skipped
      {"spec.nodeName=", "spec.nodeName="},
      {"a=b\\=c", "a=b\\=c"},
      {"a=x\\,y\\=z\\\\", "a=x\\,y\\=z\\\\"},
      {"a!=", "a!="},
  };
  for (const Case& c : cases) {
    auto parsed = FieldSelector::Parse(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status();
    EXPECT_EQ(parsed->ToString(), c.printed) << c.text;
    EXPECT_EQ(parsed->Empty(), c.printed.empty()) << c.text;
    auto again = FieldSelector::Parse(parsed->ToString());
    ASSERT_TRUE(again.ok()) << c.text;
    EXPECT_EQ(again->ToString(), c.printed) << c.text;
  }
  auto escaped = FieldSelector::Parse("metadata.name=x\\,y");
  ASSERT_TRUE(escaped.ok());
  ASSERT_EQ(escaped->requirements().size(), 1u);
  EXPECT_EQ(escaped->requirements()[0].value, "x,y");
}

TEST(StoreFieldSelector, RejectsMalformedSelectorsWithTheTermAndTheSyntax) {
  // As Kubernetes: '\\', ',' and '=' in a value must be escaped, and nothing else may be.
  for (const char* bad :
       {"a", "spec.nodeName", "=b", "a=b,c", "a=x\\y", "a=x\\", "!a", "a=b=c", "a!==b"}) {
    auto parsed = FieldSelector::Parse(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("field=value")) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr(bad)) << bad;
  }
}

TEST(StoreFieldSelector, MatchesTheDottedPathAsAString) {
  struct Case {
    std::string selector;
    Object object;
    bool matches;
  };
  Object labelled = Pod("p", "node-1", "Running");
  labelled["metadata"]["labels"]["app"] = "x";
  Object numeric = Pod("p", "", "");
  numeric["spec"]["nodeName"] = 7;
  const Case cases[] = {
      {"", Object::object(), true},
      {"spec.nodeName=node-1", Pod("p", "node-1", "Running"), true},
      {"spec.nodeName=node-1", Pod("p", "node-2", "Running"), false},
      {"spec.nodeName=node-1", Pod("p", "", "Running"), false},
      {"spec.nodeName==node-1", Pod("p", "node-1", ""), true},
      {"spec.nodeName!=node-1", Pod("p", "node-2", ""), true},
      {"spec.nodeName!=node-1", Pod("p", "", ""), true},
      {"spec.nodeName!=node-1", Pod("p", "node-1", ""), false},
      // An absent field reads as "": the pods not bound to a node.
      {"spec.nodeName=", Pod("p", "", "Pending"), true},
      {"spec.nodeName=", Pod("p", "node-1", "Pending"), false},
      // Not a string reads as "" too.
      {"spec.nodeName=", numeric, true},
      {"status.phase=Running,spec.nodeName=node-1", Pod("p", "node-1", "Running"), true},
      {"status.phase=Running,spec.nodeName=node-1", Pod("p", "node-1", "Pending"), false},
      {"metadata.name=p,metadata.namespace=default", Pod("p", "", ""), true},
      {"metadata.namespace=other", Pod("p", "", ""), false},
      {"metadata.labels.app=x", labelled, true},
      {"metadata.name.deeper=", Pod("p", "", ""), true},
  };
  for (const Case& c : cases) {
    auto parsed = FieldSelector::Parse(c.selector);
    ASSERT_TRUE(parsed.ok()) << c.selector;
    EXPECT_EQ(parsed->Matches(c.object), c.matches) << c.selector << " on " << c.object.dump();
  }
}

TEST(StoreFieldSelector, EqualSelectsOneValueWithoutEscaping) {
  FieldSelector s = FieldSelector::Equal("metadata.name", "a,b=c");
  EXPECT_EQ(s.ToString(), "metadata.name=a\\,b\\=c");
  EXPECT_TRUE(s.Matches(Pod("a,b=c", "", "")));
  EXPECT_FALSE(s.Matches(Pod("a", "", "")));
  EXPECT_EQ(FieldSelector::Parse(s.ToString())->ToString(), s.ToString());
}

TEST(StoreFieldSelector, EachResourceIsSelectableByTheApiServersFields) {
  struct Case {
    std::string_view resource;
    std::string selector;
    std::string unsupported;  // empty: accepted
  };
  const Case cases[] = {
      {kPods, "metadata.name=a,metadata.namespace=b", ""},
      {kPods, "spec.nodeName=n,status.phase!=Failed", ""},
      {kPods, "spec.hostname=x", "spec.hostname"},
      {kConfigMaps, "metadata.name=a,metadata.namespace=b", ""},
      {kConfigMaps, "spec.nodeName=n", "spec.nodeName"},
      {kConfigMaps, "data.k=v", "data.k"},
      {kPodGroups, "metadata.namespace=b", ""},
      {kEvents, "metadata.name=a", ""},
      {kLeases, "metadata.name=a,status.phase=x", "status.phase"},
      // Cluster-scoped: no namespace to select by, as the server answers for nodes.
      {kNodes, "metadata.name=a", ""},
      {kNodes, "metadata.namespace=a", "metadata.namespace"},
  };
  for (const Case& c : cases) {
    auto fields = FieldSelector::Parse(c.selector);
    ASSERT_TRUE(fields.ok()) << c.selector;
    absl::Status s = CheckFieldSelector(c.resource, *fields);
    if (c.unsupported.empty()) {
      EXPECT_TRUE(s.ok()) << c.resource << " " << c.selector << ": " << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.resource << " " << c.selector;
      EXPECT_THAT(s.message(), HasSubstr("field label not supported: " + c.unsupported));
    }
  }
}

TEST(StoreFieldSelector, ReadFilterChecksTheNamespaceThenTheFields) {
  EXPECT_TRUE(CheckReadFilter(kPods, "default", FieldSelector::Equal("spec.nodeName", "n")).ok());
  EXPECT_EQ(CheckReadFilter(kNodes, "default", {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckReadFilter("widgets", "", {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckReadFilter(kConfigMaps, "", FieldSelector::Equal("spec.nodeName", "n")).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace field_selector_test
}  // namespace clusterd::store
