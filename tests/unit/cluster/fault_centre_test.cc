// The fault centre over a memory store with a manual clock: ConfigMaps in, cluster-info shards,
// statistic-fault-info, manual separation and job fault snapshots out. Store events are fed
// through Observe and keys processed on the test thread (controller().RunUntilIdleForTest()), so
// nothing sleeps.
#include "cluster/fault_centre.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "cluster/fault_config_files.h"
#include "cluster/job_registry.h"
#include "common/clock.h"
#include "common/json_util.h"
#include "common/metrics.h"
#include "common/parallel_for.h"
#include "fault_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job_test_objects.h"
#include "store/memory/memory_store.h"

namespace clusterd::cluster {
namespace fault_centre_test {

using testing::ChipFault;
using testing::DeviceInfoConfigMap;
using testing::Json;
using testing::NodeSpec;

constexpr int64_t kStart = 1718000100000;

class RecordingSink final : public JobFaultSink {
 public:
  void OnJobFaults(const JobFaultRanks& f) override { got.push_back(f); }
  void OnJobGone(const std::string& id) override { gone.push_back(id); }
  std::vector<JobFaultRanks> got;
  std::vector<std::string> gone;
};

uint64_t Rejected(const std::string& kind, const std::string& reason) {
  return MetricsRegistry::Default()
      .GetCounter("clusterd_fault_centre_rejected_total", "", {{"kind", kind}, {"reason", reason}})
      .Value();
}

// The tests flush on a manual clock whenever they look at cluster-info: the writer's bucket
// never binds there (its pacing has a test of its own, WriterPacesShardWritesOnTheClock).
constexpr int64_t kUnlimitedWrites = 1'000'000'000;

class FaultCentreTest : public ::testing::Test {
 protected:
  FaultCentreTest() : clock_(absl::FromUnixMillis(kStart)), store_(MemOptions()) {}

  store::MemoryStore::Options MemOptions() {
    store::MemoryStore::Options o;
    o.clock = &clock_;
    return o;
  }

  void StartCentre(size_t shard_limit = ClusterInfoShards::kDefaultLimitBytes,
                   const JobRegistry* registry = nullptr) {
    FaultCentre::Options o;
    o.config = Files({.data_dir = CLUSTERD_DATA_DIR});
    o.watch_store = false;
    o.shard_limit_bytes = shard_limit;
    o.write_burst = kUnlimitedWrites;
    centre_ = std::make_unique<FaultCentre>(store_, clock_, registry, o);
    centre_->AddJobFaultSink(&sink_);
    ASSERT_TRUE(centre_->Start().ok());
    centre_->FlushWrites();
  }

  absl::Status StartWith(FaultCentre::Options o, const JobRegistry* registry = nullptr) {
    o.watch_store = false;
    o.write_burst = kUnlimitedWrites;
    centre_ = std::make_unique<FaultCentre>(store_, clock_, registry, o);
    centre_->AddJobFaultSink(&sink_);
    return centre_->Start();
  }

  // Writes `object` to the store and tells the centre, as the watch would.
  void Put(std::string_view resource, Json object) {
    const store::ObjectKey key = store::KeyOf(resource, object);
    absl::StatusOr<store::Object> stored =
        store_.Get(key).ok() ? store_.Update(resource, object) : store_.Create(resource, object);
    ASSERT_TRUE(stored.ok()) << stored.status();
    if (centre_ != nullptr) {
      centre_->Observe(resource, store::WatchEvent{store::WatchEventType::kModified, *stored});
    }
  }
  void Remove(std::string_view resource, const Json& object) {
    ASSERT_TRUE(store_.Delete(store::KeyOf(resource, object)).ok());
    centre_->Observe(resource, store::WatchEvent{store::WatchEventType::kDeleted, object});
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    centre_->controller().RunUntilIdleForTest();
  }
  std::string Cm(const std::string& ns, const std::string& name, const std::string& key) {
    auto cm = store_.Get({"configmaps", ns, name});
    if (!cm.ok()) return "<missing>";
    return StringOr(cm->at("data"), key, "<no key>");
  }
  std::string ClusterInfo(const std::string& name) { return Cm("mindx-dl", name, name); }

