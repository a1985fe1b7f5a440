// The job registry end to end: a real clusterd on the `dir` store, Kubernetes objects written by
// the test as files (as the scheduler, the operator or an editor would), and gRPC clients of the
// job.Job, config.Config and TrainingDataTrace services receiving what
// jobs-ranktable-diagnosis.md §2-§3 and §5 say they receive.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "../unit/cluster/job_test_objects.h"
#include "../unit/cluster/rank_table_golden.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "config.grpc.pb.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "job.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "profiling.grpc.pb.h"
#include "sim/clusterd_process.h"
#include "stream_reader.h"
#include "test_env.h"

namespace clusterd {
namespace job_registry_test {

using cluster::testing::ExamplePod;
using cluster::testing::Json;
using cluster::testing::NodeObject;
using cluster::testing::PodGroupObject;
using cluster::testing::PodGroupSpec;
using cluster::testing::PodObject;
using cluster::testing::PodSpec;
using testing::StreamReader;
using testing::TempDir;

class JobRegistryIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() + "/state";
    StartClusterd({});
  }

  void StartClusterd(std::vector<std::string> extra_args) {
    sim::ClusterdProcess::Options options;
    options.binary = CLUSTERD_BIN;
    options.store = "dir:" + state_;
    options.work_dir = dir_.path() + "/run";
    options.extra_args = std::move(extra_args);
    auto proc = sim::ClusterdProcess::Start(options);
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = std::move(*proc);
    channel_ = client::MakeChannel(proc_->grpc_address());
  }
  void StopClusterd() {
    EXPECT_EQ(proc_->Stop().value_or(-1), 0);
    proc_.reset();
  }

  void TearDown() override {
    if (HasFailure() && proc_ != nullptr) {
      std::ifstream log(proc_->log_path());
      std::cerr << "---- clusterd log ----\n" << log.rdbuf() << "----\n";
    }
  }

  // Writes `object` as another process would: a complete file renamed into place.
  void WriteObject(const std::string& resource, const Json& object) {
    clusterd::testing::WriteStoreObjectFile(state_, resource, object);
  }
  void RemoveObject(const std::string& resource, const std::string& ns, const std::string& name) {
    std::filesystem::remove(std::filesystem::path(state_) / resource / ns / (name + ".json"));
  }

  // A ConfigMap through clusterd's HTTP view of the store.
  std::optional<Json> ConfigMap(const std::string& ns, const std::string& name) {
    httplib::Client http("http://" + proc_->http_address());
    auto res = http.Get(absl::StrCat("/api/v1/namespaces/", ns, "/configmaps/", name));
    if (!res || res->status != 200) return std::nullopt;
    return Json::parse(res->body);
  }

  std::string RegisterJobClient(const std::string& role = "CCAgent") {
    auto stub = ::job::Job::NewStub(channel_);
    grpc::ClientContext ctx;
    ::job::ClientInfo req;
    req.set_role(role);
    ::job::Status resp;
    grpc::Status st = stub->Register(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.code(), 200);
    EXPECT_EQ(resp.info(), "registration successful");
    return resp.clientid();
  }

  void WriteExampleJob() {
    WriteObject("nodes", NodeObject("node-a", "192.168.0.11", "2102313LNR10P5100001"));
    WriteObject("nodes", NodeObject("node-b", "192.168.0.12", "2102313LNR10P5100002"));
    WriteObject("podgroups", PodGroupObject({}));
  }
  void WriteExamplePods() {
    PodSpec a = ExamplePod(0), b = ExamplePod(1);
    a.master_addr_env = b.master_addr_env = "192.168.0.11";
    WriteObject("pods", PodObject(a));
    WriteObject("pods", PodObject(b));
  }

