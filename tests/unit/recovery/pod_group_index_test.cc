// The pod informer's PodGroup index and PodsOfGroup: the pods of a PodGroup named by the index,
// read fresh from the store.

#include "recovery/pod_group_index.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/informer.h"
#include "store/memory/memory_store.h"

namespace clusterd::recovery {
namespace pod_group_index_test {

using ::testing::ElementsAre;

constexpr absl::Duration kDeadline = absl::Seconds(10);  // only reached by a failing test

store::Object Pod(const std::string& name, const std::string& group) {
  store::Object pod = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", "ns"}}}};
  if (!group.empty()) {
    pod["metadata"]["annotations"][std::string(kGroupNameAnnotation)] = group;
  }
  return pod;
}

std::vector<std::string> Names(const absl::StatusOr<std::vector<store::Object>>& pods) {
  std::vector<std::string> out;
  if (!pods.ok()) return {pods.status().ToString()};
  for (const store::Object& pod : *pods) out.push_back(store::NameOf(pod));
  return out;
}

class PodGroupIndexTest : public ::testing::Test {
 protected:
  PodGroupIndexTest() { EXPECT_TRUE(pods_.AddIndex(kPodGroupIndex, PodGroupIndexValues).ok()); }

  // Writes the pod; with `tell`, waits until the informer delivered the write.
  void Put(const std::string& name, const std::string& group, bool tell = true) {
    store::Object pod = Pod(name, group);
    auto existing = store_.Get({"pods", "ns", name});
    auto written = existing.ok() ? store_.Update("pods", pod) : store_.Create("pods", pod);
    ASSERT_TRUE(written.ok()) << written.status();
    if (!tell) return;
    ASSERT_TRUE(pods_.WaitForVersion(store::ResourceVersionOf(*written), kDeadline));
  }
  void Remove(const std::string& name, bool tell = true) {
    ASSERT_TRUE(store_.Delete({"pods", "ns", name}).ok());
    if (!tell) return;
    // The deletion took the store's next version: learn it from a later write.
    auto marker = store_.Create("pods", Pod("marker-" + name, ""));
    ASSERT_TRUE(marker.ok());
    ASSERT_TRUE(pods_.WaitForVersion(store::ResourceVersionOf(*marker), kDeadline));
  }
  absl::StatusOr<std::vector<store::Object>> PodsOf(const std::string& ns,
                                                    const std::string& group) {
    return PodsOfGroup(pods_, store_, ns, group);
  }

  store::MemoryStore store_;
  store::SharedInformer pods_{store_, store::kPods};
};

TEST_F(PodGroupIndexTest, PodsThatExistedWhenTheInformerStartedAreFound) {
  Put("a-0", "pg-a", /*tell=*/false);
  Put("a-1", "pg-a", /*tell=*/false);
  Put("b-0", "pg-b", /*tell=*/false);
  Put("loose", "", /*tell=*/false);
  ASSERT_TRUE(pods_.Start().ok());
  EXPECT_THAT(Names(PodsOf("ns", "pg-a")), ElementsAre("a-0", "a-1"));
  EXPECT_THAT(Names(PodsOf("ns", "pg-b")), ElementsAre("b-0"));
  EXPECT_TRUE(PodsOf("other", "pg-a")->empty());
}

TEST_F(PodGroupIndexTest, FollowsTheWatchAfterwards) {
  ASSERT_TRUE(pods_.Start().ok());
  Put("a-0", "pg-a");
  EXPECT_THAT(Names(PodsOf("ns", "pg-a")), ElementsAre("a-0"));
  Put("a-1", "pg-a");
  EXPECT_THAT(Names(PodsOf("ns", "pg-a")), ElementsAre("a-0", "a-1"));
  Remove("a-0");
  EXPECT_THAT(Names(PodsOf("ns", "pg-a")), ElementsAre("a-1"));
  EXPECT_EQ(pods_.ByIndex(kPodGroupIndex, "ns/pg-a").size(), 1u);
  // The view reads the pod as it is now, not as the event carried it.
  store::Object pod = *store_.Get({"pods", "ns", "a-1"});
  pod["metadata"]["labels"]["fault-type"] = "software";
  ASSERT_TRUE(store_.Update("pods", pod).ok());
  auto pods = PodsOf("ns", "pg-a");
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0]["metadata"]["labels"]["fault-type"], "software");
}

TEST_F(PodGroupIndexTest, ANameLeftBehindNeverPutsAWrongPodInTheGroup) {
  ASSERT_TRUE(pods_.Start().ok());
  Put("a-0", "pg-a");
  ASSERT_EQ(PodsOf("ns", "pg-a")->size(), 1u);
  // Deleted, its event perhaps still on the way: skipped, not an error.
  Remove("a-0", /*tell=*/false);
  EXPECT_TRUE(PodsOf("ns", "pg-a")->empty());
  // Re-created under the same name for another group: it belongs to that group only.
  Put("a-0", "pg-b");
  EXPECT_TRUE(PodsOf("ns", "pg-a")->empty());
  EXPECT_THAT(Names(PodsOf("ns", "pg-b")), ElementsAre("a-0"));
}

TEST_F(PodGroupIndexTest, PodsWithoutAGroupOrWithAMalformedOneAreNotIndexed) {
  store::Object odd = Pod("odd", "");
  odd["metadata"]["annotations"] = "not an object";
  EXPECT_TRUE(PodGroupIndexValues(odd).empty());
  odd["metadata"]["annotations"] = {{std::string(kGroupNameAnnotation), 42}};
  EXPECT_TRUE(PodGroupIndexValues(odd).empty());
  EXPECT_TRUE(PodGroupIndexValues(store::Object::array()).empty());
  EXPECT_EQ(PodGroupOf(odd), "");
  EXPECT_THAT(PodGroupIndexValues(Pod("p", "pg")), ElementsAre("ns/pg"));
  ASSERT_TRUE(pods_.Start().ok());
  EXPECT_TRUE(PodsOf("ns", "42")->empty());
}

}  // namespace pod_group_index_test
}  // namespace clusterd::recovery