  ManualClock clock_;
  store::MemoryStore store_;
  RecordingSink sink_;
  // The configuration files the centre reads (production's source); before centre_, which
  // holds a pointer to them.
  FaultConfigSource* Files(FaultConfigFiles::Options files) {
    config_files_ = std::make_unique<FaultConfigFiles>(std::move(files), clock_);
    return config_files_.get();
  }
  std::unique_ptr<FaultConfigFiles> config_files_;
  std::unique_ptr<FaultCentre> centre_;
};

NodeSpec FaultyNode(const std::string& node, const std::string& npu = "Ascend910-3",
                    const std::string& level = "SeparateNPU",
                    const std::string& code = "80E01801") {
  NodeSpec s;
  s.node = node;
  s.faults = {ChipFault(npu, level, {{code, kStart - 1000}})};
  s.unhealthy = {npu};
  return s;
}

TEST_F(FaultCentreTest, InitialViewIsPublishedFromTheStore) {
  NodeSpec healthy;
  healthy.node = "node-1";
  Put("configmaps", DeviceInfoConfigMap(healthy));
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-2")));
  StartCentre();
  const std::string shard = ClusterInfo("cluster-info-device-0");
  EXPECT_NE(shard.find("\"mindx-dl-deviceinfo-node-1\":"), std::string::npos);
  EXPECT_NE(shard.find("80E01801"), std::string::npos);
  EXPECT_EQ(ClusterInfo("cluster-info-node-cm"), "");
  EXPECT_EQ(ClusterInfo("cluster-info-switch-0"), "<missing>");  // no switch record yet
  auto cm = store_.Get({"configmaps", "mindx-dl", "cluster-info-device-0"});
  EXPECT_EQ(cm->at("metadata").at("labels").at("mx-consumer-volcano"), "true");
  EXPECT_EQ(centre_->DeviceNodeCount(), 2u);
}

// The initial view decodes every device-info, then runs every node's pipelines, through the
// runner; the results are published in node order whatever order the runner took them in.
TEST_F(FaultCentreTest, TheInitialViewDecodesAndRunsTheNodesThroughTheGivenParallelRunner) {
  NodeSpec healthy;
  healthy.node = "node-1";
  Put("configmaps", DeviceInfoConfigMap(healthy));
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-2")));
  FaultCentre::Options o;
  o.config = Files({.data_dir = CLUSTERD_DATA_DIR});
  std::vector<size_t> runs;
  o.parallel_for = [&runs](size_t n, const std::function<void(size_t)>& fn) {
    runs.push_back(n);
    for (size_t i = n; i > 0; --i) fn(i - 1);  // another order than the items'
  };
  ASSERT_TRUE(StartWith(o).ok());
  centre_->FlushWrites();
  EXPECT_EQ(runs, (std::vector<size_t>{2, 2}));  // decoding, then the pipelines
  const std::string shard = ClusterInfo("cluster-info-device-0");
  EXPECT_LT(shard.find("\"mindx-dl-deviceinfo-node-1\":"),
            shard.find("\"mindx-dl-deviceinfo-node-2\":"));
  EXPECT_NE(shard.find("\"mindx-dl-deviceinfo-node-1\":"), std::string::npos);
  EXPECT_NE(shard.find("80E01801"), std::string::npos);
  EXPECT_EQ(centre_->DeviceNodeCount(), 2u);
}

TEST_F(FaultCentreTest, AFaultOnOneNodeRewritesOnlyItsShard) {
  for (int i = 0; i < 12; ++i) {
    NodeSpec s;
    s.node = "node-" + std::to_string(i);
    Put("configmaps", DeviceInfoConfigMap(s));
  }
  StartCentre(/*shard_limit=*/2000);
  const std::string where = centre_->ShardOfNode("node-7");
  ASSERT_FALSE(where.empty());
  EXPECT_NE(ClusterInfo("cluster-info-device-2"), "<missing>");  // several shards
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-7")));
  centre_->controller().RunUntilIdleForTest();
  EXPECT_EQ(centre_->FlushWrites(), 1u);
  EXPECT_EQ(centre_->ShardOfNode("node-7"), where);  // stable placement
  EXPECT_NE(ClusterInfo(where).find("80E01801"), std::string::npos);
}

// The writer production runs (writer().Start()) is the reconcile FlushWrites pumps: it takes one
// token per shard write and, out of tokens, asks to be woken when the next one is due.
TEST_F(FaultCentreTest, WriterPacesShardWritesOnTheClock) {
  for (int i = 0; i < 12; ++i) {
    NodeSpec s;
    s.node = "node-" + std::to_string(i);
    Put("configmaps", DeviceInfoConfigMap(s));
  }
  FaultCentre::Options o;
  o.config = Files({.data_dir = CLUSTERD_DATA_DIR});
  o.shard_limit_bytes = 2000;
  o.max_writes_per_second = 5;
  o.write_burst = 2;
  o.watch_store = false;
  centre_ = std::make_unique<FaultCentre>(store_, clock_, nullptr, o);
  ASSERT_TRUE(centre_->Start().ok());
  // The device shards and the node shard are waiting to be written.
  const size_t shards = centre_->DeviceShardCount() + 1;
  ASSERT_GE(shards, 5u);
  EXPECT_EQ(centre_->FlushWrites(), 2u);  // the burst
  EXPECT_EQ(centre_->FlushWrites(), 0u);  // no token until the clock moves
  EXPECT_EQ(centre_->writer().Parked(), 1u);
  clock_.Advance(absl::Milliseconds(200));  // one token at 5/s
  EXPECT_EQ(centre_->FlushWrites(), 1u);
  clock_.Advance(absl::Seconds(10));  // tokens enough for the rest, but the burst caps them at 2
  EXPECT_EQ(centre_->FlushWrites(), 2u);
  size_t written = 5;
  for (;;) {
    clock_.Advance(absl::Milliseconds(200));
    const size_t now = centre_->FlushWrites();
    ASSERT_LE(now, 1u);
    if (now == 0) break;
    written += now;
  }
  EXPECT_EQ(written, shards);
  for (int i = 0; i < 12; ++i) {
    EXPECT_NE(ClusterInfo(centre_->ShardOfNode("node-" + std::to_string(i))), "<missing>") << i;
  }
  EXPECT_NE(ClusterInfo("cluster-info-node-cm"), "<missing>");
}

TEST_F(FaultCentreTest, TamperedUpdateKeepsTheLastGoodStateAndIsCounted) {
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-1")));
  StartCentre();
  const std::string before = ClusterInfo("cluster-info-device-0");
  const uint64_t rejected = Rejected("device-info", "checkcode");
  Json tampered = DeviceInfoConfigMap(NodeSpec{});
  std::string cfg = tampered["data"]["DeviceInfoCfg"];
  cfg.replace(cfg.find("Ascend910-0"), 11, "Ascend910-9");
  tampered["data"]["DeviceInfoCfg"] = cfg;
  Put("configmaps", tampered);
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  EXPECT_EQ(ClusterInfo("cluster-info-device-0"), before);
  EXPECT_EQ(Rejected("device-info", "checkcode"), rejected + 1);
  // Other nodes are unaffected.
  NodeSpec other;
  other.node = "node-2";
  Put("configmaps", DeviceInfoConfigMap(other));
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find("node-2"), std::string::npos);
}

TEST_F(FaultCentreTest, DeletedDeviceInfoEmptiesItsShardWhichStays) {
  Json cm = DeviceInfoConfigMap(FaultyNode("node-1"));
  Put("configmaps", cm);
  StartCentre();
  Remove("configmaps", cm);
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  EXPECT_EQ(ClusterInfo("cluster-info-device-0"), "");
}

TEST_F(FaultCentreTest, NodesBeyondTheRecordLimitAreRefusedNamedOnReadinessAndLetInWhenRoomIsMade) {
  FaultCentre::Options o;
  o.config = Files({.data_dir = CLUSTERD_DATA_DIR});
  o.max_device_records = 2;
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-1")));
  Json second = DeviceInfoConfigMap(FaultyNode("node-2"));
  Put("configmaps", second);
  Json third = DeviceInfoConfigMap(FaultyNode("node-3"));
  Put("configmaps", third);
  ASSERT_TRUE(StartWith(o).ok());
  EXPECT_EQ(centre_->DeviceNodeCount(), 2u);
  std::vector<std::string> notes = centre_->ConfigurationNotes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], ::testing::HasSubstr("1 nodes' device-info refused"));
  EXPECT_THAT(notes[0], ::testing::HasSubstr("at most 2 nodes (--max-nodes), e.g. node-3"));
  EXPECT_THAT(MetricsRegistry::Default().RenderPrometheus(),
              ::testing::HasSubstr("clusterd_fault_centre_refused_nodes 1\n"));
  // Updates of held nodes go on; a node that leaves makes room for the refused one's next write.
  Remove("configmaps", second);
  third["data"]["ManuallySeparateNPU"] = "";
  Put("configmaps", third);
  centre_->controller().RunUntilIdleForTest();
  EXPECT_EQ(centre_->DeviceNodeCount(), 2u);
  EXPECT_TRUE(centre_->ConfigurationNotes().empty());
  EXPECT_THAT(MetricsRegistry::Default().RenderPrometheus(),
              ::testing::HasSubstr("clusterd_fault_centre_refused_nodes 0\n"));
}

