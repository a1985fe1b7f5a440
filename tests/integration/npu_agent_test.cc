// npu-agent as a user runs it: a real process on a dir store, fault sources, the device-info
// ConfigMap text, operator edits and policy overrides taking effect without a restart.
// Built only when the npu-agent target exists (tests/integration/CMakeLists.txt defines
// NPU_AGENT_BIN then).
#ifdef NPU_AGENT_BIN
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "absl/strings/match.h"
#include "client/channel.h"
#include "common/check_code.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npu_agent.grpc.pb.h"
#include "npu_agent_process.h"
#include "store/object_store.h"
#include "test_env.h"

namespace clusterd {
namespace npu_agent_test {

using nlohmann::ordered_json;
using testing::AgentProcess;
using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;
using testing::WaitForDeviceInfo;
using testing::WriteScript;

// The DeviceInfoCfg text with its times and CheckCode masked, after checking that CheckCode is
// the SHA-256 of the DeviceInfo part (computed here, not by the model code).
std::string MaskedDeviceInfoCfg(const std::string& text) {
  const std::string prefix = R"({"DeviceInfo":)";
  const size_t end = text.find(R"(,"SuperPodID":)");
  EXPECT_EQ(text.rfind(prefix, 0), 0u);
  EXPECT_NE(end, std::string::npos);
  const std::string device_info = text.substr(prefix.size(), end - prefix.size());
  const std::string check = R"("CheckCode":")";
  const size_t at = text.find(check);
  EXPECT_NE(at, std::string::npos);
  EXPECT_EQ(text.substr(at + check.size(), 64), Sha256Hex(device_info));
  std::string masked = std::regex_replace(text, std::regex(R"((\\"fault_time\\":)\d+)"), "$1T");
  masked = std::regex_replace(masked, std::regex(R"(("UpdateTime":)\d+)"), "$1U");
  return std::regex_replace(masked, std::regex(R"(("CheckCode":")[0-9a-f]{64})"), "$1C");
}

TEST(NpuAgent, ScriptSourceWritesTheDeviceInfoConfigMap) {
  TempDir dir;
  const std::string script = WriteScript(dir, R"(# one RestartBusiness fault, one RoCE link down
{"at_ms": 100, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 100, "kind": "network", "npu": 6, "code": "81078603", "assertion": "occur"}
)");
  AgentProcess agent(dir, {"--fault-source", "script:" + script});
  const ordered_json data = WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""), "80E01801");
  });
  EXPECT_EQ(
      MaskedDeviceInfoCfg(data["DeviceInfoCfg"]),
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-3\",\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"80E01801\",\"fault_time_and_level_map\":{\"80E01801\":{\"fault_time\":T,\"fault_level\":\"RestartBusiness\"}}},{\"fault_type\":\"CardNetworkUnhealthy\",\"npu_name\":\"Ascend910-6\",\"large_model_fault_level\":\"NotHandleFault\",\"fault_level\":\"NotHandleFault\",\"fault_handling\":\"NotHandleFault\",\"fault_code\":\"81078603\",\"fault_time_and_level_map\":{\"81078603\":{\"fault_time\":T,\"fault_level\":\"NotHandleFault\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-3"},"UpdateTime":U},"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"C"})");
  EXPECT_EQ(data["ManuallySeparateNPU"], "");
  EXPECT_EQ(data["UpgradeFaultReason"], "{}");
  EXPECT_FALSE(data.contains("SwitchInfoCfg"));
  EXPECT_EQ(agent.Stop(), 0);
}

TEST(NpuAgent, MalformedScriptLinesAreReportedAndSkipped) {
  TempDir dir;
  const std::string script = WriteScript(
      dir, R"({"at_ms": 0, "kind": "chip", "npu": 1, "code": "A2301001", "assertion": "occur"}
{"at_ms": 0, "kind": "chip", "npu": 99, "code": "A2301001", "assertion": "occur"}
not json at all
)");
  AgentProcess agent(dir, {"--fault-source", "script:" + script});
  WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""),
                             R"("huawei.com/Ascend910-Unhealthy":"Ascend910-1")");
  });
  EXPECT_EQ(agent.Stop(), 0);
  const std::string log = agent.Log();
  EXPECT_TRUE(absl::StrContains(log, "line=2")) << log;
  EXPECT_TRUE(absl::StrContains(log, "line=3")) << log;
}

