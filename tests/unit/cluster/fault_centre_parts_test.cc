// The fault centre's parts on their own: its typed keys, the cluster-info publisher and the
// configuration source seam (the centre reads no file itself).
#include <memory>
#include <string>

#include "cluster/cluster_info_publisher.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_centre_key.h"
#include "cluster/fault_config_source.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace clusterd::cluster {
namespace fault_centre_parts_test {

using Kind = FaultCentreKey::Kind;

TEST(FaultCentreKey, EveryKindKeepsItsTextFormAndRoundTrips) {
  const std::vector<std::pair<FaultCentreKey, std::string>> cases = {
      {FaultCentreKey::Device("node-1"), "dev/node-1"},
      {FaultCentreKey::NodeInfo("node-1"), "nod/node-1"},
      {FaultCentreKey::K8sNode("node-1"), "k8s/node-1"},
      {FaultCentreKey::PublicFaultCm("default/pf-1"), "pf/default/pf-1"},
      {FaultCentreKey::Job("job-1"), "job/job-1"},
      {FaultCentreKey::Of(Kind::kJobIndex), "#index"},
      {FaultCentreKey::Of(Kind::kPublicFaultExpiry), "#pf-expire"},
      {FaultCentreKey::Of(Kind::kManualTriage), "#manual-triage"},
      {FaultCentreKey::Of(Kind::kManualSync), "#manual-sync"},
      {FaultCentreKey::Of(Kind::kManualConfig), "#manual-config"},
      {FaultCentreKey::Of(Kind::kManualConfigChanged), "#manual-config-changed"},
      {FaultCentreKey::Of(Kind::kStatistic), "#statistic"},
      {FaultCentreKey::Of(Kind::kConfigPoll), "#config-poll"},
  };
  for (const auto& [key, text] : cases) {
    EXPECT_EQ(FaultCentreKeyCodec::Encode(key), text);
    std::optional<FaultCentreKey> back = FaultCentreKeyCodec::Decode(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_TRUE(*back == key) << text;
  }
}

TEST(FaultCentreKey, TextThatNoKindSpellsDoesNotDecode) {
  for (const char* text : {"", "dev/", "job/", "#nope", "#index2", "node-1", "#manual"}) {
    EXPECT_FALSE(FaultCentreKeyCodec::Decode(text).has_value()) << text;
  }
}

class ClusterInfoPublisherTest : public ::testing::Test {
 protected:
  ClusterInfoPublisherTest()
      : store_([this] {
          store::MemoryStore::Options o;
          o.clock = &clock_;
          return o;
        }()),
        publisher_(store_, clock_, {.shard_limit_bytes = 2000, .write_burst = 1'000'000}) {}

  ManualClock clock_{absl::FromUnixMillis(1718000100000)};
  store::MemoryStore store_;
  ClusterInfoPublisher publisher_;
};

TEST_F(ClusterInfoPublisherTest, AnEntryIsWrittenOnceAndAnUnchangedOneWakesNoWriter) {
  publisher_.Upsert(ClusterInfoPublisher::Kind::kDevice, "mindx-dl-deviceinfo-node-1", "{\"a\":1}");
  EXPECT_EQ(publisher_.writer().Ready(), 1u);
  EXPECT_EQ(publisher_.FlushWrites(), 1u);
  auto cm = store_.Get({"configmaps", "mindx-dl", "cluster-info-device-0"});
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_NE(cm->dump().find("mindx-dl-deviceinfo-node-1"), std::string::npos);
  // The same content again: nothing to publish, the writer is not even woken.
  publisher_.Upsert(ClusterInfoPublisher::Kind::kDevice, "mindx-dl-deviceinfo-node-1", "{\"a\":1}");
  EXPECT_EQ(publisher_.writer().Ready(), 0u);
  EXPECT_EQ(publisher_.FlushWrites(), 0u);
  // Removed: the shard is written again, empty.
  publisher_.Remove(ClusterInfoPublisher::Kind::kDevice, "mindx-dl-deviceinfo-node-1");
  EXPECT_EQ(publisher_.FlushWrites(), 1u);
  EXPECT_EQ(publisher_.ShardContent("cluster-info-device-0"), "");
}

TEST_F(ClusterInfoPublisherTest, TheNodeShardIsPublishedEvenEmpty) {
  publisher_.PublishNodeShard();
  EXPECT_EQ(publisher_.FlushWrites(), 1u);
  EXPECT_TRUE(store_.Get({"configmaps", "mindx-dl", "cluster-info-node-cm"}).ok());
}

// A configuration given in memory: no file, no directory.
class MemoryConfig final : public FaultConfigSource {
 public:
  absl::Status CheckRequired() override { return required; }
  bool Changed() override {
    ++looks;
    return std::exchange(changed, false);
  }
  FaultConfigRead Read() override {
    ++reads;
    return read;
  }
  std::string Location() const override { return "memory"; }

  absl::Status required = absl::OkStatus();
  bool changed = false;
  FaultConfigRead read;
  int looks = 0;
  int reads = 0;
};

FaultConfigRead PublicConfig(std::string resource, std::string source) {
  FaultConfigRead read;
  PublicFaultConfig config;
  config.resources = {resource};
  config.level_of_code = {{"010001001", "SeparateNPU"}};
  read.public_faults = config;
  read.public_text = resource;
  read.public_source = std::move(source);
  return read;
}

class FaultCentreConfigTest : public ::testing::Test {
 protected:
  FaultCentreConfigTest()
      : store_([this] {
          store::MemoryStore::Options o;
          o.clock = &clock_;
          return o;
        }()) {}

  std::unique_ptr<FaultCentre> Centre() {
    FaultCentre::Options o;
    o.config = &config_;
    o.watch_store = false;
    o.config_poll_period = absl::Seconds(2);
    return std::make_unique<FaultCentre>(store_, clock_, nullptr, o);
  }

  ManualClock clock_{absl::FromUnixMillis(1718000100000)};
  store::MemoryStore store_;
  MemoryConfig config_;
};

TEST_F(FaultCentreConfigTest, TheCentreAppliesWhatItsSourceSaysAndAsksAgainOnEachPoll) {
  config_.read = PublicConfig("dpc", "memory:first");
  auto centre = Centre();
  ASSERT_TRUE(centre->Start().ok());
  EXPECT_EQ(config_.reads, 1);
  EXPECT_EQ(centre->Configuration().public_fault_source, "memory:first");
  EXPECT_EQ(centre->Configuration().public_fault_resources, std::set<std::string>{"dpc"});
  EXPECT_EQ(centre->Configuration().data_dir, "memory");
  // Unchanged: looked at every poll period, not read.
  clock_.Advance(absl::Seconds(2));
  centre->controller().RunUntilIdleForTest();
  EXPECT_EQ(config_.looks, 1);
  EXPECT_EQ(config_.reads, 1);
  // Changed: read and applied at the next poll.
  config_.read = PublicConfig("storage", "memory:second");
  config_.read.note = "the user's file was rejected";
  config_.changed = true;
  clock_.Advance(absl::Seconds(2));
  centre->controller().RunUntilIdleForTest();
  EXPECT_EQ(config_.looks, 2);
  EXPECT_EQ(config_.reads, 2);
  EXPECT_EQ(centre->Configuration().public_fault_source, "memory:second");
  EXPECT_EQ(centre->ConfigurationNotes(), std::vector<std::string>{"the user's file was rejected"});
}

TEST_F(FaultCentreConfigTest, ARequiredPartMissingStopsStart) {
  config_.required = absl::FailedPreconditionError("data file x: missing");
  auto centre = Centre();
  absl::Status s = centre->Start();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_EQ(config_.reads, 0);
}

TEST_F(FaultCentreConfigTest, AFailedReadKeepsThePreviousConfiguration) {
  config_.read = PublicConfig("dpc", "memory:first");
  auto centre = Centre();
  ASSERT_TRUE(centre->Start().ok());
  config_.read.public_faults = absl::DataLossError("torn file");
  config_.read.relation = absl::DataLossError("torn file");
  config_.changed = true;
  clock_.Advance(absl::Seconds(2));
  centre->controller().RunUntilIdleForTest();
  EXPECT_EQ(config_.reads, 2);
  EXPECT_EQ(centre->Configuration().public_fault_source, "memory:first");
}

}  // namespace fault_centre_parts_test
}  // namespace clusterd::cluster