TEST_F(FaultCentreTest, NodeInfoIsPublishedInClusterInfoNodeCm) {
  StartCentre();
  model::NodeInfo info;
  info.fault_dev_list = {model::FaultDev{"PSU", 1, {"2C000031"}, "SeparateFault"}};
  info.node_status = "UnHealthy";
  Put("configmaps", testing::NodeInfoConfigMap("node-2", info));
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  EXPECT_EQ(
      ClusterInfo("cluster-info-node-cm"),
      R"({"mindx-dl-nodeinfo-node-2":{"FaultDevList":[{"DeviceType":"PSU","DeviceId":1,"FaultCode":["2C000031"],"FaultLevel":"SeparateFault"}],"NodeStatus":"UnHealthy","CmName":"mindx-dl-nodeinfo-node-2","UpdateTime":1718000000000}})");
}

PublicFaultRequest Pub(const std::string& assertion, const std::string& node = "node-1",
                       const std::string& id = "fault-0001") {
  PublicFaultRequest r;
  r.id = "req-00000001";
  r.timestamp = 1741056920000;
  r.version = "1.0";
  r.resource = "CCAE";
  PublicFaultItem f;
  f.fault_id = id;
  f.fault_type = "NPU";
  f.fault_code = "220001001";
  f.fault_time = 1741056919000;
  f.assertion = assertion;
  f.influence = {PublicFaultInfluence{node, "", {0, 1}}};
  r.faults = {f};
  return r;
}

TEST_F(FaultCentreTest, PublicFaultIsMergedCountedAndRecovered) {
  NodeSpec s;
  s.node = "node-1";
  Put("configmaps", DeviceInfoConfigMap(s));
  StartCentre();
  PublicFaultVerdict v = centre_->SendPublicFault(Pub("occur"));
  EXPECT_EQ(v.code, 0);
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  const std::string shard = ClusterInfo("cluster-info-device-0");
  EXPECT_NE(shard.find(R"(\"fault_type\":\"PublicFault\",\"npu_name\":\"Ascend910-0\")"),
            std::string::npos);
  EXPECT_NE(shard.find(R"("huawei.com/Ascend910-Unhealthy":"Ascend910-0,Ascend910-1")"),
            std::string::npos);
  EXPECT_NE(shard.find("\"UpdateTime\":1718000100,"), std::string::npos);  // bumped to now
  EXPECT_EQ(Cm("cluster-system", "statistic-fault-info", "FaultNum"), R"({"publicFaultNum":1})");
  // Recover 1 s later: removed at add time + 5 s.
  Advance(absl::Seconds(1));
  EXPECT_EQ(centre_->SendPublicFault(Pub("recover")).code, 0);
  Advance(absl::Seconds(3));
  centre_->FlushWrites();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find("PublicFault"), std::string::npos);
  Advance(absl::Seconds(1));
  centre_->FlushWrites();
  EXPECT_EQ(ClusterInfo("cluster-info-device-0").find("PublicFault"), std::string::npos);
  EXPECT_EQ(Cm("cluster-system", "statistic-fault-info", "FaultNum"), R"({"publicFaultNum":0})");
}

