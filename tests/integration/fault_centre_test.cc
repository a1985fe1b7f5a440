// The fault centre end to end: a real clusterd on the `dir` store, the job's Kubernetes objects
// written as files, a real npu-agent (script fault source) reporting a SeparateNPU fault on the
// NPU the job's rank 11 uses. The fault must reach the cluster-info-device shard, a fault.Fault
// subscriber of the job, `clusterctl get faults` and GetFaultMsgSignal; its recovery must clear
// them. Public faults through PubFault.SendPublicFault get their documented return codes.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "../unit/cluster/fault_test_util.h"
#include "../unit/cluster/job_test_objects.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "common/subprocess.h"
#include "fault.grpc.pb.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "pubfault.grpc.pb.h"
#include "sim/clusterd_process.h"
#include "stream_reader.h"
#include "test_env.h"

namespace clusterd {
namespace fault_centre_test {

using cluster::testing::ExamplePod;
using cluster::testing::Json;
using cluster::testing::kJobUid;
using cluster::testing::NodeObject;
using cluster::testing::PodGroupObject;
using cluster::testing::PodObject;
using testing::TempDir;

constexpr absl::Duration kWait = absl::Seconds(30);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

class FaultCentreIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() + "/state";
    std::filesystem::create_directories(state_);
    sim::ClusterdProcess::Options options;
    options.binary = CLUSTERD_BIN;
    options.store = "dir:" + state_;
    options.work_dir = dir_.path() + "/run";
    auto proc = sim::ClusterdProcess::Start(options);
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = std::move(*proc);
    channel_ = client::MakeChannel(proc_->grpc_address());
    fault_ = ::fault::Fault::NewStub(channel_);
  }
  void TearDown() override {
    if (agent_.has_value()) {
      agent_->Signal(SIGTERM);
      (void)agent_->Wait(absl::Seconds(10));
    }
    if (HasFailure() && proc_ != nullptr) {
      std::cerr << "---- clusterd log ----\n" << ReadFile(proc_->log_path()) << "----\n";
      std::cerr << "---- npu-agent log ----\n" << ReadFile(dir_.path() + "/agent.err") << "----\n";
    }
  }

  void WriteObject(const std::string& resource, const Json& object) {
    clusterd::testing::WriteStoreObjectFile(state_, resource, object);
  }