  // A MindIE deployment (§2.4): a coordinator and a controller, each a job of one pod, and one
  // server instance's rings-config ConfigMap.
  void WriteMindIeDeployment() {
    for (const char* app : {"mindie-ms-coordinator", "mindie-ms-controller"}) {
      const bool coordinator = absl::StrContains(app, "coordinator");
      PodGroupSpec pg;
      pg.name = absl::StrCat(app, "-pg");
      pg.uid = absl::StrCat(app, "-pg-uid");
      pg.owner_uid = absl::StrCat(app, "-uid");
      pg.owner_name = app;
      pg.min_member = 1;
      pg.min_resource = "";
      pg.labels = {{"jobID", "mindie-job-001"}, {"app", app}};
      WriteObject("podgroups", PodGroupObject(pg));
      PodSpec pod;
      pod.name = absl::StrCat(app, "-0");
      pod.uid = absl::StrCat(app, "-pod-uid");
      pod.owner_uid = pg.owner_uid;
      pod.owner_name = app;
      pod.rank_index = "";
      pod.needs_npu = false;
      pod.with_allocation = false;
      pod.host_ip = coordinator ? "192.168.0.30" : "192.168.0.31";
      pod.labels = {{"jobID", "mindie-job-001"}, {"app", app}};
      Json object = PodObject(pod);
      object["status"]["podIP"] = coordinator ? "172.16.5.7" : "172.16.5.9";
      WriteObject("pods", object);
    }
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
    Json hccl = {{"status", "completed"},
                 {"server_list", servers},
                 {"server_count", "2"},
                 {"version", "1.0"}};
    WriteObject("configmaps", Json{{"apiVersion", "v1"},
                                   {"kind", "ConfigMap"},
                                   {"metadata",
                                    {{"name", "rings-config-mindie-server-0"},
                                     {"namespace", "default"},
                                     {"labels",
                                      {{"jobID", "mindie-job-001"},
                                       {"grt-group/deploy-server", "0"},
                                       {"mx-consumer-cim", "true"}}}}},
                                   {"data", {{"hccl.json", hccl.dump()}}}});
  }

  // A Config client of the deployment registers and receives its global rank table (§2.6).
  void ExpectGlobalRankTable() {
    auto stub = ::config::Config::NewStub(channel_);
    {
      grpc::ClientContext ctx;
      ::config::ClientInfo req;
      req.set_jobid("mindie-job-001");
      req.set_role("mindie");
      ::config::Status resp;
      ASSERT_TRUE(stub->Register(&ctx, req, &resp).ok());
      EXPECT_EQ(resp.code(), 0);
      EXPECT_EQ(resp.info(), "register success");
    }
    ::config::ClientInfo req;
    req.set_jobid("mindie-job-001");
    req.set_role("mindie");
    StreamReader<::config::RankTableStream> stream(
        [&](grpc::ClientContext* ctx) { return stub->SubscribeRankTable(ctx, req); });
    auto table = stream.WaitFor([](const auto&) { return true; });
    ASSERT_TRUE(table.has_value());
    EXPECT_EQ(table->jobid(), "mindie-job-001");
    EXPECT_EQ(table->ranktable(), cluster::testing::kGlobalRankTableExample26);
  }

  TempDir dir_;
  std::string state_;
  std::unique_ptr<sim::ClusterdProcess> proc_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(JobRegistryIntegrationTest, AJobClientReceivesTheSummariesOfAJobFromStartToDeletion) {
  const std::string client_id = RegisterJobClient();
  auto stub = ::job::Job::NewStub(channel_);
  ::job::ClientInfo req;
  req.set_role("CCAgent");
  req.set_clientid(client_id);
  StreamReader<::job::JobSummarySignal> stream(
      [&](grpc::ClientContext* ctx) { return stub->SubscribeJobSummarySignal(ctx, req); });

  WriteExampleJob();
  size_t seen = 0;
  auto init = stream.WaitFor([](const auto& s) { return s.jobname() == "pt-2x8"; }, &seen);
  ASSERT_TRUE(init.has_value());
  EXPECT_EQ(init->operator_(), "add");
  EXPECT_EQ(init->jobstatus(), "pending");
  EXPECT_EQ(init->hccljson(), R"({"status":"initializing"})");
  EXPECT_EQ(init->jobid(), cluster::testing::kJobUid);
  EXPECT_EQ(init->namespace_(), "default");
  EXPECT_EQ(init->framework(), "pytorch");

  WriteExamplePods();
  auto running = stream.WaitFor([](const auto& s) { return s.jobstatus() == "running"; }, &seen);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->operator_(), "add");
  EXPECT_EQ(running->hccljson(), cluster::testing::kRankTableExample22);
  EXPECT_EQ(running->masteraddr(), "192.168.0.11");
  EXPECT_EQ(running->total(), "1");
  EXPECT_EQ(running->cmindex(), "0");
  EXPECT_EQ(running->deletetime(), "");