TEST_F(FaultCentreTest, PublicFaultFloodFromOneSenderIsLimited) {
  StartCentre();
  int limited = 0;
  for (int i = 0; i < 120; ++i) {
    PublicFaultVerdict v =
        centre_->SendPublicFault(Pub("occur", "node-1", "fault-" + std::to_string(1000 + i)));
    if (v.code == 410) {
      ++limited;
      EXPECT_EQ(v.info, "limiter work by resource failed");
    }
  }
  EXPECT_EQ(limited, 20);
  PublicFaultRequest other = Pub("occur");
  other.resource = "Netmind";
  EXPECT_EQ(centre_->SendPublicFault(other).code, 0);
  PublicFaultRequest unknown = Pub("occur");
  unknown.resource = "nobody";
  EXPECT_EQ(centre_->SendPublicFault(unknown).code, 410);
}

TEST_F(FaultCentreTest, PublicFaultConfigMapIsAppliedAndMalformedOnesCounted) {
  NodeSpec s;
  s.node = "node-1";
  Put("configmaps", DeviceInfoConfigMap(s));
  StartCentre();
  const std::string request =
      R"({"id":"a1b2c3d4-0001","timestamp":1741056920000,"version":"1.0","resource":"CCAE","faults":[{"faultId":"fault-0001","faultType":"NPU","faultCode":"220001001","faultTime":1741056919000,"assertion":"occur","influence":[{"nodeName":"node-1","deviceIds":[2]}]}]})";
  Put("configmaps", testing::ConfigMapObject("default", "my-faults", {{"PublicFault", request}},
                                             {{"mc-consumer-publicfault", "true"}}));
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find(R"(\"npu_name\":\"Ascend910-2\")"),
            std::string::npos);
  const uint64_t malformed = Rejected("public-fault", "malformed");
  Put("configmaps", testing::ConfigMapObject("default", "bad-faults", {{"PublicFault", "{"}},
                                             {{"mc-consumer-publicfault", "true"}}));
  centre_->controller().RunUntilIdleForTest();
  EXPECT_EQ(Rejected("public-fault", "malformed"), malformed + 1);
}

TEST_F(FaultCentreTest, PublicFaultsSurviveARestartThroughStatisticFaultInfo) {
  NodeSpec s;
  s.node = "node-1";
  Put("configmaps", DeviceInfoConfigMap(s));
  StartCentre();
  centre_->SendPublicFault(Pub("occur"));
  centre_->controller().RunUntilIdleForTest();
  centre_->Stop();
  centre_.reset();
  StartCentre();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find("PublicFault"), std::string::npos);
}

// ---- jobs ----

class FaultCentreJobTest : public FaultCentreTest {
 protected:
  void SetUp() override {
    using namespace cluster::testing;
    registry_ = std::make_unique<JobRegistry>(store_, clock_);
    PodGroupSpec pg;
    pg.annotations = annotations_;
    pg.labels.insert(pg.labels.end(), labels_.begin(), labels_.end());
    Put("podgroups", PodGroupObject(pg));
    Put("pods", PodObject(ExamplePod(0)));
    Put("pods", PodObject(ExamplePod(1)));
    ASSERT_TRUE(registry_->Start().ok());
    registry_->controller().RunUntilIdleForTest();
    auto job = registry_->FindJob(kJobUid);
    ASSERT_TRUE(job.has_value());
    ASSERT_EQ(job->previous_servers.size(), 2u);
  }
  void TearDown() override {
    if (centre_) centre_->Stop();
    registry_->Stop();
  }
  // A job of one pod (rank 0) on `node`, named `name` (job uid `name`-uid), into the store; pumps
  // the registry until it has decided the job.
  void AddOnePodJob(const std::string& name, const std::string& node) {
    using namespace cluster::testing;
    PodGroupSpec pg;
    pg.name = name + "-pg";
    pg.uid = name + "-pg-uid";
    pg.owner_uid = name + "-uid";
    pg.owner_name = name;
    pg.min_member = 1;
    Put("podgroups", PodGroupObject(pg));
    PodSpec pod;
    pod.name = name + "-master-0";
    pod.uid = name + "-pod-uid";
    pod.node = node;
    pod.owner_uid = name + "-uid";
    pod.owner_name = name;
    Put("pods", PodObject(pod));
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!registry_->FindJob(name + "-uid").has_value()) {
      ASSERT_LT(absl::Now(), deadline) << "the registry never saw " << name;
      registry_->controller().RunUntilIdleForTest();
      absl::SleepFor(absl::Milliseconds(1));
    }
  }

  std::vector<std::pair<std::string, std::string>> annotations_;
  std::vector<std::pair<std::string, std::string>> labels_;
  std::unique_ptr<JobRegistry> registry_;
};

// The registry decides the jobs of the store in its Start, before its worker runs a single
// reconcile: the initial view maps a fault present at start onto its job. Before, the jobs were
// decided one by one on the registry's worker, and a view built meanwhile (a restart's) missed
// them, and was built again once they came.
TEST_F(FaultCentreTest, TheInitialViewMapsFaultsOntoTheJobsTheRegistryFoundAtItsStart) {
  using namespace cluster::testing;
  Put("podgroups", PodGroupObject(PodGroupSpec{}));
  Put("pods", PodObject(ExamplePod(0)));
  Put("pods", PodObject(ExamplePod(1)));
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  JobRegistry registry(store_, clock_);
  ASSERT_TRUE(registry.Start().ok());  // its worker never runs in this test
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, &registry);
  ASSERT_EQ(sink_.got.size(), 1u) << "the job's fault, in the view clusterd starts serving with";
  EXPECT_EQ(sink_.got[0].job_id, kJobUid);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[0].ranks[0].rank_id, 11);
  centre_->Stop();
  centre_.reset();
  registry.Stop();
}

