// Serialisation of the per-job rank table (jobs-ranktable-diagnosis.md §2.1 field order).
#include "model/rank_table.h"

#include "gtest/gtest.h"

namespace clusterd::model {
namespace rank_table_test {

TEST(RankTable, ServerFieldOrderAndOmittedSuperDeviceId) {
  RankTableServer s;
  s.devices = {{"0", "10.0.0.1", "0", ""}, {"1", "10.0.0.2", "1", "7"}};
  s.server_id = "1.1.1.1";
  s.host_ip = "1.1.1.1";
  s.super_pod_id = -1;
  s.server_name = "n";
  s.server_sn = "";
  s.pod_name = "p";
  s.container_ids = {{"b", "2"}, {"a", "1"}};
  EXPECT_EQ(SerializeRankTableServer(s),
            R"({"device":[{"device_id":"0","device_ip":"10.0.0.1","rank_id":"0"},)"
            R"({"device_id":"1","device_ip":"10.0.0.2","rank_id":"1","super_device_id":"7"}],)"
            R"("server_id":"1.1.1.1","host_ip":"1.1.1.1","super_pod_id":-1,"server_name":"n",)"
            R"("server_sn":"","pod_name":"p","container_ids":{"a":"1","b":"2"}})");
}

TEST(RankTable, StringsAreEscapedLikeGo) {
  RankTable t;
  t.status = "<&>";
  t.server_list.emplace();
  t.server_count = "0";
  EXPECT_EQ(SerializeRankTable(t),
            R"({"status":"\u003c\u0026\u003e","server_list":[],"server_count":"0","total":0})");
}

TEST(RankTable, DeviceCount) {
  RankTable t;
  EXPECT_EQ(t.DeviceCount(), 0u);
  t.server_list = std::vector<RankTableServer>(3);
  (*t.server_list)[0].devices.resize(8);
  (*t.server_list)[2].devices.resize(2);
  EXPECT_EQ(t.DeviceCount(), 10u);
}

TEST(RankTable, NullPortsAndAddressListRenderNull) {
  RankLevelElement e{1, "i", "CLOS", "", std::vector<RankAddrItem>{{"IP", "a", std::nullopt, ""}}};
  EXPECT_EQ(SerializeRankLevelElement(e),
            R"({"net_layer":1,"net_instance_id":"i","net_type":"CLOS","net_attr":"",)"
            R"("rank_addr_list":[{"addr_type":"IP","addr":"a","ports":null,"plane_id":""}]})");
  e.rank_addr_list.reset();
  EXPECT_EQ(
      SerializeRankLevelElement(e),
      R"({"net_layer":1,"net_instance_id":"i","net_type":"CLOS","net_attr":"","rank_addr_list":null})");
}

}  // namespace rank_table_test
}  // namespace clusterd::model