TEST(NpuAgent, GrpcSourceInjectsFaultsAtRunTime) {
  TempDir dir;
  AgentProcess agent(dir, {"--fault-source", "grpc:127.0.0.1:0"});
  const ordered_json info = agent.Info();
  ASSERT_TRUE(info.is_object());
  std::string address = info["sources"][0];
  ASSERT_TRUE(absl::StartsWith(address, "grpc:"));
  address = address.substr(5);
  auto stub = agent::FaultInjection::NewStub(client::MakeChannel(address));
  grpc::ClientContext ctx;
  agent::InjectRequest request;
  agent::FaultEvent* e = request.add_events();
  e->set_kind("chip");
  e->set_npu(2);
  e->set_code("A2301001");
  e->set_assertion("occur");
  agent::FaultEvent* bad = request.add_events();
  bad->set_kind("chip");
  bad->set_code("A2301001");
  bad->set_assertion("occur");
  agent::InjectReply reply;
  grpc::Status st = stub->Inject(&ctx, request, &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(reply.accepted(), 1);
  ASSERT_EQ(reply.errors_size(), 1);
  EXPECT_EQ(reply.errors(0), "event[1]: npu is missing");
  WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""),
                             R"("huawei.com/Ascend910-Unhealthy":"Ascend910-2")");
  });
  EXPECT_EQ(agent.Stop(), 0);
}

// This host's first non-loopback IPv4 address, or "" (the test is skipped).
std::string NonLoopbackIpv4() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string found;
  for (ifaddrs* a = all; a != nullptr && found.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {0};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof(text));
    if (!absl::StartsWith(text, "127.")) found = text;
  }
  freeifaddrs(all);
  return found;
}

TEST(NpuAgent, GrpcInjectFromAnotherHostNeedsAToken) {
  const std::string ip = NonLoopbackIpv4();
  if (ip.empty()) GTEST_SKIP() << "no non-loopback address";
  TempDir dir;
  const std::string tokens = WriteScript(dir, "inj3ct,chaos-tool,7\n");
  AgentProcess agent(dir, {"--fault-source", "grpc:0.0.0.0:0", "--inject-token-file", tokens});
  const ordered_json info = agent.Info();
  ASSERT_TRUE(info.is_object());
  const std::string address = info["sources"][0];
  const std::string port = address.substr(address.rfind(':') + 1);
  auto stub = agent::FaultInjection::NewStub(client::MakeChannel(ip + ":" + port));
  agent::InjectRequest request;
  agent::FaultEvent* e = request.add_events();
  e->set_kind("chip");
  e->set_npu(3);
  e->set_code("A2301001");
  e->set_assertion("occur");
  {
    grpc::ClientContext ctx;
    agent::InjectReply reply;
    grpc::Status st = stub->Inject(&ctx, request, &reply);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "needs a credential with permission inject"))
        << st.error_message();
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer wrong");
    agent::InjectReply reply;
    grpc::Status st = stub->Inject(&ctx, request, &reply);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_TRUE(absl::StrContains(st.error_message(), "unknown bearer token"))
        << st.error_message();
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer inj3ct");
    agent::InjectReply reply;
    grpc::Status st = stub->Inject(&ctx, request, &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(reply.accepted(), 1);
  }
  EXPECT_EQ(agent.Stop(), 0);
  EXPECT_TRUE(absl::StrContains(agent.Log(), "[audit] call audit=true")) << agent.Log();
}

