// FaultFeed: the diff of one node's (or any part of the view's) old vs new fault state, and the
// incremental refresh from cluster-info ConfigMaps published by a real fault centre (memory
// store, manual clock; events handed to the feed on the test thread, nothing sleeps).
#include <memory>
#include <string>

#include "cluster/fault_centre.h"
#include "cluster/fault_config_files.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "server/dashboard.h"
#include "store/memory/memory_store.h"
#include "unit/cluster/fault_test_util.h"

namespace clusterd::server {
namespace dashboard_feed_test {

FaultFeed::Entry Row(const std::string& node, const std::string& npu, const std::string& code,
                     const std::string& level) {
  FaultFeed::Entry e;
  e.node = node;
  e.npu = npu;
  e.code = code;
  e.level = level;
  e.source = "device";
  return e;
}

void Put(FaultFeed::State* state, const FaultFeed::Entry& e) {
  state->emplace(e.node + "|" + e.npu + "|" + e.code, e);
}

TEST(FaultFeedDiff, NothingChanged) {
  FaultFeed::State s;
  Put(&s, Row("n1", "Ascend910-0", "8C1F8608", "RestartRequest"));
  FaultFeed::Changes changes;
  FaultFeed::Diff(s, s, &changes);
  EXPECT_TRUE(changes.occur.empty());
  EXPECT_TRUE(changes.clear.empty());
}

TEST(FaultFeedDiff, AppearedChangedLevelAndCleared) {
  FaultFeed::State before, after;
  Put(&before, Row("n1", "Ascend910-0", "A", "RestartRequest"));
  Put(&before, Row("n1", "Ascend910-1", "B", "SubHealthFault"));
  Put(&before, Row("n1", "-", "C", "NotHandleFault"));
  Put(&after, Row("n1", "Ascend910-0", "A", "SeparateNPU"));     // level changed
  Put(&after, Row("n1", "-", "C", "NotHandleFault"));            // unchanged
  Put(&after, Row("n1", "Ascend910-3", "D", "RestartRequest"));  // appeared
  FaultFeed::Changes changes;
  FaultFeed::Diff(before, after, &changes);
  ASSERT_EQ(changes.occur.size(), 2u);
  EXPECT_EQ(changes.occur.at("n1|Ascend910-0|A").level, "SeparateNPU");
  EXPECT_EQ(changes.occur.at("n1|Ascend910-3|D").level, "RestartRequest");
  ASSERT_EQ(changes.clear.size(), 1u);
  EXPECT_EQ(changes.clear.at("n1|Ascend910-1|B").level, "SubHealthFault");
}

TEST(FaultFeedDiff, OnlyJobsOrSourceChangedIsNoEvent) {
  FaultFeed::State before, after;
  FaultFeed::Entry e = Row("n1", "Ascend910-0", "A", "RestartRequest");
  Put(&before, e);
  e.jobs = {"job-1"};
  e.source = "public";
  Put(&after, e);
  FaultFeed::Changes changes;
  FaultFeed::Diff(before, after, &changes);
  EXPECT_TRUE(changes.occur.empty());
  EXPECT_TRUE(changes.clear.empty());
}

TEST(FaultFeedDiff, AccumulatesAcrossNodesInKeyOrder) {
  FaultFeed::State a_before, a_after, b_before, b_after;
  Put(&a_after, Row("a", "x", "1", "SeparateNPU"));
  Put(&b_before, Row("a-1", "x", "1", "SeparateNPU"));
  Put(&b_after, Row("a-1", "y", "2", "RestartRequest"));
  FaultFeed::Changes changes;
  FaultFeed::Diff(a_before, a_after, &changes);
  FaultFeed::Diff(b_before, b_after, &changes);
  ASSERT_EQ(changes.occur.size(), 2u);
  // Whole-view key order ("a-1|..." sorts before "a|..."), whatever order the nodes came in.
  EXPECT_EQ(changes.occur.begin()->first, "a-1|y|2");
  ASSERT_EQ(changes.clear.size(), 1u);
  EXPECT_EQ(changes.clear.begin()->second.node, "a-1");
}

TEST(FaultFeedDiff, EverythingFromNothingAndBack) {
  FaultFeed::State none, some;
  Put(&some, Row("n2", "Ascend910-7", "A", "RestartNPU"));
  FaultFeed::Changes up, down;
  FaultFeed::Diff(none, some, &up);
  FaultFeed::Diff(some, none, &down);
  EXPECT_EQ(up.occur.size(), 1u);
  EXPECT_TRUE(up.clear.empty());
  EXPECT_TRUE(down.occur.empty());
  EXPECT_EQ(down.clear.size(), 1u);
}

constexpr int64_t kStart = 1718000100000;

class FaultFeedCentreTest : public ::testing::Test {
 protected:
  FaultFeedCentreTest() : clock_(absl::FromUnixMillis(kStart)), store_(MemOptions()) {}

