// The simulator's scheduler on the memory store: binding, spreading, avoiding faulty NPUs, and
// the recovery flow's requests (pod exit, needVolcanoOpe=delete, PodGroup pause).
#include "sim/mini_scheduler.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/device_info.h"
#include "store/object_store.h"

namespace clusterd::sim {
namespace mini_scheduler_test {

class MiniSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::OpenStore("memory");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    cluster_.nodes = 3;
    cluster_.npus_per_node = 8;
    JobSpec a;
    a.name = "a";
    a.pods = 2;
    a.npus_per_pod = 4;
    jobs_ = {a};
  }
  std::unique_ptr<MiniScheduler> Make() {
    return std::make_unique<MiniScheduler>(*store_, clock_, cluster_, jobs_, nullptr);
  }
  void MarkUnhealthy(int node, const std::string& npus) {
    model::DeviceInfoCfg cfg;
    cfg.device_info.device_list["huawei.com/Ascend910-Unhealthy"] = npus;
    store::Object cm = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata",
         {{"name", absl::StrCat("mindx-dl-deviceinfo-node-", node)}, {"namespace", "kube-system"}}},
        {"data", {{"DeviceInfoCfg", model::RenderDeviceInfoCfg(cfg)}}}};
    ASSERT_TRUE(store_->Create(store::kConfigMaps, cm).ok());
  }

  ManualClock clock_;
  std::unique_ptr<store::ObjectStore> store_;
  ClusterSpec cluster_;
  std::vector<JobSpec> jobs_;
};

TEST_F(MiniSchedulerTest, CreatesObjectsAndSpreadsPods) {
  auto s = Make();
  ASSERT_TRUE(s->Start().ok());
  EXPECT_TRUE(store_->Get({"podgroups", "default", "a-pg"}).ok());
  EXPECT_TRUE(store_->Get({"ascendjobs", "default", "a"}).ok());
  EXPECT_TRUE(store_->Get({"configmaps", "default", "reset-config-a"}).ok());
  EXPECT_TRUE(store_->Get({"nodes", "", "node-3"}).ok());
  auto placements = s->Placements("a");
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[0].node_index, 1);
  EXPECT_EQ(placements[1].node_index, 2);  // spread: the emptiest node
  EXPECT_EQ(placements[0].npus, (std::vector<int>{0, 1, 2, 3}));
  auto pod = store_->Get({"pods", "default", placements[1].name});
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["metadata"]["annotations"]["hccl/rankIndex"], "1");
  s->Stop();
}

TEST_F(MiniSchedulerTest, ExitedPodMovesToAHealthyNode) {
  MarkUnhealthy(3, "Ascend910-0");
  auto s = Make();
  ASSERT_TRUE(s->Start().ok());
  s->Stop();  // drive Sync by hand
  s->PodExited("a", 0);
  s->SyncNow();
  auto placements = s->Placements("a");
  ASSERT_EQ(placements.size(), 2u);
  // node-1 was left, node-3 has a fault: node-2 (4 NPUs free) takes rank 0.
  EXPECT_EQ(placements[0].node_index, 2);
  EXPECT_EQ(placements[0].npus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(s->reschedules(), 1);
}

TEST_F(MiniSchedulerTest, UnhealthyNpusAreNeverBound) {
  MarkUnhealthy(1, "Ascend910-0,Ascend910-1");
  MarkUnhealthy(2, "Ascend910-2");
  auto s = Make();
  ASSERT_TRUE(s->Start().ok());
  s->Stop();
  auto placements = s->Placements("a");
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[0].node_index, 3);
  for (const PodPlacement& p : placements) {
    if (p.node_index == 1) {
      EXPECT_EQ(std::count(p.npus.begin(), p.npus.end(), 0), 0);
    }
    if (p.node_index == 2) {
      EXPECT_EQ(std::count(p.npus.begin(), p.npus.end(), 2), 0);
    }
  }
}

TEST_F(MiniSchedulerTest, PauseReschedulesTheWholeJobOnce) {
  auto s = Make();
  ASSERT_TRUE(s->Start().ok());
  s->Stop();
  const auto before = s->Placements("a");
  ASSERT_TRUE(store_
                  ->Patch({"podgroups", "default", "a-pg"},
                          {{"metadata", {{"labels", {{"process-recover-enable", "pause"}}}}}})
                  .ok());
  s->SyncNow();
  s->SyncNow();  // still paused: not again
  EXPECT_EQ(s->job_reschedules(), 1);
  const auto after = s->Placements("a");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_NE(after[0].uid, before[0].uid);
  EXPECT_NE(after[1].uid, before[1].uid);
}

TEST_F(MiniSchedulerTest, NeedVolcanoOpeDeleteReplacesThePod) {
  auto s = Make();
  ASSERT_TRUE(s->Start().ok());
  s->Stop();
  const auto before = s->Placements("a");
  ASSERT_TRUE(store_
                  ->Patch({"pods", "default", before[1].name},
                          {{"metadata", {{"annotations", {{"needVolcanoOpe", "delete"}}}}}})
                  .ok());
  s->SyncNow();
  s->SyncNow();
  const auto after = s->Placements("a");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_NE(after[1].uid, before[1].uid);
  EXPECT_NE(after[1].node_index, before[1].node_index);
}

TEST_F(MiniSchedulerTest, HotSwitchBackupPodIsCreatedAndTakesOver) {
  auto s = Make();
  ASSERT_TRUE(s->Start().ok());
  s->Stop();
  const auto before = s->Placements("a");
  ASSERT_TRUE(store_
                  ->Patch({"pods", "default", before[1].name},
                          {{"metadata", {{"annotations", {{"needOperatorOpe", "create"}}}}}})
                  .ok());
  s->SyncNow();
  auto old_pod = store_->Get({"pods", "default", before[1].name});
  ASSERT_TRUE(old_pod.ok());
  const std::string backup = (*old_pod)["metadata"]["annotations"].value("backupNewPodName", "");
  ASSERT_FALSE(backup.empty());
  auto backup_pod = store_->Get({"pods", "default", backup});
  ASSERT_TRUE(backup_pod.ok());
  EXPECT_EQ((*backup_pod)["metadata"]["annotations"]["podType"], "backup");
  EXPECT_EQ((*backup_pod)["status"]["phase"], "Pending");
  clock_.Advance(absl::Seconds(2));
  s->SyncNow();
  EXPECT_EQ((*store_->Get({"pods", "default", backup}))["status"]["phase"], "Running");
  // The migration deletes the old pod; the backup takes over its rank.
  ASSERT_TRUE(store_->Delete({"pods", "default", before[1].name}).ok());
  s->SyncNow();
  const auto after = s->Placements("a");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1].name, backup);
}

}  // namespace mini_scheduler_test
}  // namespace clusterd::sim