TEST(NpuAgent, OperatorReleasesAManuallySeparatedNpuByEditingTheConfigMap) {
  TempDir dir;
  const std::string script = WriteScript(
      dir, R"({"at_ms": 0, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
{"at_ms": 1500, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
{"at_ms": 3000, "kind": "chip", "npu": 5, "code": "80E18005", "assertion": "once"}
)");
  AgentProcess agent(dir, {"--fault-source", "script:" + script});
  WaitForDeviceInfo(
      dir, [](const ordered_json& d) { return d["ManuallySeparateNPU"] == "Ascend910-5"; });

  auto store = store::OpenStore("dir:" + dir.path() + "/state");
  ASSERT_TRUE(store.ok());
  auto cm = (*store)->Get({"configmaps", "kube-system", "mindx-dl-deviceinfo-node-1"});
  ASSERT_TRUE(cm.ok());
  (*cm)["data"]["ManuallySeparateNPU"] = "";
  (*cm)["metadata"].erase("resourceVersion");
  ASSERT_TRUE((*store)->Update("configmaps", *cm).ok());

  const ordered_json data = WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return d["UpgradeFaultReason"] == "{}" &&
           absl::StrContains(d.value("DeviceInfoCfg", ""),
                             R"("huawei.com/Ascend910-Unhealthy":"")");
  });
  EXPECT_EQ(data["ManuallySeparateNPU"], "");
  EXPECT_EQ(agent.Stop(), 0);
  EXPECT_TRUE(absl::StrContains(agent.Log(), "EventReleaseUpgradeFault")) << agent.Log();
}

TEST(NpuAgent, FaultConfigMapOverrideAppliesWithoutRestart) {
  TempDir dir;
  const std::string script = WriteScript(
      dir, R"({"at_ms": 0, "kind": "chip", "npu": 0, "code": "80E01801", "assertion": "occur"})");
  AgentProcess agent(dir, {"--fault-source", "script:" + script});
  WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""),
                             R"(\"fault_handling\":\"RestartBusiness\")");
  });
  auto store = store::OpenStore("dir:" + dir.path() + "/state");
  ASSERT_TRUE(store.ok());
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "mindx-dl-fault-config"}, {"namespace", "kube-system"}}},
      {"data", {{"faultCode.json", R"({"SeparateNPUCodes":["80E01801"]})"}}}};
  ASSERT_TRUE((*store)->Create("configmaps", cm).ok());
  WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""), R"(\"fault_handling\":\"SeparateNPU\")");
  });
  EXPECT_EQ(agent.Stop(), 0);
}

// On a real cluster the Ascend Device Plugin owns the device-info ConfigMap: an npu-agent
// started there must leave it as it is (a fault it names must not be rewritten as healthy).
TEST(NpuAgent, LeavesTheDevicePluginsConfigMapUntouched) {
  TempDir dir;
  auto store = store::OpenStore("dir:" + dir.path() + "/state");
  ASSERT_TRUE(store.ok());
  store::Object cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "mindx-dl-deviceinfo-node-1"}, {"namespace", "kube-system"}}},
      {"data",
       {{"DeviceInfoCfg",
         R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910-Unhealthy":"Ascend910-3"}}})"},
        {"ManuallySeparateNPU", ""}}}};
  ASSERT_TRUE((*store)->Create("configmaps", cm).ok());
  const std::string path =
      dir.path() + "/state/configmaps/kube-system/mindx-dl-deviceinfo-node-1.json";
  const std::string before = ReadFile(path);
  ASSERT_FALSE(before.empty());

  AgentProcess agent(dir, {});
  ASSERT_FALSE(agent.Info().is_null());
  // The first cycle runs at once; give it, and a write spacing, time to act.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(ReadFile(path), before);
  EXPECT_EQ(agent.Stop(), 0);
  const std::string log = agent.Log();
  EXPECT_TRUE(absl::StrContains(log, "REFUSING to write a ConfigMap another writer owns")) << log;
  EXPECT_TRUE(absl::StrContains(log, "kube-system/mindx-dl-deviceinfo-node-1")) << log;

  // --take-over replaces it (and marks it).
  AgentProcess taker(dir, {"--take-over"});
  const ordered_json data = WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""), "CheckCode");
  });
  EXPECT_TRUE(absl::StrContains(ReadFile(path), "clusterd.io/written-by"));
  EXPECT_EQ(taker.Stop(), 0);
}

// The events of `dir`/state/events/kube-system once there are `count` (real time).
std::vector<ordered_json> WaitForEvents(const TempDir& dir, size_t count,
                                        absl::Duration timeout = absl::Seconds(15)) {
  const std::string events = dir.path() + "/state/events/kube-system";
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<ordered_json> found;
  while (absl::Now() < deadline) {
    found.clear();
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(events, ec)) {
      ordered_json e = ordered_json::parse(ReadFile(entry.path()), nullptr, false);
      if (!e.is_discarded()) found.push_back(std::move(e));
    }
    if (found.size() >= count) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "expected " << count << " events, found " << found.size();
  return found;
}