// The initial view's pipelines on two threads: every node's result is in before the job's
// snapshot is made, so the job gets one snapshot, with the fault of its second node.
TEST_F(FaultCentreTest, TheInitialViewsParallelPipelinesGiveEachJobOneSnapshotWithItsFaults) {
  using namespace cluster::testing;
  Put("podgroups", PodGroupObject(PodGroupSpec{}));
  Put("pods", PodObject(ExamplePod(0)));
  Put("pods", PodObject(ExamplePod(1)));
  NodeSpec healthy;
  healthy.node = "node-a";
  Put("configmaps", DeviceInfoConfigMap(healthy));
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  for (int i = 0; i < 64; ++i) {  // nodes no job uses
    NodeSpec idle;
    idle.node = absl::StrCat("node-idle-", i);
    Put("configmaps", DeviceInfoConfigMap(idle));
  }
  JobRegistry registry(store_, clock_);
  ASSERT_TRUE(registry.Start().ok());  // its worker never runs in this test
  FaultCentre::Options o;
  o.config = Files({.data_dir = CLUSTERD_DATA_DIR});
  o.parallel_for = [](size_t n, const std::function<void(size_t)>& fn) {
    ParallelFor(n, /*min_per_thread=*/1, "test-runner", fn, /*max_threads=*/2);
  };
  ASSERT_TRUE(StartWith(o, &registry).ok());
  centre_->FlushWrites();
  ASSERT_EQ(sink_.got.size(), 1u);
  EXPECT_EQ(sink_.got[0].job_id, kJobUid);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[0].ranks[0].rank_id, 11);
  EXPECT_EQ(centre_->DeviceNodeCount(), 66u);
  EXPECT_EQ(centre_->PendingKeys(), 0u);
  centre_->Stop();
  centre_.reset();
  registry.Stop();
}

TEST_F(FaultCentreJobTest, AJobNpuFaultReachesTheSinkAndItsRecoveryClearsIt) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  EXPECT_TRUE(sink_.got.empty());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 1u);
  const JobFaultRanks& f = sink_.got[0];
  EXPECT_EQ(f.job_id, cluster::testing::kJobUid);
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].rank_id, 11);
  EXPECT_EQ(f.ranks[0].pod_rank, 1);
  EXPECT_EQ(f.ranks[0].pod_uid, "9c2e7d4f-0000-4000-8000-000000000002");
  EXPECT_EQ(f.ranks[0].level, "SeparateNPU");
  EXPECT_EQ(f.ranks[0].FaultType(), "1");
  EXPECT_EQ(f.health, "UnHealthy");
  // The same content again: no new snapshot.
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  centre_->controller().RunUntilIdleForTest();
  EXPECT_EQ(sink_.got.size(), 1u);
  NodeSpec healthy;
  healthy.node = "node-b";
  Put("configmaps", DeviceInfoConfigMap(healthy));
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 2u);
  EXPECT_TRUE(sink_.got[1].ranks.empty());
  EXPECT_EQ(sink_.got[1].health, "Healthy");
  // clusterctl's view.
  EXPECT_TRUE(centre_->FaultRows("", cluster::testing::kJobUid).empty());
}

// The job index waits ten times as long as its last refresh took before it refreshes again, so
// that refreshes take about a tenth of a core at most (while 20,000 jobs registered, refreshing
// at the minimum interval took half of clusterd's CPU). A refresh that takes 50 ms holds the next
// one back for 500 ms from its start; once the clock has passed that, the waiting job is indexed.
TEST_F(FaultCentreJobTest, AJobIndexRefreshWaitsTenTimesAsLongAsTheLastOneTook) {
  bool slow = false;
  FaultCentre::Options o;
  o.config = Files({.data_dir = CLUSTERD_DATA_DIR});
  o.watch_store = false;
  o.write_burst = kUnlimitedWrites;
  // The index builds the jobs of a refresh through the runner when more than one changed.
  o.parallel_for = [&](size_t n, const std::function<void(size_t)>& fn) {
    if (slow) clock_.Advance(absl::Milliseconds(50));
    for (size_t i = 0; i < n; ++i) fn(i);
  };
  ASSERT_TRUE(StartWith(o, registry_.get()).ok());
  registry_->AddViewListener([this] { centre_->JobsChanged(); });
  centre_->controller().RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(1));

  // Two jobs change together: one refresh builds both, and it takes 50 ms.
  AddOnePodJob("second", "node-c");
  AddOnePodJob("third", "node-d");
  slow = true;
  centre_->controller().RunUntilIdleForTest();
  slow = false;
  ASSERT_TRUE(centre_->JobFaults("second-uid").has_value());
  ASSERT_TRUE(centre_->JobFaults("third-uid").has_value());

  AddOnePodJob("fourth", "node-e");
  centre_->controller().RunUntilIdleForTest();
  EXPECT_FALSE(centre_->JobFaults("fourth-uid").has_value()) << "refreshed at once";
  clock_.Advance(absl::Milliseconds(400));  // 450 ms after the slow refresh started
  centre_->controller().RunUntilIdleForTest();
  EXPECT_FALSE(centre_->JobFaults("fourth-uid").has_value()) << "refreshed before 10 x 50 ms";
  clock_.Advance(absl::Milliseconds(60));  // 510 ms
  centre_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(centre_->JobFaults("fourth-uid").has_value()) << "never refreshed";
}

TEST_F(FaultCentreJobTest, FaultRowsFilterByNodeAndJob) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-z")));
  centre_->controller().RunUntilIdleForTest();
  auto rows = centre_->FaultRows("", "pt-2x8");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].node, "node-b");
  EXPECT_EQ(rows[0].npu, "Ascend910-3");
  EXPECT_EQ(rows[0].source, "device");
  EXPECT_EQ(rows[0].since_ms, kStart);
  EXPECT_EQ(centre_->FaultRows("node-z", "").size(), 1u);
  EXPECT_EQ(centre_->FaultRows("", "").size(), 2u);
}

