// An A3 npu-agent process through a graceful hot reset with a switch fault present
// (fault-pipeline.md §1.2.2): the SwitchInfoCfg NodeStatus reads Healthy while the reset runs,
// its levels NotHandle from the reset's second cycle, and the real values once it is over.
#ifdef NPU_AGENT_BIN
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npu_agent.grpc.pb.h"
#include "npu_agent_process.h"
#include "store/object_store.h"
#include "test_env.h"

namespace clusterd {
namespace npu_agent_hot_reset_test {

using nlohmann::ordered_json;
using testing::AgentProcess;
using testing::ReadFile;
using testing::TempDir;
using testing::WaitForDeviceInfo;

constexpr char kSwitchKey[] = "[0x08520003,na,cpu,na]_0_1";

// Job `job1` on node-1 (NPUs 2 and 3) with its reset-config ConfigMap: the job opted in to
// graceful fault tolerance.
void AddGraceJob(const std::string& state_dir) {
  auto store = store::OpenStore("dir:" + state_dir);
  ASSERT_TRUE(store.ok()) << store.status();
  const store::Object pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "job1-worker-1"},
        {"namespace", "default"},
        {"labels", {{"job-name", "job1"}}},
        {"annotations",
         {{"hccl/rankIndex", "1"},
          {"ascend.kubectl.kubernetes.io/ascend-910-configuration",
           R"({"pod_name":"job1-worker-1","server_id":"u","host_ip":"10.0.0.1","super_pod_id":-2,"devices":[{"device_id":"2","device_ip":"-1","super_device_id":"0"},{"device_id":"3","device_ip":"-1","super_device_id":"0"}],"rack_id":-2,"server_index":"-2","server_ip":"10.0.0.1"})"}}}}},
      {"spec", {{"nodeName", "node-1"}}},
      {"status", {{"phase", "Running"}}}};
  ASSERT_TRUE((*store)->Create("pods", pod).ok());
  const store::Object reset_config = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "reset-config-job1"}, {"namespace", "default"}}},
      {"data", {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}}};
  ASSERT_TRUE((*store)->Create("configmaps", reset_config).ok());
}

// The shipped faultCustomization.json with WaitProcessReadCMTime at its minimum (5 s), so the
// reset starts a few seconds after the fault.
std::string QuickGraceCustomization(const TempDir& dir) {
  ordered_json doc =
      ordered_json::parse(ReadFile(std::string(CLUSTERD_DATA_DIR) + "/faultCustomization.json"));
  doc["GraceTolerance"]["WaitProcessReadCMTime"] = 5;
  const std::string path = dir.path() + "/faultCustomization.json";
  std::ofstream(path) << doc.dump(2);
  return path;
}

ordered_json SwitchInfo(const ordered_json& data) {
  return ordered_json::parse(data.value("SwitchInfoCfg", "null"), nullptr, false);
}
std::string Recovering(const ordered_json& data) {
  const ordered_json cfg = ordered_json::parse(data.value("DeviceInfoCfg", "{}"), nullptr, false);
  if (!cfg.is_object()) return "";
  return cfg["DeviceInfo"]["DeviceList"].value("huawei.com/Ascend910-Recovering", "");
}
std::string CodeLevel(const ordered_json& sw) {
  if (!sw.is_object() || !sw["FaultTimeAndLevelMap"].is_object()) return "";
  return sw["FaultTimeAndLevelMap"]
      .value(kSwitchKey, ordered_json::object())
      .value("fault_level", "");
}

TEST(NpuAgentA3, SwitchRecordReadsHealthyThenNotHandleDuringAHotReset) {
  TempDir dir;
  AddGraceJob(dir.path() + "/state");
  AgentProcess agent(dir, {"--chip", "Ascend910A3", "--grace-tolerance=true", "--reset-duration",
                           "4", "--fault-customization-file", QuickGraceCustomization(dir),
                           "--fault-source", "grpc:127.0.0.1:0"});
  const ordered_json info = agent.Info();
  ASSERT_TRUE(info.is_object()) << agent.Log();
  const std::string address = info["sources"][0].get<std::string>().substr(5);
  auto stub = agent::FaultInjection::NewStub(client::MakeChannel(address));
  grpc::ClientContext ctx;
  agent::InjectRequest request;
  agent::FaultEvent* sw = request.add_events();
  sw->set_kind("switch");
  sw->set_chip_id(0);
  sw->set_port_id(1);
  sw->set_code("[0x08520003,na,cpu,na]");  // Separate in the shipped SwitchFaultCode.json
  sw->set_assertion("occur");
  // A RestartNPU fault the driver reported two minutes ago: on A3 a ring is reset only once its
  // fault has persisted over 60 s.
  agent::FaultEvent* chip = request.add_events();
  chip->set_kind("chip");
  chip->set_npu(3);
  chip->set_code("80E18005");
  chip->set_assertion("occur");
  chip->set_alarm_time_ms(absl::ToUnixMillis(absl::Now() - absl::Minutes(2)));
  agent::InjectReply reply;
  ASSERT_TRUE(stub->Inject(&ctx, request, &reply).ok());
  ASSERT_EQ(reply.accepted(), 2) << (reply.errors_size() > 0 ? reply.errors(0) : "");

  ordered_json data = WaitForDeviceInfo(dir, [](const ordered_json& d) {
    const ordered_json s = SwitchInfo(d);
    return s.is_object() && s.value("FaultLevel", "") == "Separate" && Recovering(d).empty();
  });
  EXPECT_EQ(SwitchInfo(data)["NodeStatus"], "UnHealthy");
  EXPECT_EQ(CodeLevel(SwitchInfo(data)), "Separate");

  // The reset's first cycle: the ring is Recovering, NodeStatus forced, levels still real.
  data = WaitForDeviceInfo(dir, [](const ordered_json& d) { return !Recovering(d).empty(); });
  EXPECT_EQ(Recovering(data), "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3");
  EXPECT_EQ(SwitchInfo(data)["NodeStatus"], "Healthy") << data.dump();
  EXPECT_EQ(SwitchInfo(data)["FaultLevel"], "Separate") << data.dump();
  // The second cycle, a second later, while the reset still runs.
  data = WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return SwitchInfo(d).value("FaultLevel", "") == "NotHandle";
  });
  EXPECT_FALSE(Recovering(data).empty());
  EXPECT_EQ(SwitchInfo(data)["NodeStatus"], "Healthy");
  EXPECT_EQ(CodeLevel(SwitchInfo(data)), "NotHandle");
  // The reset is over (success): the real values again.
  data = WaitForDeviceInfo(dir, [](const ordered_json& d) { return Recovering(d).empty(); });
  EXPECT_EQ(SwitchInfo(data)["NodeStatus"], "UnHealthy") << data.dump();
  EXPECT_EQ(SwitchInfo(data)["FaultLevel"], "Separate");
  EXPECT_EQ(CodeLevel(SwitchInfo(data)), "Separate");
  EXPECT_EQ(agent.Stop(), 0);
  const std::string log = agent.Log();
  EXPECT_TRUE(absl::StrContains(log, "hot reset finished npu=3 success=true")) << log;
}

}  // namespace npu_agent_hot_reset_test
}  // namespace clusterd

#endif  // NPU_AGENT_BIN