  store::MemoryStore::Options MemOptions() {
    store::MemoryStore::Options o;
    o.clock = &clock_;
    return o;
  }

  // 12 healthy nodes over several device shards, the centre started and its view published.
  void SetUp() override {
    for (int i = 0; i < 12; ++i) Put(Node(i, false));
    cluster::FaultCentre::Options o;
    o.config = &config_files_;
    o.watch_store = false;
    o.shard_limit_bytes = 2000;
    o.write_burst = 1'000'000'000;  // flushed on a manual clock: the writer's bucket never binds
    centre_ = std::make_unique<cluster::FaultCentre>(store_, clock_, nullptr, o);
    ASSERT_TRUE(centre_->Start().ok());
    centre_->FlushWrites();
    feed_ = std::make_unique<FaultFeed>(store_, *centre_);
    for (size_t i = 0; i < centre_->DeviceShardCount(); ++i) Deliver(Shard(i));
  }

  static cluster::testing::Json Node(int i, bool faulty) {
    cluster::testing::NodeSpec s;
    s.node = "node-" + std::to_string(i);
    if (faulty) {
      s.faults = {
          cluster::testing::ChipFault("Ascend910-3", "SeparateNPU", {{"80E01801", kStart - 1000}})};
      s.unhealthy = {"Ascend910-3"};
    }
    return cluster::testing::DeviceInfoConfigMap(s);
  }
  void Put(const cluster::testing::Json& cm) {
    const store::ObjectKey key = store::KeyOf(store::kConfigMaps, cm);
    auto stored = store_.Get(key).ok() ? store_.Update(store::kConfigMaps, cm)
                                       : store_.Create(store::kConfigMaps, cm);
    ASSERT_TRUE(stored.ok()) << stored.status();
    if (centre_ != nullptr) {
      centre_->Observe(store::kConfigMaps,
                       store::WatchEvent{store::WatchEventType::kModified, *stored});
      centre_->controller().RunUntilIdleForTest();
      centre_->FlushWrites();
    }
  }
  static std::string Shard(size_t i) { return "cluster-info-device-" + std::to_string(i); }
  // The watch event of the ConfigMap as it is now.
  void Deliver(const std::string& cm_name) {
    auto cm = store_.Get({std::string(store::kConfigMaps), "mindx-dl", cm_name});
    ASSERT_TRUE(cm.ok()) << cm_name << ": " << cm.status();
    feed_->RefreshConfigMap(*cm, /*deleted=*/false);
  }
  // "<change> <node> <npu> <code>" of each entry after `seq_`; advances seq_.
  std::vector<std::string> NewEntries() {
    std::vector<std::string> out;
    for (const FaultFeed::Entry& e : feed_->Since(seq_, absl::ZeroDuration())) {
      out.push_back(e.change + " " + e.node + " " + e.npu + " " + e.code + " " + e.level);
      seq_ = e.seq;
    }
    return out;
  }

