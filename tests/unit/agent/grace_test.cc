// Graceful fault tolerance through the agent: RankList in reset-config, hot reset of the ring
// (simulated driver), recovery or isolation.
#include "agent/agent_core.h"
#include "agent/config_map_io.h"
#include "agent_test_util.h"
#include "common/check_code.h"
#include "gtest/gtest.h"
#include "model/device_info.h"
#include "model/reset_info.h"

namespace clusterd::agent {
namespace grace_test {

using testing::AddGraceJob;
using testing::AgentFixture;
using testing::TestOptions;

const absl::Time kStart = absl::FromUnixSeconds(1718000000);

AgentOptions GraceOptions(std::set<int> fail = {}) {
  AgentOptions o = TestOptions();
  o.grace_tolerance = true;
  o.reset_duration_ms = 10000;
  o.reset_fail_npus = std::move(fail);
  return o;
}

model::TaskResetInfo ResetInfo(AgentFixture& f) {
  auto data = ReadConfigMapData(*f.store, "default", "reset-config-job1");
  EXPECT_TRUE(data.ok() && data->has_value());
  const ConfigMapData& d = **data;
  auto info = model::ParseTaskResetInfo(d.at("reset.json"), d.at("checkCode"));
  EXPECT_TRUE(info.ok()) << info.status() << " " << d.at("reset.json");
  EXPECT_EQ(d.at("checkCode"), Sha256Hex(d.at("reset.json")));
  return info.ok() ? *info : model::TaskResetInfo{};
}

std::string DeviceListKey(AgentFixture& f, const std::string& key) {
  return model::ParseDeviceInfoCfg(f.DeviceInfo().at("DeviceInfoCfg"))
      ->device_info.device_list.at(key);
}

TEST(GracefulTolerance, RestartNpuFaultIsHotResetAndRecovered) {
  AgentFixture f(GraceOptions());
  AddGraceJob(*f.store);
  f.StartWithScript(
      R"({"at_ms": 500, "kind": "chip", "npu": 3, "code": "80E18005", "assertion": "occur"})");
  f.core->Step();
  // NPUs 2 and 3 are in use: neither listed as available.
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910"),
            "Ascend910-0,Ascend910-1,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7");
  f.RunFor(absl::Seconds(1));
  model::TaskResetInfo info = ResetInfo(f);
  ASSERT_EQ(info.rank_list.size(), 1u);
  EXPECT_EQ(info.rank_list[0].rank_id, 3);  // rank index 1 x 2 devices + 1
  EXPECT_EQ(info.rank_list[0].logic_id, 3);
  EXPECT_EQ(info.rank_list[0].status, "unrecovered");
  EXPECT_EQ(info.rank_list[0].policy, "reset");
  EXPECT_EQ(info.rank_list[0].initial_policy, "reset");
  EXPECT_EQ(info.rank_list[0].error_code, (std::vector<int64_t>{0x80E18005}));
  EXPECT_EQ(info.rank_list[0].error_code_hex, "80E18005");
  EXPECT_EQ(info.update_time, 1718000001);

  // WaitProcessReadCMTime later the ring (all 8 NPUs on a 910B board) is reset.
  f.RunUntil(kStart + absl::Seconds(31));  // the RankList was written at 1 s
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910-Recovering"),
            "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,"
            "Ascend910-7");
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910"), "");
  f.RunUntil(kStart + absl::Seconds(41));
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910-Recovering"), "");
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910-Unhealthy"), "");
  EXPECT_EQ(ResetInfo(f).rank_list[0].status, "recovered");
}

TEST(GracefulTolerance, FailedResetIsolatesAndIsNotOverwritten) {
  AgentFixture f(GraceOptions({3}));
  AddGraceJob(*f.store);
  f.StartWithScript(
      R"({"at_ms": 500, "kind": "chip", "npu": 3, "code": "80E18005", "assertion": "occur"})");
  f.RunUntil(kStart + absl::Seconds(45));
  model::TaskResetInfo info = ResetInfo(f);
  EXPECT_EQ(info.rank_list[0].status, "failed");
  EXPECT_EQ(info.rank_list[0].policy, "isolate");
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910-Unhealthy"), "Ascend910-3");
  EXPECT_NE(
      DeviceListKey(f, "huawei.com/Ascend910-Fault").find(R"("fault_handling":"SeparateNPU")"),
      std::string::npos);
}

TEST(GracefulTolerance, JobsWithoutResetConfigAreLeftAlone) {
  AgentFixture f(GraceOptions());
  AddGraceJob(*f.store);
  ASSERT_TRUE(DeleteConfigMap(*f.store, "default", "reset-config-job1").ok());
  f.StartWithScript(
      R"({"at_ms": 500, "kind": "chip", "npu": 3, "code": "80E18005", "assertion": "occur"})");
  f.RunUntil(kStart + absl::Seconds(60));
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910-Recovering"), "");
  EXPECT_EQ(DeviceListKey(f, "huawei.com/Ascend910-Unhealthy"), "Ascend910-3");
}

}  // namespace grace_test
}  // namespace clusterd::agent