TEST(NpuAgent, FaultBecomesAKubernetesEvent) {
  TempDir dir;
  const std::string script = WriteScript(
      dir, R"({"at_ms": 100, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
)");
  AgentProcess agent(dir, {"--fault-source", "script:" + script, "--pod-name", "agent-pod-1",
                           "--pod-namespace", "mindx-dl"});
  WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""), "80E01801");
  });
  const std::vector<ordered_json> events = WaitForEvents(dir, 1);
  ASSERT_EQ(events.size(), 1u);
  const ordered_json& e = events[0];
  EXPECT_TRUE(std::regex_match(e["metadata"]["name"].get<std::string>(),
                               std::regex(R"(agent-pod-1\.\d{13}3)")))
      << e["metadata"]["name"];
  EXPECT_EQ(e["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(e["involvedObject"]["name"], "agent-pod-1");
  EXPECT_EQ(e["involvedObject"]["namespace"], "mindx-dl");
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "Occur");
  EXPECT_EQ(e["action"], "RestartBusiness");
  EXPECT_EQ(e["reportingComponent"], "device-plugin");
  EXPECT_EQ(e["reportingInstance"], "agent-pod-1");
  EXPECT_TRUE(absl::StartsWith(e["message"].get<std::string>(),
                               "device fault, nodeName:node-1, assertion:Occur, cardID:3, "
                               "deviceID:0, faultCodes:80E01801, faultLevelName:RestartBusiness, "
                               "alarmRaisedTime:"))
      << e["message"];
  EXPECT_EQ(agent.Stop(), 0);
}

TEST(NpuAgent, AFailingEventWriteDoesNotHoldUpTheDeviceInfoWrite) {
  TempDir dir;
  // The dir store refuses to write through a symbolic link, so every event write fails.
  std::filesystem::create_directories(dir.path() + "/state/events");
  std::filesystem::create_directories(dir.path() + "/elsewhere");
  std::filesystem::create_directory_symlink(dir.path() + "/elsewhere",
                                            dir.path() + "/state/events/kube-system");
  const std::string script = WriteScript(
      dir, R"({"at_ms": 100, "kind": "chip", "npu": 3, "code": "80E01801", "assertion": "occur"}
{"at_ms": 100, "kind": "chip", "npu": 4, "code": "80E01801", "assertion": "occur"}
)");
  AgentProcess agent(dir, {"--fault-source", "script:" + script});
  WaitForDeviceInfo(dir, [](const ordered_json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""),
                             R"("huawei.com/Ascend910-Unhealthy":"Ascend910-3,Ascend910-4")");
  });
  EXPECT_EQ(agent.Stop(), 0);
  const std::string log = agent.Log();
  // Two failures, one log line (at most one a minute).
  size_t lines = 0;
  for (size_t at = log.find("kubernetes event write failed"); at != std::string::npos;
       at = log.find("kubernetes event write failed", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << log;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() + "/elsewhere"));
}

TEST(NpuAgent, FlagsHelpAndVersion) {
  CommandResult help = RunCommand(std::string(NPU_AGENT_BIN) + " --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--node", "--store", "--chip", "--npus", "--super-pod-id",
                           "--server-index", "--fault-source"}) {
    EXPECT_TRUE(absl::StrContains(help.output, flag)) << flag;
  }
  CommandResult version = RunCommand(std::string(NPU_AGENT_BIN) + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(version.output, "npu-agent ")) << version.output;
  TempDir dir;
  CommandResult bad_chip = RunCommand(std::string(NPU_AGENT_BIN) +
                                      " --node n --store dir:" + dir.path() + " --chip Ascend999");
  EXPECT_EQ(bad_chip.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(bad_chip.output, "Ascend999")) << bad_chip.output;
  CommandResult missing =
      RunCommand(std::string(NPU_AGENT_BIN) + " --node n --store dir:" + dir.path() +
                 " --fault-source script:/nonexistent");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(missing.output, "/nonexistent")) << missing.output;
}

}  // namespace npu_agent_test
}  // namespace clusterd

#endif  // NPU_AGENT_BIN