class FaultCentreFilteredJobTest : public FaultCentreJobTest {
 protected:
  FaultCentreFilteredJobTest() {
    annotations_ = {{"huawei.com/schedule.filter.faultCode", "80E01801:30"}};
  }
};

TEST_F(FaultCentreFilteredJobTest, CustomFilterHidesTheFaultUntilItsTimeRunsOut) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  EXPECT_EQ(ClusterInfo("cluster-info-device-0").find("80E01801"), std::string::npos);
  // The Fault service still sees it (filtered list); the recovery plane does not.
  ASSERT_EQ(sink_.got.size(), 1u);
  EXPECT_TRUE(sink_.got[0].ranks.empty());
  EXPECT_EQ(sink_.got[0].filtered_devices.size(), 1u);
  Advance(absl::Seconds(30));
  EXPECT_EQ(sink_.got.size(), 1u);
  Advance(absl::Milliseconds(1));
  ASSERT_EQ(sink_.got.size(), 2u);
  EXPECT_EQ(sink_.got[1].ranks.size(), 1u);
  centre_->FlushWrites();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find("80E01801"), std::string::npos);
}

class FaultCentreRetryJobTest : public FaultCentreJobTest {
 protected:
  FaultCentreRetryJobTest() {
    annotations_ = {{"recover-strategy", "retry"}};
    labels_ = {{"process-recover-enable", "on"}};
  }
  // A UCE and its AIC bus fault written with `fault_code` on a retry job: the UCE is hidden
  // for the retry window, the AIC fault dropped as its companion.
  void ExpectUceRetryAndAccompany(const std::string& fault_code);
};

TEST_F(FaultCentreRetryJobTest, BusinessRetryReportBecomesAStepRetryRank) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b", "Ascend910-3", "RestartBusiness")));
  centre_->controller().RunUntilIdleForTest();
  EXPECT_TRUE(sink_.got.empty());  // UCE hidden while retry is plausible (fault 1 s old)
  centre_->ReportBusinessRetry(cluster::testing::kJobUid, 11, 0);
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 1u);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_TRUE(sink_.got[0].ranks[0].do_step_retry);
  EXPECT_EQ(sink_.got[0].ranks[0].FaultType(), "0");
  // 10 s after the report the synthetic rank ends; the device fault is still hidden (30 s).
  Advance(absl::Seconds(10));
  ASSERT_EQ(sink_.got.size(), 2u);
  EXPECT_TRUE(sink_.got[1].ranks.empty());
  // After report + 30 s the fault shows again, as step retry (the report was timely).
  Advance(absl::Seconds(21));
  ASSERT_EQ(sink_.got.size(), 3u);
  ASSERT_EQ(sink_.got[2].ranks.size(), 1u);
  EXPECT_TRUE(sink_.got[2].ranks[0].do_step_retry);
}

// A UCE and its AIC bus fault on the NPU of rank 11, in one entry whose `fault_code` is given.
NodeSpec UceWithAicFault(const std::string& fault_code) {
  NodeSpec s;
  s.node = "node-b";
  model::DeviceFault f = ChipFault("Ascend910-3", "RestartNPU",
                                   {{"80E01801", kStart - 1000}, {"80C98009", kStart - 1000}});
  f.fault_time_and_level_map["80E01801"].fault_level = "RestartBusiness";
  f.fault_code = fault_code;
  s.faults = {f};
  s.unhealthy = {"Ascend910-3"};
  return s;
}

void FaultCentreRetryJobTest::ExpectUceRetryAndAccompany(const std::string& fault_code) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(UceWithAicFault(fault_code)));
  centre_->controller().RunUntilIdleForTest();
  // The UCE is hidden while a step retry is plausible (10 s from its time); the AIC fault is held
  // back as its accompanying fault.
  EXPECT_TRUE(sink_.got.empty());
  // Past the retry window the UCE shows alone: the AIC fault, within 5 s of it, is gone for good.
  Advance(absl::Seconds(10));
  ASSERT_EQ(sink_.got.size(), 1u);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[0].ranks[0].rank_id, 11);
  EXPECT_EQ(sink_.got[0].ranks[0].code, "80E01801");
  EXPECT_EQ(sink_.got[0].ranks[0].level, "RestartBusiness");
  EXPECT_EQ(sink_.got[0].ranks[0].fault_time_ms, kStart - 1000);
  Advance(absl::Seconds(10));
  EXPECT_EQ(sink_.got.size(), 1u);
}

TEST_F(FaultCentreRetryJobTest, UceGoesThroughRetryAndAccompany) {
  ExpectUceRetryAndAccompany("80E01801,80C98009");
}

TEST_F(FaultCentreRetryJobTest, PaddedUceGoesThroughRetryAndAccompanyLikeAnUnpaddedOne) {
  ExpectUceRetryAndAccompany("80E01801      ,  80C98009    ");
}

