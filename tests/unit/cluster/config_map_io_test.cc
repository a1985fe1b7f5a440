#include "cluster/config_map_io.h"

#include <atomic>

#include "gtest/gtest.h"
#include "store/memory/memory_store.h"
#include "unit/forwarding_store.h"

namespace clusterd::cluster {
namespace config_map_io_test {

// Counts the creates and updates the store refused as AlreadyExists / NotFound: on the kube
// store each is a request to the API server that wrote nothing.
class CountingStore final : public clusterd::testing::ForwardingStore {
 public:
  CountingStore() : ForwardingStore(memory_) {}
  std::atomic<int> writes{0};
  std::atomic<int> refused{0};

  absl::StatusOr<store::Object> Create(std::string_view r, store::Object o) override {
    ++writes;
    auto created = ForwardingStore::Create(r, std::move(o));
    if (absl::IsAlreadyExists(created.status())) ++refused;
    return created;
  }
  absl::StatusOr<store::Object> Update(std::string_view r, store::Object o) override {
    ++writes;
    auto updated = ForwardingStore::Update(r, std::move(o));
    if (absl::IsNotFound(updated.status())) ++refused;
    return updated;
  }

 private:
  store::MemoryStore memory_;  // bound by the base before it is built; used only afterwards
};

const store::ObjectKey kKey{"configmaps", "mindx-dl", "cluster-info-device-0"};

// The first write of a cluster-info shard (and of statistic-fault-info, the goodput account...)
// was an update the store refused, then a create: two API requests where one does.
TEST(WriteWholeConfigMap, AMissingConfigMapIsCreatedWithOneWrite) {
  CountingStore store;
  ASSERT_TRUE(WriteWholeConfigMap(store, "mindx-dl", "cluster-info-device-0",
                                  {{"cluster-info-device-0", "{}"}}, {{"app", "x"}})
                  .ok());
  EXPECT_EQ(store.writes.load(), 1);
  EXPECT_EQ(store.refused.load(), 0);
  auto cm = store.Get(kKey);
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ((*cm)["data"]["cluster-info-device-0"], "{}");
  EXPECT_EQ((*cm)["metadata"]["labels"]["app"], "x");
}

TEST(WriteWholeConfigMap, AnExistingConfigMapIsReplacedWithOneWrite) {
  CountingStore store;
  ASSERT_TRUE(
      WriteWholeConfigMap(store, "mindx-dl", "cluster-info-device-0", {{"old", "1"}}, {}).ok());
  ASSERT_TRUE(
      WriteWholeConfigMap(store, "mindx-dl", "cluster-info-device-0", {{"new", "2"}}, {}).ok());
  EXPECT_EQ(store.writes.load(), 2);
  EXPECT_EQ(store.refused.load(), 0);
  auto cm = store.Get(kKey);
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ((*cm)["data"], (store::Object{{"new", "2"}}));
}

}  // namespace config_map_io_test
}  // namespace clusterd::cluster
