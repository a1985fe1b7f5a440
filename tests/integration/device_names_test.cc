// Device-name customisation (seed 001 Table 7, deviceNameCustomization.json) end to end: a
// real npu-agent and a real clusterd given the same file, the job's pods allocated under the
// renamed annotation and resource; the agent's device-info, clusterd's cluster-info and fault
// query speak the customised names, and the fault reaches the job's rank. A broken file stops
// either program, naming the file and the line.
#ifdef NPU_AGENT_BIN
#include <filesystem>
#include <fstream>
#include <thread>

#include "../unit/cluster/job_test_objects.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "fault.grpc.pb.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "npu_agent_process.h"
#include "sim/clusterd_process.h"
#include "test_env.h"

namespace clusterd {
namespace device_names_test {

using cluster::testing::ExamplePod;
using cluster::testing::Json;
using cluster::testing::kJobUid;
using cluster::testing::NodeObject;
using cluster::testing::PodGroupObject;
using cluster::testing::PodGroupSpec;
using cluster::testing::PodObject;
using cluster::testing::PodSpec;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;

constexpr absl::Duration kWait = absl::Seconds(30);
constexpr char kResource[] = "example.com/npu910";
constexpr char kPodConfiguration[] = "example.com/npu910-configuration";

constexpr char kNamesFile[] = R"([
  {
    "ResourceType": "Ascend910",
    "DevicePublicType": "example.com/npu910",
    "DevicePublicNamePre": "npu910-",
    "PodConfigurationName": "example.com/npu910-configuration"
  }
]
)";

std::string WriteNamesFile(const TempDir& dir, const std::string& text) {
  const std::string path = dir.path() + "/deviceNameCustomization.json";
  std::ofstream(path) << text;
  return path;
}

template <typename Pred>
bool WaitFor(Pred pred) {
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(DeviceNames, AgentAndClusterdMapARenamedNodesFaultOntoItsJob) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  std::filesystem::create_directories(state);
  const std::string names = WriteNamesFile(dir, kNamesFile);

  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/run";
  options.extra_args = {"--device-name-file", names};
  auto clusterd = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(clusterd.ok()) << clusterd.status();

  // The 2 x 8 job of jobs-ranktable-diagnosis.md §2.2 as a scheduler of the renamed cluster
  // writes it: rank 11 is NPU 3 of node-b.
  for (const auto& [name, ip] : {std::pair{"node-a", "192.168.0.11"}, {"node-b", "192.168.0.12"}}) {
    Json node = NodeObject(name, ip, std::string("SN-") + name);
    node["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
    testing::WriteStoreObjectFile(state, "nodes", node);
  }
  PodGroupSpec pg;
  pg.min_resource = kResource;
  testing::WriteStoreObjectFile(state, "podgroups", PodGroupObject(pg));
  for (int rank : {0, 1}) {
    PodSpec pod = ExamplePod(rank);
    pod.resource = kResource;
    pod.allocation_key = kPodConfiguration;
    testing::WriteStoreObjectFile(state, "pods", PodObject(pod));
  }
  httplib::Client http("http://" + (*clusterd)->http_address());
  auto get_json = [&http](const std::string& path) {
    auto res = http.Get(path);
    return res && res->status == 200 ? Json::parse(res->body, nullptr, false) : Json();
  };
  ASSERT_TRUE(WaitFor([&] {
    const Json job = get_json("/api/clusterd/v1/jobs/" + std::string(kJobUid));
    return job.is_object() && job.value("status", "") == "running";
  })) << ReadFile((*clusterd)->log_path());

  // The npu-agent of node-b, renamed by the same file; A2301001 is a SeparateNPU code.
  const std::string script = dir.path() + "/faults.jsonl";
  std::ofstream(script)
      << R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "A2301001", "assertion": "occur"})"
      << "\n";
  auto agent =
      Subprocess::Start({{NPU_AGENT_BIN, "--node", "node-b", "--store", "dir:" + state, "--npus",
                          "8", "--device-name-file", names, "--fault-source", "script:" + script},
                         dir.path() + "/agent.out",
                         dir.path() + "/agent.err"});
  ASSERT_TRUE(agent.ok()) << agent.status();

  // The node's own ConfigMap.
  const std::string device_info = state + "/configmaps/kube-system/mindx-dl-deviceinfo-node-b.json";
  ASSERT_TRUE(WaitFor([&] {
    return absl::StrContains(ReadFile(device_info),
                             R"(\"example.com/npu910-Unhealthy\":\"npu910-3\")");
  })) << ReadFile(device_info)
      << ReadFile(dir.path() + "/agent.err");
  EXPECT_FALSE(absl::StrContains(ReadFile(device_info), "huawei.com/Ascend910"));
  EXPECT_TRUE(absl::StrContains(ReadFile(dir.path() + "/agent.err"),
                                "deviceNameCustomization.json=" + names));

  // clusterd's cluster-info shard, in the node's names.
  const std::string shard = state + "/configmaps/mindx-dl/cluster-info-device-0.json";
  EXPECT_TRUE(WaitFor([&] {
    const std::string text = ReadFile(shard);
    return absl::StrContains(text, R"(\"example.com/npu910-Unhealthy\":\"npu910-3\")") &&
           absl::StrContains(text, R"(\\\"npu_name\\\":\\\"npu910-3\\\")");
  })) << ReadFile(shard);

  // The fault belongs to the job (its rank 11 holds NPU 3 of node-b).
  Json faults;
  EXPECT_TRUE(WaitFor([&] {
    faults = get_json("/api/clusterd/v1/faults?job=" + std::string(kJobUid));
    return faults.is_object() && faults["items"].size() == 1;
  })) << faults.dump();
  if (faults.is_object() && faults["items"].size() == 1) {
    const Json& row = faults["items"][0];
    EXPECT_EQ(row["node"], "node-b");
    EXPECT_EQ(row["npu"], "npu910-3");
    EXPECT_EQ(row["code"], "A2301001");
    EXPECT_EQ(row["level"], "SeparateNPU");
  }
  auto fault_stub = ::fault::Fault::NewStub(client::MakeChannel((*clusterd)->grpc_address()));
  ::fault::ClientInfo info;
  info.set_jobid(kJobUid);
  info.set_role("taskd");
  // The job's fault signal is the centre's job stage, a reconcile after the one that maps the
  // fault row shown above: ask until it has caught up.
  ::fault::FaultQueryResult result;
  EXPECT_TRUE(WaitFor([&] {
    grpc::ClientContext ctx;
    result.Clear();
    return fault_stub->GetFaultMsgSignal(&ctx, info, &result).ok() &&
           result.faultsignal().nodefaultinfo_size() == 1;
  })) << result.DebugString();
  ASSERT_EQ(result.faultsignal().nodefaultinfo_size(), 1);
  ASSERT_EQ(result.faultsignal().nodefaultinfo(0).faultdevice_size(), 1);
  EXPECT_EQ(result.faultsignal().nodefaultinfo(0).faultdevice(0).deviceid(), "3");

  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(absl::Seconds(10)).value_or(-1), 0);
  EXPECT_EQ((*clusterd)->Stop().value_or(-1), 0);
}

