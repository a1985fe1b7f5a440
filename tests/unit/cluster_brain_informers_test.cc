// The assembled brain over a memory store: its rooms share one watch per resource through the
// brain's informers.

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "forwarding_store.h"
#include "gtest/gtest.h"
#include "server/cluster_brain.h"
#include "store/memory/memory_store.h"

namespace clusterd::server {
namespace cluster_brain_informers_test {

class WatchCountingStore final : public clusterd::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<std::unique_ptr<store::WatchHandle>> Watch(std::string_view resource,
                                                            const store::WatchOptions& options,
                                                            store::WatchHandler handler) override {
    {
      absl::MutexLock lock(&mu_);
      ++watches_[std::string(resource)];
    }
    return ForwardingStore::Watch(resource, options, std::move(handler));
  }
  int Watches(std::string_view resource) {
    absl::MutexLock lock(&mu_);
    return watches_[std::string(resource)];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int> watches_ ABSL_GUARDED_BY(mu_);
};

TEST(ClusterBrainInformers, EveryResourceIsWatchedOnceForEveryRoomThatReadsIt) {
  store::MemoryStore memory;
  WatchCountingStore store(memory);
  ManualClock clock;
  ClusterBrain brain(store, clock);
  ASSERT_TRUE(brain.Start().ok());
  // The job registry and the recovery bridge read pods and PodGroups; only the informer watches.
  EXPECT_EQ(store.Watches(store::kPods), 1);
  EXPECT_EQ(store.Watches(store::kPodGroups), 1);
  // Nodes: the registry and the fault centre; ConfigMaps: the fault centre (device-info,
  // node-info, public faults, clusterd-config-cm), the global rank-table feed and the slow-node
  // controller. One informer each.
  EXPECT_EQ(store.Watches(store::kNodes), 1);
  EXPECT_EQ(store.Watches(store::kConfigMaps), 1);
  EXPECT_TRUE(brain.informers().For(store::kPods).HasSynced());
  EXPECT_TRUE(brain.informers().For(store::kConfigMaps).HasSynced());
  brain.Stop();
}

}  // namespace cluster_brain_informers_test
}  // namespace clusterd::server
