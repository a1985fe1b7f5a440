// The MindIE global rank table of jobs-ranktable-diagnosis.md §2.4, with the worked examples of
// §2.6 (v1.0) and §2.7 (A3 super pod, v1.2).
#include "cluster/rank_table_global_builder.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rank_table_golden.h"

namespace clusterd::cluster {
namespace rank_table_global_builder_test {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;

// §2.6: CM rings-config-mindie-server-0, 2 servers x 8 NPUs.
InstanceConfigMap Example26Instance() {
  Json servers = Json::array();
  for (int s = 0; s < 2; ++s) {
    Json devices = Json::array();
    for (int d = 0; d < 8; ++d) {
      devices.push_back({{"device_id", std::to_string(d)},
                         {"device_ip", absl::StrCat("10.1.", s, ".", 10 + d)},
                         {"rank_id", std::to_string(s * 8 + d)}});
    }
    servers.push_back({{"device", devices},
                       {"server_id", absl::StrCat("uid-", s)},
                       {"host_ip", absl::StrCat("192.168.0.", 11 + s)},
                       {"container_ip", absl::StrCat("172.16.3.", 21 + s)}});
  }
  Json table = {
      {"status", "completed"}, {"server_list", servers}, {"server_count", "2"}, {"version", "1.0"}};
  return {
      "default",
      "rings-config-mindie-server-0",
      {{"jobID", "mindie-job-001"}, {"grt-group/deploy-server", "0"}, {"mx-consumer-cim", "true"}},
      table.dump()};
}

// §2.7: 2 pods x 16 NPUs on A3 nodes in super pod 0.
InstanceConfigMap Example27Instance() {
  const uint32_t base[2] = {62914560, 67108864};
  Json servers = Json::array();
  for (int s = 0; s < 2; ++s) {
    Json devices = Json::array();
    for (int d = 0; d < 16; ++d) {
      devices.push_back({{"device_id", std::to_string(d)},
                         {"device_ip", absl::StrCat("29.", s, ".0.", d + 1)},
                         {"super_device_id", ""},
                         {"rank_id", std::to_string(s * 16 + d)}});
    }
    servers.push_back({{"device", devices},
                       {"server_id", absl::StrCat("uid-", s)},
                       {"host_ip", absl::StrCat("10.0.1.", 11 + s)},
                       {"container_ip", absl::StrCat("172.16.8.", 11 + s)},
                       {"hardware_type", "800I-A3"}});
  }
  // The example's super_device_ids, verbatim.
  const uint32_t sdid[2][16] = {
      {62914560, 62980097, 63176706, 63242243, 63438852, 63504389, 63700998, 63766535, 63963144,
       64028681, 64225290, 64290827, 64487436, 64552973, 64749582, 64815119},
      {67108864, 67174401, 67371010, 67436547, 67633156, 67698693, 67895302, 67960839, 68157448,
       68222985, 68419594, 68485131, 68681740, 68747277, 68943886, 69009423}};
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(sdid[s][0], base[s]);
    for (int d = 0; d < 16; ++d)
      servers[s]["device"][d]["super_device_id"] = std::to_string(sdid[s][d]);
  }
  Json table = {{"status", "completed"},
                {"server_list", servers},
                {"server_count", "2"},
                {"version", "1.2"},
                {"super_pod_list",
                 Json::array({{{"super_pod_id", "0"},
                               {"server_list", Json::array({{{"server_id", "uid-0"}},
                                                            {{"server_id", "uid-1"}}})}}})}};
  return {"default",
          "rings-config-mindie-a3-server-0",
          {{"jobID", "mindie-a3"}, {"grt-server/deploy-server", "1"}},
          table.dump()};
}

TEST(GlobalRankTable, WorkedExample26IsTheExactText) {
  auto table = BuildGlobalRankTable("mindie-job-001", {Example26Instance()},
                                    {{"default", "coordinator-0", "192.168.0.30", "172.16.5.7"}},
                                    {{"default", "controller-0", "192.168.0.31", "172.16.5.9"}});
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(model::SerializeGlobalRankTable(*table), testing::kGlobalRankTableExample26);
  EXPECT_EQ(table->RankCount(), 16u);
}

TEST(GlobalRankTable, WorkedExample27IsTheExactText) {
  auto table = BuildGlobalRankTable("mindie-a3", {Example27Instance()},
                                    {{"default", "coordinator-0", "10.0.1.30", "172.16.9.2"}},
                                    {{"default", "controller-0", "10.0.1.31", "172.16.9.3"}});
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(model::SerializeGlobalRankTable(*table), testing::kGlobalRankTableExample27);
}

TEST(GlobalRankTable, SuperDeviceIdLayoutOfTheExample) {
  const uint32_t sdid = 62914560;
  EXPECT_EQ((sdid >> 22) & 0x3FF, 15u);
  EXPECT_EQ((sdid >> 16) & 0x3, 0u);
  EXPECT_EQ(sdid & 0xFFFF, 0u);
}

TEST(GlobalRankTable, SecondInstanceBecomesGroupThree) {
  InstanceConfigMap second = Example26Instance();
  second.name = "rings-config-mindie-server-1";
  auto table = BuildGlobalRankTable("mindie-job-001", {second, Example26Instance()},
                                    {{"default", "c", "1.1.1.1", "2.2.2.2"}},
                                    {{"default", "k", "1.1.1.2", "2.2.2.3"}});
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->groups.size(), 4u);
  EXPECT_EQ(table->groups[3].group_id, "3");
}