// recovery-protocol.md §9.8: the controller reports the pods that must exit as not retryable.
TEST_F(FaultCentreRetryJobTest, NotRetryablePodsFaultIsPublishedAtOnceWithItsLevel) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b", "Ascend910-3", "RestartBusiness")));
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  // The UCE of rank 11 (pod rank 1) is hidden behind the retry window.
  EXPECT_TRUE(sink_.got.empty());
  EXPECT_EQ(ClusterInfo("cluster-info-device-0").find("80E01801"), std::string::npos);
  // The business plane reports the step retry: a step-retry rank.
  Advance(absl::Seconds(2));
  centre_->ReportBusinessRetry(cluster::testing::kJobUid, 11, 0);
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 1u);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[0].ranks[0].FaultType(), "0");
  // The controller gives up on retry for pod 1: at once, on the same clock, the device fault is
  // published with its own level and time, and the job's rank is no longer a step retry.
  centre_->ReportNotRetryable(cluster::testing::kJobUid, {1});
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 2u);
  ASSERT_EQ(sink_.got[1].ranks.size(), 1u);
  const FaultRankEntry& r = sink_.got[1].ranks[0];
  EXPECT_EQ(r.rank_id, 11);
  EXPECT_EQ(r.pod_rank, 1);
  EXPECT_EQ(r.code, "80E01801");
  EXPECT_EQ(r.level, "RestartBusiness");
  EXPECT_EQ(r.fault_time_ms, kStart - 1000);
  EXPECT_FALSE(r.do_step_retry);
  EXPECT_EQ(r.FaultType(), "1");
  EXPECT_EQ(sink_.got[1].health, "UnHealthy");
  centre_->FlushWrites();
  const std::string info = ClusterInfo("cluster-info-device-0");
  EXPECT_NE(info.find("80E01801"), std::string::npos);
  EXPECT_NE(info.find("RestartBusiness"), std::string::npos);
  // The mark holds past the report's windows and is forgotten after 60 s; by then the fault is
  // too old for a retry anyway, so nothing changes.
  Advance(absl::Seconds(31));
  Advance(absl::Seconds(30));
  EXPECT_EQ(sink_.got.size(), 2u);
  // A new business report after the mark counts again (a new retry, §8.3).
  centre_->ReportBusinessRetry(cluster::testing::kJobUid, 11, 0);
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 3u);
  ASSERT_EQ(sink_.got[2].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[2].ranks[0].FaultType(), "0");
}

TEST_F(FaultCentreRetryJobTest, NotRetryableForAnUnknownOrForeignRankIsRefusedAndChangesNothing) {
  using namespace cluster::testing;
  // Another retry job, one pod (rank 0) on node-c, with a UCE of its own.
  PodGroupSpec pg;
  pg.name = "other-pg";
  pg.uid = "pg-uid-2";
  pg.owner_uid = "other-job-uid";
  pg.owner_name = "other";
  pg.min_member = 1;
  pg.annotations = annotations_;
  pg.labels.insert(pg.labels.end(), labels_.begin(), labels_.end());
  Put("podgroups", PodGroupObject(pg));
  PodSpec pod;
  pod.name = "other-master-0";
  pod.uid = "other-pod-uid";
  pod.node = "node-c";
  pod.host_ip = "192.168.0.13";
  pod.owner_uid = "other-job-uid";
  pod.owner_name = "other";
  Put("pods", PodObject(pod));
  // The registry's informer delivers the writes on its own thread: pump until it has the job.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  for (;;) {
    registry_->controller().RunUntilIdleForTest();
    auto other = registry_->FindJob("other-job-uid");
    if (other.has_value() && other->previous_servers.size() == 1) break;
    ASSERT_LT(absl::Now(), deadline) << "the registry never saw the other job";
    absl::SleepFor(absl::Milliseconds(1));
  }
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b", "Ascend910-3", "RestartBusiness")));
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-c", "Ascend910-3", "RestartBusiness")));
  centre_->controller().RunUntilIdleForTest();
  centre_->FlushWrites();
  ASSERT_TRUE(sink_.got.empty());
  const std::string before0 = ClusterInfo("cluster-info-device-0");
  ASSERT_EQ(before0.find("80E01801"), std::string::npos);
  const uint64_t unknown_job = Rejected("not-retryable", "unknown_job");
  const uint64_t unknown_rank = Rejected("not-retryable", "unknown_rank");
  const uint64_t no_fault = Rejected("not-retryable", "no_fault");
  // A job the centre does not know; a pod rank the job does not have; the job's pod rank 0 (on
  // node-a, no fault), which is not the other job's faulty pod rank 0 on node-c.
  centre_->ReportNotRetryable("no-such-job", {1});
  centre_->ReportNotRetryable(kJobUid, {7});
  centre_->ReportNotRetryable(kJobUid, {0});
  centre_->controller().RunUntilIdleForTest();
  EXPECT_EQ(Rejected("not-retryable", "unknown_job"), unknown_job + 1);
  EXPECT_EQ(Rejected("not-retryable", "unknown_rank"), unknown_rank + 1);
  EXPECT_EQ(Rejected("not-retryable", "no_fault"), no_fault + 1);
  // Nothing changed: both UCEs are still hidden, and a business report is still a step retry.
  centre_->FlushWrites();
  EXPECT_EQ(ClusterInfo("cluster-info-device-0"), before0);
  EXPECT_TRUE(sink_.got.empty());
  centre_->ReportBusinessRetry(kJobUid, 11, 0);
  centre_->controller().RunUntilIdleForTest();
  ASSERT_EQ(sink_.got.size(), 1u);
  ASSERT_EQ(sink_.got[0].ranks.size(), 1u);
  EXPECT_EQ(sink_.got[0].ranks[0].FaultType(), "0");
}