TEST(DeviceNames, ABrokenFileStopsBothProgramsNamingItsLine) {
  TempDir dir;
  const std::string names = WriteNamesFile(dir, R"([
  {
    "ResourceType": "Ascend910",
    "DevicePublicType": "example.com/npu910",
    "DevicePublicNamePrefix": "npu910-",
    "PodConfigurationName": "example.com/npu910-configuration"
  }
]
)");
  const std::string expected = names + ":5:5: entry 1: unknown key \"DevicePublicNamePrefix\"";
  testing::CommandResult agent = RunCommand(absl::StrCat(
      NPU_AGENT_BIN, " --node n --store dir:", dir.path(), "/state --device-name-file ", names));
  EXPECT_EQ(agent.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(agent.output, "npu-agent: " + expected)) << agent.output;

  testing::CommandResult clusterd = RunCommand(
      absl::StrCat(CLUSTERD_BIN, " --store dir:", dir.path(), "/state2 --device-name-file ", names,
                   " --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0"));
  EXPECT_EQ(clusterd.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(clusterd.output, "clusterd: " + expected)) << clusterd.output;

  // Malformed JSON too, and a file named but missing.
  std::ofstream(names) << "[\n  {\"ResourceType\": \"Ascend910\",,}\n]\n";
  agent = RunCommand(absl::StrCat(NPU_AGENT_BIN, " --node n --store dir:", dir.path(),
                                  "/state --device-name-file ", names));
  EXPECT_EQ(agent.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(agent.output, names + ":2:32: malformed JSON")) << agent.output;
  agent = RunCommand(absl::StrCat(NPU_AGENT_BIN, " --node n --store dir:", dir.path(),
                                  "/state --device-name-file ", dir.path(), "/missing.json"));
  EXPECT_EQ(agent.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(agent.output, "cannot read " + dir.path() + "/missing.json"))
      << agent.output;
}

TEST(DeviceNames, TheFileInTheDataDirectoryIsReadWithoutAFlag) {
  TempDir dir;
  // A data directory with the shipped files and a customisation file beside them.
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  for (const auto& entry : std::filesystem::directory_iterator(CLUSTERD_DATA_DIR)) {
    if (entry.is_regular_file()) std::filesystem::copy(entry.path(), data);
  }
  std::ofstream(data + "/deviceNameCustomization.json") << kNamesFile;
  testing::AgentProcess agent(dir, {"--data-dir", data});
  testing::WaitForDeviceInfo(dir, [](const Json& d) {
    return absl::StrContains(d.value("DeviceInfoCfg", ""), R"("example.com/npu910":"npu910-0,)");
  });
  EXPECT_EQ(agent.Stop(), 0);
}

}  // namespace device_names_test
}  // namespace clusterd

#endif  // NPU_AGENT_BIN
