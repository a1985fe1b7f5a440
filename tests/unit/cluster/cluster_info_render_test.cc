// The cluster-info ConfigMaps (fault-pipeline.md §1.4): regrouping of the per-code faults, the
// five DeviceList keys, and stable size-bounded shard placement.
#include "cluster/cluster_info_render.h"

#include "absl/strings/str_cat.h"
#include "cluster/cluster_info_shards.h"
#include "common/canonical_json.h"
#include "fault_test_util.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace cluster_info_render_test {

using testing::Fault;
using testing::Record;

TEST(ClusterInfoRender, RegroupsPerNpuAndTypeInPlainStringOrder) {
  std::vector<NpuFault> faults = {
      Fault("Ascend910-2", "80E01801", "RestartBusiness", 11),
      Fault("Ascend910-10", "8C1F860B", "SeparateNPU", 12),
      Fault("Ascend910-2", "81078603", "NotHandleFault", 13, 0, "CardNetworkUnhealthy"),
      Fault("Ascend910-2", "80C98009", "RestartRequest", 14),
      Fault("Ascend910-2", "A0000001", "NotHandleFault", 15),
  };
  auto groups = RegroupFaults(faults);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].npu_name, "Ascend910-10");
  EXPECT_EQ(groups[1].npu_name, "Ascend910-2");
  EXPECT_EQ(groups[1].fault_type, "CardNetworkUnhealthy");
  EXPECT_EQ(groups[2].fault_type, "CardUnhealthy");
  // Sorted by (level name, code): NotHandleFault < RestartBusiness < RestartRequest.
  EXPECT_EQ(groups[2].fault_code, "A0000001,80E01801,80C98009");
  EXPECT_EQ(groups[2].fault_level, "RestartBusiness");
  EXPECT_EQ(groups[2].fault_handling, "RestartBusiness");
  EXPECT_EQ(groups[2].large_model_fault_level, "RestartBusiness");
  EXPECT_EQ(groups[2].fault_time_and_level_map.at("80C98009").fault_time, 14);
}

TEST(ClusterInfoRender, ManuallySeparateCodesSetTheLevelButAreNotListed) {
  std::vector<NpuFault> faults = {
      Fault("Ascend910-3", "80E01801", "RestartBusiness", 11),
      Fault("Ascend910-3", "ManuallySeparateNPU", "ManuallySeparateNPU", -1),
      Fault("Ascend910-3", "", "ManuallySeparateNPU", 0),
  };
  auto groups = RegroupFaults(faults);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].fault_code, "80E01801");
  EXPECT_EQ(groups[0].fault_level, "ManuallySeparateNPU");
  EXPECT_EQ(groups[0].fault_time_and_level_map.size(), 1u);
}

TEST(ClusterInfoRender, DeviceEntryAlwaysHasTheFiveKeysOfItsType) {
  DeviceRecord r = Record("n", 2);
  r.device_type = "npu";
  r.available = {"npu-0", "npu-1"};
  EXPECT_EQ(
      RenderDeviceEntry(r),
      R"({"DeviceList":{"huawei.com/npu":"npu-0,npu-1","huawei.com/npu-Fault":"[]","huawei.com/npu-NetworkUnhealthy":"","huawei.com/npu-Recovering":"","huawei.com/npu-Unhealthy":""},"UpdateTime":1718000001,"CmName":"mindx-dl-deviceinfo-n","SuperPodID":-1,"RackID":0,"ServerIndex":-1})");
}

TEST(ClusterInfoRender, DeviceEntryHasTheBytesOfItsCanonicalJsonForm) {
  // RenderDeviceEntry writes the entry directly; the JSON tree is the form the spec describes.
  DeviceRecord plain = Record("node-1", 16);
  DeviceRecord faulty = Record("node-2", 8);
  faulty.faults = {
      Fault("Ascend910-2", "80E01801", "RestartBusiness", 11),
      Fault("Ascend910-2", "81078603", "NotHandleFault", 13, 0, "CardNetworkUnhealthy"),
      Fault("Ascend910-7", "ManuallySeparateNPU", "ManuallySeparateNPU", -1)};
  faulty.unhealthy = {"Ascend910-2"};
  faulty.network_unhealthy = {"Ascend910-2"};
  faulty.recovering = {"Ascend910-5"};
  faulty.super_pod_id = 3;
  faulty.rack_id = -7;
  faulty.server_index = 2147483647;
  faulty.update_time_s = -1;
  DeviceRecord odd = Record("n<&>\"\u2028", 2);  // names that Go's encoder escapes
  odd.cm_name = "mindx-dl-deviceinfo-<\x01>\xff";
  odd.resource_name = "vendor.example/accel<1>";
  odd.name_prefix = "acc-";
  odd.available = {"acc-0", "acc-1"};
  DeviceRecord same_keys = Record("n", 1);
  same_keys.device_type = "";
  for (const DeviceRecord* r : {&plain, &faulty, &odd, &same_keys}) {
    EXPECT_EQ(RenderDeviceEntry(*r), CanonicalJson(DeviceEntryJson(*r))) << r->node;
  }
}