  auto cm = ConfigMap("default", "job-summary-pt-2x8");
  ASSERT_TRUE(cm.has_value());
  EXPECT_EQ((*cm)["data"]["hccl.json"], cluster::testing::kRankTableExample22);
  EXPECT_EQ((*cm)["data"]["job_status"], "running");
  EXPECT_EQ((*cm)["metadata"]["labels"]["outside-job-info"], "true");

  RemoveObject("pods", "default", "pt-2x8-master-0");
  RemoveObject("pods", "default", "pt-2x8-worker-0");
  RemoveObject("podgroups", "default", "pt-2x8-pg");
  auto deleted = stream.WaitFor([](const auto& s) { return s.operator_() == "delete"; }, &seen);
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ(deleted->jobstatus(), "failed");
  EXPECT_FALSE(deleted->deletetime().empty());
  // The signal carries the last rank table built; how many pods it holds depends on how the
  // removals coalesced. The pre-deleted ConfigMap carries that table's slice, or, when the table
  // has no server left, {"status":"initializing"} (jobs-ranktable-diagnosis.md §3.5: pre-delete
  // recomputes the slices, and zero servers give none).
  const Json last_table = Json::parse(deleted->hccljson());
  const bool no_server = last_table.value("server_count", "") == "0";
  cm = ConfigMap("default", "job-summary-pt-2x8");
  ASSERT_TRUE(cm.has_value());
  EXPECT_EQ((*cm)["data"]["operator"], "delete");
  EXPECT_EQ((*cm)["data"]["hccl.json"],
            no_server ? std::string(R"({"status":"initializing"})") : deleted->hccljson());
}

TEST_F(JobRegistryIntegrationTest, AListSubscriptionStartsWithTheSnapshot) {
  {
    // Wait until the job runs, as a plain subscriber sees it.
    const std::string watcher = RegisterJobClient();
    auto stub = ::job::Job::NewStub(channel_);
    ::job::ClientInfo req;
    req.set_role("CCAgent");
    req.set_clientid(watcher);
    StreamReader<::job::JobSummarySignal> stream(
        [&](grpc::ClientContext* ctx) { return stub->SubscribeJobSummarySignal(ctx, req); });
    WriteExampleJob();
    WriteExamplePods();
    ASSERT_TRUE(
        stream.WaitFor([](const auto& s) { return s.jobstatus() == "running"; }).has_value());
  }

  const std::string client_id = RegisterJobClient("FdAgent");
  auto stub = ::job::Job::NewStub(channel_);
  ::job::ClientInfo req;
  req.set_role("FdAgent");
  req.set_clientid(client_id);
  StreamReader<::job::JobSummarySignalList> stream(
      [&](grpc::ClientContext* ctx) { return stub->SubscribeJobSummarySignalList(ctx, req); });
  auto snapshot = stream.WaitFor([](const auto&) { return true; });
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->jobtotalnum(), 1);
  ASSERT_EQ(snapshot->jobsummarysignals_size(), 1);
  EXPECT_EQ(snapshot->jobsummarysignals(0).hccljson(), cluster::testing::kRankTableExample22);
  EXPECT_EQ(snapshot->jobsummarysignals(0).operator_(), "add");
  EXPECT_FALSE(snapshot->reporttime().empty());
}