TEST(GlobalRankTable, InstanceWithBothDeployLabelsIsAnError) {
  InstanceConfigMap cm = Example26Instance();
  cm.labels["grt-server/deploy-server"] = "1";
  auto table = BuildGlobalRankTable("mindie-job-001", {cm}, {{"default", "c", "1", "2"}},
                                    {{"default", "k", "1", "2"}});
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(std::string(table.status().message()),
              HasSubstr("configmap default/rings-config-mindie-server-0 must carry exactly one"));
  EXPECT_THAT(std::string(table.status().message()), HasSubstr("(it has both)"));
}

TEST(GlobalRankTable, InstanceWithNeitherDeployLabelIsAnError) {
  InstanceConfigMap cm = Example26Instance();
  cm.labels.erase("grt-group/deploy-server");
  auto table = BuildGlobalRankTable("mindie-job-001", {cm}, {{"default", "c", "1", "2"}},
                                    {{"default", "k", "1", "2"}});
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(std::string(table.status().message()), HasSubstr("(it has neither)"));
}

TEST(GlobalRankTable, OnlyCompletedInstancesCountAndNoneIsAnError) {
  InstanceConfigMap cm = Example26Instance();
  Json t = Json::parse(cm.hccl_json);
  t["status"] = "initializing";
  cm.hccl_json = t.dump();
  auto table = BuildGlobalRankTable("mindie-job-001", {cm}, {{"default", "c", "1", "2"}},
                                    {{"default", "k", "1", "2"}});
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(std::string(table.status().message()),
              HasSubstr("mindie-job-001: no completed instance rank table"));
}

TEST(GlobalRankTable, UnreadableInstanceTableIsAnErrorNamingTheConfigMap) {
  InstanceConfigMap cm = Example26Instance();
  cm.hccl_json = "{";
  auto table = BuildGlobalRankTable("mindie-job-001", {cm}, {{"default", "c", "1", "2"}},
                                    {{"default", "k", "1", "2"}});
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(std::string(table.status().message()),
              HasSubstr("configmap default/rings-config-mindie-server-0 hccl.json"));
}

TEST(GlobalRankTable, MissingCoordinatorOrControllerIsAnError) {
  auto no_coordinator = BuildGlobalRankTable("mindie-job-001", {Example26Instance()}, {},
                                             {{"default", "k", "1", "2"}});
  ASSERT_FALSE(no_coordinator.ok());
  EXPECT_THAT(std::string(no_coordinator.status().message()), HasSubstr("no coordinator pod"));
  auto no_controller = BuildGlobalRankTable("mindie-job-001", {Example26Instance()},
                                            {{"default", "c", "1", "2"}}, {});
  ASSERT_FALSE(no_controller.ok());
  EXPECT_THAT(std::string(no_controller.status().message()), HasSubstr("no controller pod"));
}

TEST(GlobalRankTable, PodWithoutPodIpIsAnError) {
  auto table = BuildGlobalRankTable("mindie-job-001", {Example26Instance()},
                                    {{"default", "coordinator-0", "192.168.0.30", ""}},
                                    {{"default", "k", "1", "2"}});
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(std::string(table.status().message()),
              HasSubstr("coordinator pod default/coordinator-0 has no status.podIP"));
}

}  // namespace rank_table_global_builder_test
}  // namespace clusterd::cluster