  static Json ReadyNode(const std::string& name, const std::string& ip, const std::string& sn) {
    Json n = NodeObject(name, ip, sn);
    n["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
    return n;
  }

  // The 2 x 8 job of jobs-ranktable-diagnosis.md §2.2: rank 11 is NPU 3 of node-b.
  void WriteRunningJob() {
    WriteObject("nodes", ReadyNode("node-a", "192.168.0.11", "2102313LNR10P5100001"));
    WriteObject("nodes", ReadyNode("node-b", "192.168.0.12", "2102313LNR10P5100002"));
    WriteObject("podgroups", PodGroupObject({}));
    WriteObject("pods", PodObject(ExamplePod(0)));
    WriteObject("pods", PodObject(ExamplePod(1)));
    ASSERT_TRUE(WaitHttp("/api/clusterd/v1/jobs/" + std::string(kJobUid),
                         [](const Json& j) { return j.value("status", "") == "running"; }));
  }

  bool WaitHttp(const std::string& path, const std::function<bool(const Json&)>& pred) {
    httplib::Client http("http://" + proc_->http_address());
    const absl::Time deadline = absl::Now() + kWait;
    while (absl::Now() < deadline) {
      auto res = http.Get(path);
      if (res && res->status == 200) {
        Json body = Json::parse(res->body, nullptr, false);
        if (!body.is_discarded() && pred(body)) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // The data value of a cluster-info ConfigMap, as the dir store holds it.
  std::string ClusterInfo(const std::string& name) {
    const std::string text = ReadFile(state_ + "/configmaps/mindx-dl/" + name + ".json");
    Json cm = Json::parse(text, nullptr, false);
    if (cm.is_discarded() || !cm.contains("data")) return "";
    return cm["data"].value(name, "");
  }
  bool WaitClusterInfo(const std::string& name,
                       const std::function<bool(const std::string&)>& pred) {
    const absl::Time deadline = absl::Now() + kWait;
    while (absl::Now() < deadline) {
      if (pred(ClusterInfo(name))) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  void StartAgent(const std::string& script) {
    const std::string path = dir_.path() + "/faults.jsonl";
    std::ofstream(path) << script;
    std::vector<std::string> argv = {NPU_AGENT_BIN, "--node",         "node-b",
                                     "--store",     "dir:" + state_,  "--npus",
                                     "8",           "--fault-source", "script:" + path};
    auto proc = Subprocess::Start({argv, dir_.path() + "/agent.out", dir_.path() + "/agent.err"});
    ASSERT_TRUE(proc.ok()) << proc.status();
    agent_.emplace(*std::move(proc));
  }

  ::fault::FaultQueryResult Query(const std::string& job_id) {
    ::fault::ClientInfo info;
    info.set_jobid(job_id);
    info.set_role("taskd");
    grpc::ClientContext ctx;
    ::fault::FaultQueryResult result;
    grpc::Status st = fault_->GetFaultMsgSignal(&ctx, info, &result);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return result;
  }

  TempDir dir_;
  std::string state_;
  std::unique_ptr<sim::ClusterdProcess> proc_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::fault::Fault::Stub> fault_;
  std::optional<Subprocess> agent_;
};

#ifdef NPU_AGENT_BIN
TEST_F(FaultCentreIntegrationTest,
       NpuAgentSeparateNpuFaultReachesShardSubscriberAndClearsOnRecovery) {
  WriteRunningJob();

  ::fault::ClientInfo info;
  info.set_jobid(kJobUid);
  info.set_role("taskd");
  {
    grpc::ClientContext ctx;
    ::fault::Status status;
    grpc::Status st = fault_->Register(&ctx, info, &status);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(status.code(), 0);
    EXPECT_EQ(status.info(), "register success");
  }
  testing::StreamReader<::fault::FaultMsgSignal> stream(
      [&](grpc::ClientContext* ctx) { return fault_->SubscribeFaultMsgSignal(ctx, info); });
  size_t seen = 0;

  // A2301001 is a SeparateNPU code; it recovers 20 s later (time enough to look at it on a loaded
  // machine).
  StartAgent(R"({"at_ms": 0, "kind": "chip", "npu": 3, "code": "A2301001", "assertion": "occur"}
{"at_ms": 20000, "kind": "chip", "npu": 3, "code": "A2301001", "assertion": "recover"}
)");

  auto fault = stream.WaitFor(
      [](const ::fault::FaultMsgSignal& s) { return s.signaltype() == "fault"; }, &seen, kWait);
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->jobid(), kJobUid);
  ASSERT_EQ(fault->nodefaultinfo_size(), 1);
  const auto& node = fault->nodefaultinfo(0);
  EXPECT_EQ(node.nodename(), "node-b");
  EXPECT_EQ(node.nodeip(), "192.168.0.12");
  EXPECT_EQ(node.nodesn(), "2102313LNR10P5100002");
  EXPECT_EQ(node.faultlevel(), "UnHealthy");
  ASSERT_EQ(node.faultdevice_size(), 1);
  EXPECT_EQ(node.faultdevice(0).deviceid(), "3");
  EXPECT_EQ(node.faultdevice(0).devicetype(), "NPU");
  ASSERT_EQ(node.faultdevice(0).faultcodes_size(), 1);
  EXPECT_EQ(node.faultdevice(0).faultcodes(0), "A2301001");
  EXPECT_EQ(node.faultdevice(0).faultlevels(0), "SeparateNPU");
  EXPECT_FALSE(fault->uuid().empty());

  EXPECT_TRUE(WaitClusterInfo("cluster-info-device-0", [](const std::string& v) {
    return absl::StrContains(v, R"(\"npu_name\":\"Ascend910-3\")") &&
           absl::StrContains(v, R"("huawei.com/Ascend910-Unhealthy":"Ascend910-3")");
  })) << ClusterInfo("cluster-info-device-0");

  // The same view through GetFaultMsgSignal and clusterctl.
  {
    grpc::ClientContext ctx;
    ::fault::FaultQueryResult result;
    ASSERT_TRUE(fault_->GetFaultMsgSignal(&ctx, info, &result).ok());
    EXPECT_EQ(result.code(), 200);
    EXPECT_EQ(result.info(), "all info returned");
    EXPECT_EQ(result.faultsignal().nodefaultinfo_size(), 1);
  }
  testing::CommandResult ctl = testing::RunCommand(
      absl::StrCat(CLUSTERCTL_BIN, " --http ", proc_->http_address(), " get faults --job pt-2x8"));
  EXPECT_EQ(ctl.exit_code, 0) << ctl.output;
  EXPECT_TRUE(absl::StrContains(ctl.output, "node-b")) << ctl.output;
  EXPECT_TRUE(absl::StrContains(ctl.output, "A2301001")) << ctl.output;
  EXPECT_TRUE(absl::StrContains(ctl.output, "SeparateNPU")) << ctl.output;
  EXPECT_TRUE(absl::StrContains(ctl.output, kJobUid)) << ctl.output;

  // Recovery clears both.
  auto normal = stream.WaitFor(
      [](const ::fault::FaultMsgSignal& s) { return s.signaltype() == "normal"; }, &seen, kWait);
  ASSERT_TRUE(normal.has_value());
  EXPECT_EQ(normal->jobid(), kJobUid);
  EXPECT_EQ(normal->nodefaultinfo_size(), 0);
  EXPECT_TRUE(WaitClusterInfo("cluster-info-device-0", [](const std::string& v) {
    return !v.empty() && !absl::StrContains(v, "A2301001");
  })) << ClusterInfo("cluster-info-device-0");
  {
    ::fault::FaultQueryResult result = Query(kJobUid);
    EXPECT_EQ(result.info(), "all info returned");
    EXPECT_EQ(result.faultsignal().signaltype(), "normal");
  }
}
#endif

// GetFaultMsgSignal as the original answers it: a job the registry knows gets "all info returned"
// even when healthy (a `normal` signal like the stream's), an unknown one "not found".
TEST_F(FaultCentreIntegrationTest, GetFaultMsgSignalAnswersAHealthyKnownJobWithANormalSignal) {
  WriteRunningJob();
  ::fault::FaultQueryResult result = Query(kJobUid);
  EXPECT_EQ(result.code(), 200);
  EXPECT_EQ(result.info(), "all info returned");
  ASSERT_TRUE(result.has_faultsignal());
  EXPECT_EQ(result.faultsignal().jobid(), kJobUid);
  EXPECT_EQ(result.faultsignal().signaltype(), "normal");
  EXPECT_EQ(result.faultsignal().nodefaultinfo_size(), 0);
  EXPECT_FALSE(result.faultsignal().uuid().empty());

  ::fault::FaultQueryResult unknown = Query("no-such-job-0001");
  EXPECT_EQ(unknown.code(), 200);
  EXPECT_EQ(unknown.info(), "job with jobId: no-such-job-0001 not found fault info");
  EXPECT_FALSE(unknown.has_faultsignal());
}

// The query shows every level of the job's faults: NotHandleFault entries too (only the streams
// drop them).
TEST_F(FaultCentreIntegrationTest, GetFaultMsgSignalShowsAJobsNotHandleFaults) {
  WriteRunningJob();
  cluster::testing::NodeSpec node;
  node.node = "node-b";
  node.faults = {
      cluster::testing::ChipFault("Ascend910-3", "NotHandleFault", {{"80E21007", 1741056919000}})};
  WriteObject("configmaps", cluster::testing::DeviceInfoConfigMap(node));

  ::fault::FaultQueryResult result;
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    result = Query(kJobUid);
    if (result.faultsignal().nodefaultinfo_size() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // under the 10/s query limit
  }
  EXPECT_EQ(result.code(), 200);
  EXPECT_EQ(result.info(), "all info returned");
  EXPECT_EQ(result.faultsignal().jobid(), kJobUid);
  EXPECT_EQ(result.faultsignal().signaltype(), "fault");
  ASSERT_EQ(result.faultsignal().nodefaultinfo_size(), 1);
  const auto& n = result.faultsignal().nodefaultinfo(0);
  EXPECT_EQ(n.nodename(), "node-b");
  EXPECT_EQ(n.faultlevel(), "Healthy");
  ASSERT_EQ(n.faultdevice_size(), 1);
  EXPECT_EQ(n.faultdevice(0).deviceid(), "3");
  EXPECT_EQ(n.faultdevice(0).devicetype(), "NPU");
  EXPECT_EQ(n.faultdevice(0).faultlevel(), "Healthy");
  ASSERT_EQ(n.faultdevice(0).faultcodes_size(), 1);
  EXPECT_EQ(n.faultdevice(0).faultcodes(0), "80E21007");
  ASSERT_EQ(n.faultdevice(0).faultlevels_size(), 1);
  EXPECT_EQ(n.faultdevice(0).faultlevels(0), "NotHandleFault");
}

TEST_F(FaultCentreIntegrationTest, PublicFaultsAreValidatedMergedAndListed) {
  WriteObject("nodes", ReadyNode("node-1", "192.168.0.21", "SN-1"));
  auto pub = ::PubFault::NewStub(channel_);
  ::PublicFaultRequest req;
  req.set_id("a1b2c3d4-0001");
  req.set_timestamp(1741056920000);
  req.set_version("1.0");
  req.set_resource("CCAE");
  ::Fault* f = req.add_faults();
  f->set_faultid("fault-0001");
  f->set_faulttype("NPU");
  f->set_faultcode("220001001");
  f->set_faulttime(1741056919000);
  f->set_assertion("occur");
  ::PubFaultInfo* inf = f->add_influence();
  inf->set_nodename("node-1");
  inf->add_deviceids(0);
  {
    grpc::ClientContext ctx;
    ::RespStatus resp;
    ASSERT_TRUE(pub->SendPublicFault(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.code(), 0);
    EXPECT_EQ(resp.info(), "public fault send successfully");
  }
  {
    ::PublicFaultRequest bad = req;
    bad.set_version("2.0");
    grpc::ClientContext ctx;
    ::RespStatus resp;
    ASSERT_TRUE(pub->SendPublicFault(&ctx, bad, &resp).ok());
    EXPECT_EQ(resp.code(), 409);
    EXPECT_EQ(resp.info(), "check public fault info failed, error: invalid version");
  }
  {
    ::PublicFaultRequest early = req;
    early.set_timestamp(1735689599999);  // 1 ms before 2025-01-01T00:00:00Z
    grpc::ClientContext ctx;
    ::RespStatus resp;
    ASSERT_TRUE(pub->SendPublicFault(&ctx, early, &resp).ok());
    EXPECT_EQ(resp.code(), 409);
    EXPECT_EQ(resp.info(),
              "check public fault info failed, error: invalid timestamp, can not before "
              "2025/01/01T00:00:00Z");
  }
  {
    ::PublicFaultRequest none = req;
    none.clear_faults();
    grpc::ClientContext ctx;
    ::RespStatus resp;
    ASSERT_TRUE(pub->SendPublicFault(&ctx, none, &resp).ok());
    EXPECT_EQ(resp.code(), 409);
    EXPECT_EQ(resp.info(), "check public fault info failed, error: invalid faults length");
  }
  {
    ::PublicFaultRequest unknown = req;
    unknown.set_resource("nobody");
    grpc::ClientContext ctx;
    ::RespStatus resp;
    ASSERT_TRUE(pub->SendPublicFault(&ctx, unknown, &resp).ok());
    EXPECT_EQ(resp.code(), 410);
  }
  // statistic-fault-info records it; once node-1 has a device-info record the fault is merged.
  EXPECT_TRUE(WaitHttp("/api/v1/namespaces/cluster-system/configmaps/statistic-fault-info",
                       [](const Json& cm) {
                         return cm["data"].value("FaultNum", "") == R"({"publicFaultNum":1})";
                       }));
  // The cluster-wide Fault view needs no job.
  ::fault::ClientInfo all;
  grpc::ClientContext ctx;
  ::fault::FaultQueryResult result;
  ASSERT_TRUE(fault_->GetFaultMsgSignal(&ctx, all, &result).ok());
  EXPECT_EQ(result.code(), 200);
  EXPECT_EQ(result.info(), "Succeed");
  EXPECT_EQ(result.faultsignal().jobid(), "-1");
}

TEST_F(FaultCentreIntegrationTest, RegisterRefusesUnknownJobsAndEmptyRoles) {
  ::fault::ClientInfo info;
  info.set_jobid("no-such-job-0001");
  info.set_role("taskd");
  grpc::ClientContext ctx;
  ::fault::Status status;
  grpc::Status st = fault_->Register(&ctx, info, &status);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "not exist and is not multi-instance"));
  info.set_role("");
  grpc::ClientContext ctx2;
  EXPECT_FALSE(fault_->Register(&ctx2, info, &status).ok());
}

}  // namespace fault_centre_test
}  // namespace clusterd

namespace clusterd {
namespace fault_centre_test {

// More nodes than --max-nodes: the running daemon says so on /readyz and in a gauge, and
// keeps serving (the refused node is named, not silently left out).
TEST(FaultCentreRecordLimit, NodesPastMaxNodesAreNamedOnReadyzAndCounted) {
  testing::TempDir dir;
  const std::string state = dir.path() + "/state";
  for (const char* node : {"node-1", "node-2", "node-3"}) {
    cluster::testing::NodeSpec spec;
    spec.node = node;
    const Json cm = cluster::testing::DeviceInfoConfigMap(spec);
    const std::string ns = cm["metadata"]["namespace"];
    const std::string name = cm["metadata"]["name"];
    std::filesystem::create_directories(state + "/configmaps/" + ns);
    std::ofstream(state + "/configmaps/" + ns + "/" + name + ".json") << cm.dump();
  }
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/run";
  options.extra_args = {"--max-nodes", "2"};
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  httplib::Client http("http://" + (*proc)->http_address());
  auto readyz = http.Get("/readyz");
  ASSERT_TRUE(readyz);
  EXPECT_EQ(readyz->status, 200);
  EXPECT_TRUE(absl::StrContains(readyz->body, "note: 1 nodes' device-info refused")) << readyz->body;
  EXPECT_TRUE(absl::StrContains(readyz->body, "at most 2 nodes (--max-nodes), e.g. node-3"))
      << readyz->body;
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_TRUE(absl::StrContains(metrics->body, "clusterd_fault_centre_refused_nodes 1\n"));
}

}  // namespace fault_centre_test
}  // namespace clusterd