TEST_F(JobRegistryIntegrationTest, SubscriptionsNeedARegisteredClient) {
  auto stub = ::job::Job::NewStub(channel_);
  ::job::ClientInfo req;
  req.set_role("CCAgent");
  req.set_clientid("nobody");
  StreamReader<::job::JobSummarySignal> stream(
      [&](grpc::ClientContext* ctx) { return stub->SubscribeJobSummarySignal(ctx, req); });
  grpc::Status st = stream.WaitDone();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_TRUE(
      absl::StartsWith(st.error_message(), "invalid clientId: nobody, please register first"))
      << st.error_message();

  grpc::ClientContext ctx;
  ::job::ClientInfo bad_role;
  bad_role.set_role("Intruder");
  ::job::Status resp;
  grpc::Status reg = stub->Register(&ctx, bad_role, &resp);
  EXPECT_EQ(reg.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_TRUE(absl::StartsWith(reg.error_message(), "role:Intruder is not in whitelist:"))
      << reg.error_message();
}

// §2.6: one coordinator, one controller, one 2x8 server instance.
TEST_F(JobRegistryIntegrationTest, AConfigClientReceivesTheGlobalRankTable) {
  WriteMindIeDeployment();
  ExpectGlobalRankTable();
}

// In the window after a first start, before the job registry has reconciled the deployment's
// jobs (here one reconcile every 1,000 s, so the window stays open however slow the machine),
// the global rank table is built from what the store holds: it reads the registry's cache of
// pods and the rings-config ConfigMaps, not the job summaries the reconciles write.
TEST_F(JobRegistryIntegrationTest, TheGlobalRankTableIsServedBeforeTheRegistryReconciles) {
  StopClusterd();
  WriteMindIeDeployment();
  StartClusterd({"--job-reconcile-rate", "0.001", "--job-reconcile-burst", "1"});
  ExpectGlobalRankTable();
  httplib::Client http("http://" + proc_->http_address());
  auto jobs = http.Get("/api/clusterd/v1/jobs");
  ASSERT_TRUE(jobs && jobs->status == 200);
  EXPECT_LT(Json::parse(jobs->body)["items"].size(), 2u) << "both jobs reconciled already";
}

// §5: TaskD subscribes to its job's switches; an operator switches profiling on; the
// data-trace ConfigMap appears and the subscriber is told.
TEST_F(JobRegistryIntegrationTest, ProfilingSwitchesReachTheConfigMapAndTheSubscriber) {
  {
    const std::string watcher = RegisterJobClient();
    auto stub = ::job::Job::NewStub(channel_);
    ::job::ClientInfo req;
    req.set_role("CCAgent");
    req.set_clientid(watcher);
    StreamReader<::job::JobSummarySignal> stream(
        [&](grpc::ClientContext* ctx) { return stub->SubscribeJobSummarySignal(ctx, req); });
    WriteExampleJob();
    for (int rank : {0, 1}) {
      PodSpec p = ExamplePod(rank);
      p.data_trace_mount = true;
      WriteObject("pods", PodObject(p));
    }
    ASSERT_TRUE(
        stream.WaitFor([](const auto& s) { return s.jobstatus() == "running"; }).has_value());
  }
  auto stub = ::TrainingDataTrace::NewStub(channel_);
  ::ProfilingClientInfo who;
  who.set_jobid(cluster::testing::kJobUid);
  who.set_role("taskd");
  StreamReader<::DataStatusRes> switches(
      [&](grpc::ClientContext* ctx) { return stub->SubscribeDataTraceSwitch(ctx, who); });

  ::DataTypeReq change;
  change.set_jobnsname("default/pt-2x8");
  change.mutable_profilingswitch()->set_communicationoperator("off");
  change.mutable_profilingswitch()->set_step("on");
  change.mutable_profilingswitch()->set_savecheckpoint("on");
  change.mutable_profilingswitch()->set_fp("on");
  change.mutable_profilingswitch()->set_dataloader("on");
  // The subscription may still be on its way: retry until the subscriber was told.
  std::optional<::DataStatusRes> told;
  for (int attempt = 0; attempt < 50 && !told.has_value(); ++attempt) {
    grpc::ClientContext ctx;
    ::DataTypeRes res;
    grpc::Status st = stub->ModifyTrainingDataTraceSwitch(&ctx, change, &res);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(res.code(), 200);
    EXPECT_EQ(res.message(), "successfully changed profiling marker enable status");
    told = switches.WaitFor([](const auto&) { return true; }, nullptr, absl::Milliseconds(400));
  }
  ASSERT_TRUE(told.has_value());
  EXPECT_EQ(told->message(), "update profiling switch");
  EXPECT_EQ(told->code(), 200);
  EXPECT_EQ(told->profilingswitch().step(), "on");
  EXPECT_EQ(told->profilingswitch().communicationoperator(), "off");

  auto cm = ConfigMap("default", "data-trace-pt-2x8");
  ASSERT_TRUE(cm.has_value());
  EXPECT_EQ(
      (*cm)["data"]["profilingSwitch"],
      R"({"CommunicationOperator":"off","Step":"on","SaveCheckpoint":"on","FP":"on","DataLoader":"on"})");
  EXPECT_EQ((*cm)["metadata"]["labels"]["reset"], "true");
  EXPECT_EQ((*cm)["metadata"]["ownerReferences"][0]["uid"], cluster::testing::kJobUid);

  grpc::ClientContext ctx;
  ::DataStatusReq get;
  get.set_jobnsname("default/pt-2x8");
  ::DataStatusRes status;
  ASSERT_TRUE(stub->GetTrainingDataTraceSwitch(&ctx, get, &status).ok());
  EXPECT_EQ(status.code(), 200);
  EXPECT_EQ(status.message(), "successfully get the status of job[default/pt-2x8]");
  EXPECT_EQ(status.profilingswitch().dataloader(), "on");

  grpc::ClientContext bad_ctx;
  ::DataTypeReq bad;
  bad.set_jobnsname("no-namespace");
  ::DataTypeRes bad_res;
  grpc::Status bad_status = stub->ModifyTrainingDataTraceSwitch(&bad_ctx, bad, &bad_res);
  EXPECT_EQ(bad_status.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_TRUE(absl::StartsWith(bad_status.error_message(),
                               "the format of jobNsName is not namespace/jobName"))
      << bad_status.error_message();
}

TEST_F(JobRegistryIntegrationTest, ClusterctlShowsJobsRankTablesAndSwitchesProfiling) {
  {
    const std::string watcher = RegisterJobClient();
    auto stub = ::job::Job::NewStub(channel_);
    ::job::ClientInfo req;
    req.set_role("CCAgent");
    req.set_clientid(watcher);
    StreamReader<::job::JobSummarySignal> stream(
        [&](grpc::ClientContext* ctx) { return stub->SubscribeJobSummarySignal(ctx, req); });
    WriteExampleJob();
    for (int rank : {0, 1}) {
      PodSpec p = ExamplePod(rank);
      p.data_trace_mount = true;
      WriteObject("pods", PodObject(p));
    }
    ASSERT_TRUE(
        stream.WaitFor([](const auto& s) { return s.jobstatus() == "running"; }).has_value());
  }
  auto ctl = [&](const std::string& args) {
    return testing::RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", proc_->grpc_address(),
                                            " --http ", proc_->http_address(), " ", args));
  };
  testing::CommandResult jobs = ctl("get jobs");
  ASSERT_EQ(jobs.exit_code, 0) << jobs.output;
  EXPECT_TRUE(absl::StrContains(jobs.output, "JOB ID")) << jobs.output;
  EXPECT_TRUE(absl::StrContains(jobs.output, "pt-2x8")) << jobs.output;
  EXPECT_TRUE(absl::StrContains(jobs.output, cluster::testing::kJobUid)) << jobs.output;
  EXPECT_TRUE(absl::StrContains(jobs.output, "running")) << jobs.output;
  EXPECT_TRUE(absl::StrContains(jobs.output, "pytorch")) << jobs.output;

  testing::CommandResult all = ctl("get jobs -A -o json");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  Json list = Json::parse(all.output);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["replicas"], 2);
  EXPECT_EQ(list["items"][0]["npus"], 16);
  // Which NPUs of which node it holds (clusterctl get npus shows the holder).
  ASSERT_EQ(list["items"][0]["placement"].size(), 2u);
  EXPECT_EQ(list["items"][0]["placement"][0]["npus"].size(), 8u);
  testing::CommandResult nodes =
      ctl("get jobs -A -o 'jsonpath={range .items[*].placement[*]}{.node}:{.npus[0]} {end}'");
  ASSERT_EQ(nodes.exit_code, 0) << nodes.output;
  EXPECT_EQ(nodes.output, "node-a:0 node-b:0 ");
  testing::CommandResult wide = ctl("get jobs -o wide");
  ASSERT_EQ(wide.exit_code, 0) << wide.output;
  EXPECT_TRUE(absl::StrContains(wide.output, "PODGROUP")) << wide.output;
  EXPECT_TRUE(absl::StrContains(wide.output, "node-a,node-b")) << wide.output;
  EXPECT_FALSE(absl::StrContains(jobs.output, "PODGROUP")) << jobs.output;

  testing::CommandResult table = ctl("get ranktable pt-2x8 -o json");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_EQ(Json::parse(table.output), Json::parse(cluster::testing::kRankTableExample22));
  testing::CommandResult servers = ctl("get ranktable pt-2x8");
  ASSERT_EQ(servers.exit_code, 0) << servers.output;
  EXPECT_TRUE(absl::StrContains(servers.output, "status: complete, servers: 2")) << servers.output;
  EXPECT_TRUE(absl::StrContains(servers.output, "8-15")) << servers.output;

  testing::CommandResult missing = ctl("get ranktable no-such-job");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(absl::StrContains(missing.output, "not found")) << missing.output;

  testing::CommandResult on = ctl("datatrace on pt-2x8");
  ASSERT_EQ(on.exit_code, 0) << on.output;
  auto cm = ConfigMap("default", "data-trace-pt-2x8");
  ASSERT_TRUE(cm.has_value());
  EXPECT_EQ(
      (*cm)["data"]["profilingSwitch"],
      R"({"CommunicationOperator":"off","Step":"on","SaveCheckpoint":"on","FP":"on","DataLoader":"on"})");
  testing::CommandResult get = ctl("datatrace get pt-2x8 -o json");
  ASSERT_EQ(get.exit_code, 0) << get.output;
  EXPECT_EQ(Json::parse(get.output)["profilingSwitch"]["Step"], "on");
  testing::CommandResult off = ctl("datatrace off pt-2x8");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(
      (*ConfigMap("default", "data-trace-pt-2x8"))["data"]["profilingSwitch"],
      R"({"CommunicationOperator":"off","Step":"off","SaveCheckpoint":"off","FP":"off","DataLoader":"off"})");
}

TEST_F(JobRegistryIntegrationTest, RankTableSubscriptionWithoutRegisterIsRefused) {
  auto stub = ::config::Config::NewStub(channel_);
  ::config::ClientInfo req;
  req.set_jobid("never-registered");
  req.set_role("mindie");
  StreamReader<::config::RankTableStream> stream(
      [&](grpc::ClientContext* ctx) { return stub->SubscribeRankTable(ctx, req); });
  grpc::Status st = stream.WaitDone();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_TRUE(
      absl::StartsWith(st.error_message(), "jobId=never-registered not registered, role=mindie"))
      << st.error_message();
}

}  // namespace job_registry_test
}  // namespace clusterd
