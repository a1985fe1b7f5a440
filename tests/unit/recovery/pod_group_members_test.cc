// PodGroupMembers: the pods of a PodGroup from the pod watch, read fresh from the store.

#include "recovery/pod_group_members.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace clusterd::recovery {
namespace {

using ::testing::ElementsAre;

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

class PodGroupMembersTest : public ::testing::Test {
 protected:
  void Put(const std::string& name, const std::string& group, bool tell = true) {
    store::Object pod = Pod(name, group);
    auto existing = store_.Get({"pods", "ns", name});
    auto written = existing.ok() ? store_.Update("pods", pod) : store_.Create("pods", pod);
    ASSERT_TRUE(written.ok()) << written.status();
    if (tell) {
      members_.OnPodEvent(
          {existing.ok() ? store::WatchEventType::kModified : store::WatchEventType::kAdded,
           *written});
    }
  }
  void Remove(const std::string& name, bool tell = true) {
    auto existing = store_.Get({"pods", "ns", name});
    ASSERT_TRUE(existing.ok());
    ASSERT_TRUE(store_.Delete({"pods", "ns", name}).ok());
    if (tell) members_.OnPodEvent({store::WatchEventType::kDeleted, *existing});
  }

  store::MemoryStore store_;
  PodGroupMembers members_{store_};
};

TEST_F(PodGroupMembersTest, PodsTheWatchHasNotDeliveredYetAreFoundByTheFirstRead) {
  Put("a-0", "pg-a", /*tell=*/false);
  Put("a-1", "pg-a", /*tell=*/false);
  Put("b-0", "pg-b", /*tell=*/false);
  Put("loose", "", /*tell=*/false);
  EXPECT_THAT(Names(members_.PodsOf("ns", "pg-a")), ElementsAre("a-0", "a-1"));
  EXPECT_THAT(Names(members_.PodsOf("ns", "pg-b")), ElementsAre("b-0"));
  EXPECT_TRUE(members_.PodsOf("other", "pg-a")->empty());
}

TEST_F(PodGroupMembersTest, FollowsTheWatchAfterwards) {
  Put("a-0", "pg-a");
  EXPECT_THAT(Names(members_.PodsOf("ns", "pg-a")), ElementsAre("a-0"));
  Put("a-1", "pg-a");
  EXPECT_THAT(Names(members_.PodsOf("ns", "pg-a")), ElementsAre("a-0", "a-1"));
  Remove("a-0");
  EXPECT_THAT(Names(members_.PodsOf("ns", "pg-a")), ElementsAre("a-1"));
  EXPECT_EQ(members_.KnownNames("ns", "pg-a"), 1u);
  // The view reads the pod as it is now, not as the event carried it.
  store::Object pod = *store_.Get({"pods", "ns", "a-1"});
  pod["metadata"]["labels"]["fault-type"] = "software";
  ASSERT_TRUE(store_.Update("pods", pod).ok());
  auto pods = members_.PodsOf("ns", "pg-a");
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0]["metadata"]["labels"]["fault-type"], "software");
}

TEST_F(PodGroupMembersTest, ANameLeftBehindNeverPutsAWrongPodInTheGroup) {
  Put("a-0", "pg-a");
  ASSERT_EQ(members_.PodsOf("ns", "pg-a")->size(), 1u);
  // Deleted without the watch telling (an event still on its way): skipped, not an error.
  Remove("a-0", /*tell=*/false);
  EXPECT_TRUE(members_.PodsOf("ns", "pg-a")->empty());
  // Re-created under the same name for another group: it belongs to that group only.
  Put("a-0", "pg-b");
  EXPECT_TRUE(members_.PodsOf("ns", "pg-a")->empty());
  EXPECT_THAT(Names(members_.PodsOf("ns", "pg-b")), ElementsAre("a-0"));
}

TEST_F(PodGroupMembersTest, EventsWithoutAGroupOrWithAMalformedOneAreIgnored) {
  store::Object odd = Pod("odd", "");
  odd["metadata"]["annotations"] = "not an object";
  members_.OnPodEvent({store::WatchEventType::kAdded, odd});
  odd["metadata"]["annotations"] = {{std::string(kGroupNameAnnotation), 42}};
  members_.OnPodEvent({store::WatchEventType::kAdded, odd});
  members_.OnPodEvent({store::WatchEventType::kAdded, store::Object::array()});
  EXPECT_EQ(PodGroupOf(odd), "");
  EXPECT_TRUE(members_.PodsOf("ns", "42")->empty());
}

}  // namespace
}  // namespace clusterd::recovery