  ManualClock clock_;
  store::MemoryStore store_;
  cluster::FaultConfigFiles config_files_{{.data_dir = CLUSTERD_DATA_DIR}, clock_};
  std::unique_ptr<cluster::FaultCentre> centre_;
  std::unique_ptr<FaultFeed> feed_;
  uint64_t seq_ = 0;
};

TEST_F(FaultFeedCentreTest, OnlyTheNodesOfTheDeliveredConfigMapAreDiffed) {
  EXPECT_TRUE(NewEntries().empty());  // a healthy cluster
  const std::string shard1 = centre_->ShardOfNode("node-1");
  const std::string shard7 = centre_->ShardOfNode("node-7");
  ASSERT_NE(shard1, shard7);
  Put(Node(1, true));
  Put(Node(7, true));
  // Both are published, but only node-7's ConfigMap event arrived: only node-7 is looked at.
  Deliver(shard7);
  EXPECT_EQ(NewEntries(),
            std::vector<std::string>{"occur node-7 Ascend910-3 80E01801 SeparateNPU"});
  Deliver(shard7);  // the same content again: nothing changed
  EXPECT_TRUE(NewEntries().empty());
  Deliver(shard1);
  EXPECT_EQ(NewEntries(),
            std::vector<std::string>{"occur node-1 Ascend910-3 80E01801 SeparateNPU"});

  Put(Node(7, false));
  Deliver(shard7);
  EXPECT_EQ(NewEntries(),
            std::vector<std::string>{"clear node-7 Ascend910-3 80E01801 SeparateNPU"});
  // The incremental state matches a full diff of the view.
  feed_->Refresh();
  EXPECT_TRUE(NewEntries().empty());
}

TEST_F(FaultFeedCentreTest, ADeletedConfigMapRereadsItsNodes) {
  Put(Node(4, true));
  const std::string shard = centre_->ShardOfNode("node-4");
  Deliver(shard);
  EXPECT_EQ(NewEntries().size(), 1u);
  auto cm = store_.Get({std::string(store::kConfigMaps), "mindx-dl", shard});
  ASSERT_TRUE(cm.ok());
  // The view (the centre) still has the fault: re-read, nothing cleared.
  feed_->RefreshConfigMap(*cm, /*deleted=*/true);
  EXPECT_TRUE(NewEntries().empty());
  Put(Node(4, false));
  Deliver(shard);  // the feed forgot the entries: every node of the shard is re-read
  EXPECT_EQ(NewEntries(),
            std::vector<std::string>{"clear node-4 Ascend910-3 80E01801 SeparateNPU"});
}

// The feed's view at start is the fault centre's, not what the shards in the store say: it
// reads no shard while the informer replays them (at 50,000 nodes that read held every
// ConfigMap change back for 0.3 s after a restart). A shard's first change is diffed whole.
TEST_F(FaultFeedCentreTest, AtStartTheFeedHoldsTheCentresFaultsWithoutReadingTheShards) {
  Put(Node(3, true));
  // No shard in the store: the centre's writer has not written any yet.
  for (size_t i = 0; i < centre_->DeviceShardCount(); ++i) {
    ASSERT_TRUE(store_.Delete({std::string(store::kConfigMaps), "mindx-dl", Shard(i)}).ok());
  }
  FaultFeed started(store_, *centre_);
  ASSERT_TRUE(started.Start().ok());
  std::vector<std::string> entries;
  for (const FaultFeed::Entry& e : started.Since(0, absl::ZeroDuration())) {
    entries.push_back(e.change + " " + e.node + " " + e.npu + " " + e.code);
  }
  EXPECT_EQ(entries, std::vector<std::string>{"occur node-3 Ascend910-3 80E01801"});
  // A fault on another node: its shard's first change is diffed whole, and repeats nothing.
  const uint64_t seen = started.last_seq();
  Put(Node(5, true));
  auto shard =
      store_.Get({std::string(store::kConfigMaps), "mindx-dl", centre_->ShardOfNode("node-5")});
  ASSERT_TRUE(shard.ok()) << shard.status();
  started.RefreshConfigMap(*shard, /*deleted=*/false);
  entries.clear();
  for (const FaultFeed::Entry& e : started.Since(seen, absl::ZeroDuration())) {
    entries.push_back(e.change + " " + e.node + " " + e.npu + " " + e.code);
  }
  EXPECT_EQ(entries, std::vector<std::string>{"occur node-5 Ascend910-3 80E01801"});
  started.Stop();
}

TEST_F(FaultFeedCentreTest, AnUnreadableConfigMapFallsBackToTheWholeView) {
  Put(Node(2, true));
  Put(Node(9, true));
  auto cm = store_.Get({std::string(store::kConfigMaps), "mindx-dl", Shard(0)});
  ASSERT_TRUE(cm.ok());
  (*cm)["data"] = {{Shard(0), "{not json"}};
  feed_->RefreshConfigMap(*cm, /*deleted=*/false);
  EXPECT_EQ(NewEntries(),
            (std::vector<std::string>{"occur node-2 Ascend910-3 80E01801 SeparateNPU",
                                      "occur node-9 Ascend910-3 80E01801 SeparateNPU"}));
}

}  // namespace dashboard_feed_test
}  // namespace clusterd::server