TEST(ClusterInfoRender, EntryMapIsSortedAndEmptyIsEmptyString) {
  std::string a = "1", b = "2";
  EXPECT_EQ(RenderEntryMap({}), "");
  EXPECT_EQ(RenderEntryMap({{"a<", &a}, {"b", &b}}), R"({"a\u003c":1,"b":2})");
}

TEST(ClusterInfoShards, NewEntriesFillTheFirstShardAndEmptyShardsRenderEmpty) {
  ClusterInfoShards shards("cluster-info-device-", 100, 1.0);
  EXPECT_EQ(shards.Count(), 0u);
  shards.Upsert("k1", std::string(30, '1'));  // "k1": + 30 = 35 bytes
  shards.Upsert("k2", std::string(30, '2'));
  EXPECT_EQ(shards.Count(), 1u);
  EXPECT_EQ(shards.TakeDirty(), std::vector<size_t>{0});
  EXPECT_EQ(shards.ShardBytes(0), shards.Render(0).size());
  shards.Upsert("k3", std::string(30, '3'));  // 2 + 35*3 + 2 = 109 > 100
  EXPECT_EQ(shards.Count(), 2u);
  EXPECT_EQ(shards.ShardOf("k3"), 1);
  EXPECT_EQ(shards.TakeDirty(), std::vector<size_t>{1});
  EXPECT_EQ(shards.Name(1), "cluster-info-device-1");
  shards.Remove("k3");
  EXPECT_EQ(shards.Render(1), "");
  EXPECT_EQ(shards.Count(), 2u);  // remembered
  EXPECT_EQ(shards.TakeDirty(), std::vector<size_t>{1});
}

// Keys built with StrCat: GCC 12 at -O3 reports a false -Werror=restrict inside
// `Key(i)` (operator+(const char*, string&&) inlined into string::insert).
std::string Key(int i) { return absl::StrCat("k", i); }

TEST(ClusterInfoShards, ChangingOneEntryDirtiesOnlyItsShard) {
  ClusterInfoShards shards("p-", 100, 1.0);
  for (int i = 0; i < 9; ++i) shards.Upsert(Key(i), std::string(20, 'x'));
  ASSERT_GE(shards.Count(), 3u);
  shards.TakeDirty();
  const long where = shards.ShardOf("k4");
  shards.Upsert("k4", std::string(20, 'y'));
  EXPECT_EQ(shards.TakeDirty(), std::vector<size_t>{static_cast<size_t>(where)});
  shards.Upsert("k4", std::string(20, 'y'));  // unchanged: nothing to write
  EXPECT_TRUE(shards.TakeDirty().empty());
  // Every other key kept its shard.
  for (int i = 0; i < 9; ++i) EXPECT_LT(shards.ShardBytes(shards.ShardOf(Key(i))), 101u);
}

TEST(ClusterInfoShards, AGrownEntryMovesAndAnOversizedOneGetsAShardOfItsOwn) {
  ClusterInfoShards shards("p-", 100, 1.0);
  shards.Upsert("a", std::string(40, 'a'));
  shards.Upsert("b", std::string(40, 'b'));
  shards.TakeDirty();
  shards.Upsert("b", std::string(60, 'b'));  // no longer fits next to a
  EXPECT_EQ(shards.ShardOf("a"), 0);
  EXPECT_EQ(shards.ShardOf("b"), 1);
  EXPECT_EQ(shards.TakeDirty(), (std::vector<size_t>{0, 1}));
  shards.Upsert("huge", std::string(500, 'h'));
  EXPECT_EQ(shards.ShardOf("huge"), 2);
  EXPECT_GT(shards.ShardBytes(2), 100u);
  for (size_t i = 0; i < shards.Count(); ++i) {
    if (i != 2) {
      EXPECT_LE(shards.ShardBytes(i), 100u);
    }
  }
}

TEST(ClusterInfoShards, NewEntriesLeaveHeadroomForGrowth) {
  ClusterInfoShards shards("p-", 100);       // new entries fill up to 75 bytes
  shards.Upsert("a", std::string(30, 'a'));  // 34 bytes: 36 serialised
  shards.Upsert("b", std::string(30, 'b'));  // 71 serialised
  shards.Upsert("c", std::string(30, 'c'));  // would be 106: next shard
  EXPECT_EQ(shards.ShardOf("c"), 1);
  shards.TakeDirty();
  shards.Upsert("a", std::string(55, 'a'));  // grows to 96 bytes in place
  EXPECT_EQ(shards.ShardOf("a"), 0);
  EXPECT_EQ(shards.TakeDirty(), std::vector<size_t>{0});
}

TEST(ClusterInfoShards, RenderIsValidJsonOfItsEntries) {
  ClusterInfoShards shards("p-");
  shards.Upsert("mindx-dl-deviceinfo-b", R"({"x":1})");
  shards.Upsert("mindx-dl-deviceinfo-a", R"({"x":2})");
  EXPECT_EQ(shards.Render(0),
            R"({"mindx-dl-deviceinfo-a":{"x":2},"mindx-dl-deviceinfo-b":{"x":1}})");
}

}  // namespace cluster_info_render_test
}  // namespace clusterd::cluster