TEST_F(FaultCentreJobTest, NotReadyKubernetesNodeSeparatesItsRanks) {
  Put("nodes", cluster::testing::NodeObject("node-a", "192.168.0.11", "SN-A"));
  Json b = cluster::testing::NodeObject("node-b", "192.168.0.12", "SN-B");
  b["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
  Put("nodes", b);
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  ASSERT_EQ(sink_.got.size(), 1u);  // node-a has no Ready condition
  EXPECT_EQ(sink_.got[0].ranks.size(), 8u);
  EXPECT_EQ(sink_.got[0].ranks[0].level, "SeparateNPU");
  EXPECT_EQ(centre_->ClusterSignal().nodes.size(), 1u);
}

// A data directory of the shipped files, one of which the test then breaks.
class DataDirTest : public FaultCentreTest {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/data-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    for (const char* name : {"relationFaultCustomization.json", "faultDuration.json",
                             "publicFaultConfiguration.json"}) {
      std::filesystem::copy_file(std::string(CLUSTERD_DATA_DIR) + "/" + name, dir_ + "/" + name);
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }
  FaultCentre::Options Options(std::string user_file = "") {
    FaultCentre::Options o;
    o.config = Files({.data_dir = dir_, .public_fault_config_path = std::move(user_file)});
    o.write_burst = kUnlimitedWrites;
    return o;
  }
  std::string dir_;
};

TEST_F(DataDirTest, TheShippedFilesStartTheCentre) { EXPECT_TRUE(StartWith(Options()).ok()); }

TEST_F(DataDirTest, AMissingDataFileStopsStartAndIsNamed) {
  std::filesystem::remove(dir_ + "/faultDuration.json");
  absl::Status s = StartWith(Options());
  ASSERT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find(dir_ + "/faultDuration.json"), std::string::npos) << s;
  EXPECT_NE(s.message().find("No such file"), std::string::npos) << s;
  EXPECT_NE(s.message().find("--data-dir"), std::string::npos) << s;
}

TEST_F(DataDirTest, AMalformedDataFileStopsStartAndIsNamed) {
  Write(dir_ + "/relationFaultCustomization.json", "[{\"TriggerFault\": ");
  absl::Status s = StartWith(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir_ + "/relationFaultCustomization.json"), std::string::npos) << s;
}

TEST_F(DataDirTest, ADataFileOfTheWrongShapeOrKindStopsStart) {
  Write(dir_ + "/faultDuration.json", "{\"FaultCode\": \"80E01801\"}");
  absl::Status s = StartWith(Options());
  EXPECT_NE(s.message().find("not a JSON array"), std::string::npos) << s;
  std::filesystem::remove(dir_ + "/faultDuration.json");
  std::filesystem::create_directory(dir_ + "/faultDuration.json");
  s = StartWith(Options());
  EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s;
  std::filesystem::remove(dir_ + "/faultDuration.json");
  Write(dir_ + "/faultDuration.json", "[]");
  Write(dir_ + "/publicFaultConfiguration.json", "not json");
  s = StartWith(Options());
  EXPECT_NE(s.message().find("publicFaultConfiguration.json"), std::string::npos) << s;
}

TEST_F(DataDirTest, AMissingOptionalUserFileIsANoteUntilItAppears) {
  const std::string user_file = dir_ + "/publicCustomization.json";
  ASSERT_TRUE(StartWith(Options(user_file)).ok());
  std::vector<std::string> notes = centre_->ConfigurationNotes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find(user_file), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("No such file"), std::string::npos) << notes[0];
  // The operator adds it (a ConfigMap volume renames it into place): picked up within seconds.
  std::filesystem::copy_file(dir_ + "/publicFaultConfiguration.json", dir_ + "/tmp.json");
  std::filesystem::rename(dir_ + "/tmp.json", user_file);
  Advance(absl::Seconds(3));
  EXPECT_TRUE(centre_->ConfigurationNotes().empty());
  EXPECT_EQ(centre_->Configuration().public_fault_source, user_file);
  Write(user_file, "{broken");
  Advance(absl::Seconds(3));
  notes = centre_->ConfigurationNotes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("rejected"), std::string::npos) << notes[0];
  // Removed: the shipped defaults apply again, and /readyz says the file is not there.
  std::filesystem::remove(user_file);
  Advance(absl::Seconds(3));
  notes = centre_->ConfigurationNotes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("No such file"), std::string::npos) << notes[0];
}

TEST_F(FaultCentreJobTest, AManualSeparationPolicyWrittenLaterTakesEffectWhenWritten) {
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  // Written after start: its watch event, not the 300 s poll, applies it.
  Put("configmaps",
      testing::ConfigMapObject(
          "cluster-system", "clusterd-config-cm",
          {{"manually_separate_policy.conf",
            "enabled: true\nseparate:\n  fault_window_hours: 24\n  fault_threshold: 1\n"}}));
  centre_->controller().RunUntilIdleForTest();
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  centre_->controller().RunUntilIdleForTest();
  Advance(absl::Seconds(30));  // triage window, far less than the poll
  centre_->FlushWrites();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find("ManuallySeparateNPU"), std::string::npos);
}

TEST_F(FaultCentreJobTest, ManualSeparationSeparatesARepeatedlyFaultyNpu) {
  Put("configmaps",
      testing::ConfigMapObject(
          "cluster-system", "clusterd-config-cm",
          {{"manually_separate_policy.conf",
            "enabled: true\nseparate:\n  fault_window_hours: 24\n  fault_threshold: 1\n"}}));
  StartCentre(ClusterInfoShards::kDefaultLimitBytes, registry_.get());
  Put("configmaps", DeviceInfoConfigMap(FaultyNode("node-b")));
  centre_->controller().RunUntilIdleForTest();
  Advance(absl::Seconds(30));  // triage window
  centre_->FlushWrites();
  EXPECT_NE(ClusterInfo("cluster-info-device-0").find("ManuallySeparateNPU"), std::string::npos);
  Advance(absl::Seconds(15));  // CM sync
  EXPECT_NE(
      Cm("cluster-system", "clusterd-manual-info-cm", "node-b").find("\"Total\":[\"Ascend910-3\"]"),
      std::string::npos);
  bool manual_rank = false;
  for (const auto& r : sink_.got.back().ranks) manual_rank |= r.level == "ManuallySeparateNPU";
  EXPECT_TRUE(manual_rank);
}

}  // namespace fault_centre_test
}  // namespace clusterd::cluster
