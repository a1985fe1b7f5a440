// The Recover service end to end (recovery-protocol.md §2, §5, §15): a real clusterd on the
// `dir` store, a training job written as files (PodGroup with process-recover-enable=on, two
// pods, the reset ConfigMap), and a client on the generated C++ stubs driving Init, Register,
// SubscribeProcessManageSignal and the reports, as TaskD does.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "../unit/cluster/job_test_objects.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "recover.grpc.pb.h"
#include "sim/clusterd_process.h"
#include "test_env.h"

namespace clusterd {
namespace recover_service_test {

using cluster::testing::ExamplePod;
using cluster::testing::Json;
using cluster::testing::kJobUid;
using cluster::testing::PodGroupObject;
using cluster::testing::PodGroupSpec;
using cluster::testing::PodObject;
using cluster::testing::PodSpec;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

constexpr absl::Duration kWait = absl::Seconds(25);

// The ProcessManageSignal stream, read on a thread of its own.
class SignalReader {
 public:
  SignalReader(::Recover::Stub& stub, const std::string& job_id) {
    ::ClientInfo req;
    req.set_jobid(job_id);
    req.set_role("taskd");
    reader_ = stub.SubscribeProcessManageSignal(&ctx_, req);
    thread_ = std::thread([this] {
      ::ProcessManageSignal m;
      while (reader_->Read(&m)) {
        absl::MutexLock lock(&mu_);
        messages_.push_back(m);
        changed_.SignalAll();
      }
      grpc::Status st = reader_->Finish();
      absl::MutexLock lock(&mu_);
      status_ = st;
      done_ = true;
      changed_.SignalAll();
    });
  }
  ~SignalReader() {
    ctx_.TryCancel();
    thread_.join();
  }
  void Cancel() { ctx_.TryCancel(); }

  // The first signal of `type` after index *from (advanced past it), or nullopt.
  std::optional<::ProcessManageSignal> WaitFor(const std::string& type, size_t* from,
                                               absl::Duration wait = kWait) {
    absl::MutexLock lock(&mu_);
    std::optional<::ProcessManageSignal> found;
    auto ready = [&] {
      for (size_t i = *from; i < messages_.size(); ++i) {
        if (messages_[i].signaltype() == type) {
          found = messages_[i];
          *from = i + 1;
          return true;
        }
      }
      return done_;
    };
    const absl::Time deadline = absl::Now() + wait;
    while (!ready()) {
      if (changed_.WaitWithDeadline(&mu_, deadline)) {  // timed out: one last look
        ready();
        break;
      }
    }
    return found;
  }
  // The stream's final status, or nullopt if it is still open after `wait`.
  std::optional<grpc::Status> WaitDone(absl::Duration wait = kWait) {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + wait;
    while (!done_) {
      if (changed_.WaitWithDeadline(&mu_, deadline)) break;
    }
    if (!done_) return std::nullopt;
    return status_;
  }
  std::vector<std::string> Types() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& m : messages_) out.push_back(m.signaltype());
    return out;
  }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<::ProcessManageSignal>> reader_;
  std::thread thread_;
  absl::Mutex mu_;
  absl::CondVar changed_;  // messages_ or done_ changed
  std::vector<::ProcessManageSignal> messages_;
  bool done_ = false;
  grpc::Status status_;
};

class RecoverServiceIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() + "/state";
    sim::ClusterdProcess::Options options;
    options.binary = CLUSTERD_BIN;
    options.store = "dir:" + state_;
    options.work_dir = dir_.path() + "/run";
    auto proc = sim::ClusterdProcess::Start(options);
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = std::move(*proc);
    stub_ = ::Recover::NewStub(client::MakeChannel(proc_->grpc_address()));
  }

  void TearDown() override {
    if (HasFailure() && proc_ != nullptr) {
      std::ifstream log(proc_->log_path());
      std::cerr << "---- clusterd log ----\n" << log.rdbuf() << "----\n";
    }
  }

  void WriteObject(const std::string& resource, const Json& object) {
    clusterd::testing::WriteStoreObjectFile(state_, resource, object);
  }

  // AscendJob default/pt-2x8 (uid kJobUid), PodGroup pt-2x8-pg with process recovery on and
  // strategy `recover`, two pods of 8 NPUs, and its reset ConfigMap.
  void WriteRecoverableJob(bool recover_on = true, const std::string& job_uid = kJobUid) {
    PodGroupSpec g;
    g.owner_uid = job_uid;
    if (recover_on) g.labels.emplace_back("process-recover-enable", "on");
    g.annotations.emplace_back("recover-strategy", "recover");
    Json pg = PodGroupObject(g);
    pg["status"] = {{"phase", "Running"}};
    WriteObject("podgroups", pg);
    for (int rank = 0; rank < 2; ++rank) {
      PodSpec p = ExamplePod(rank);
      p.extra_annotations.emplace_back("scheduling.k8s.io/group-name", "pt-2x8-pg");
      p.extra_annotations.emplace_back("huawei.com/AscendReal", "Ascend910-0");
      WriteObject("pods", PodObject(p));
    }
    WriteObject(
        "configmaps",
        Json{{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "reset-config-pt-2x8"}, {"namespace", "default"}}},
             {"data", {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}}});
  }

  ::Status Call(const std::string& method, const std::string& job_id) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ::ClientInfo req;
    req.set_jobid(job_id);
    req.set_role("taskd");
    ::Status resp;
    grpc::Status st =
        method == "Init" ? stub_->Init(&ctx, req, &resp) : stub_->Register(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << method << ": " << st.error_message();
    return resp;
  }

  // Init until the store shows the PodGroup (the dir store picks files up asynchronously).
  ::Status InitWhenVisible(const std::string& job_id) {
    const absl::Time deadline = absl::Now() + kWait;
    ::Status resp;
    do {
      resp = Call("Init", job_id);
      if (resp.code() != 502) break;
      absl::SleepFor(absl::Milliseconds(100));
    } while (absl::Now() < deadline);
    return resp;
  }

  ::Status ReportFault(const std::string& job_id, const std::string& rank,
                       const std::string& type) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ::ProcessFaultRequest req;
    req.set_jobid(job_id);
    auto* f = req.add_faultranks();
    f->set_rankid(rank);
    f->set_faulttype(type);
    ::Status resp;
    grpc::Status st = stub_->ReportProcessFault(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  std::optional<Json> Recovery(const std::string& job) {
    httplib::Client http("http://" + proc_->http_address());
    auto res = http.Get("/api/clusterd/v1/recovery/" + job);
    if (!res || res->status != 200) return std::nullopt;
    return Json::parse(res->body);
  }

  // Waits until the controller has taken the subscription (the stream's first message is only
  // the 5 s keep-alive, so the client cannot see it).
  bool WaitSubscribed(const std::string& job) {
    const absl::Time deadline = absl::Now() + kWait;
    while (absl::Now() < deadline) {
      std::optional<Json> r = Recovery(job);
      if (r.has_value() && (*r)["subscribed"] == true) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  ::Status ReportFaults(const ::ProcessFaultRequest& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ::Status resp;
    grpc::Status st = stub_->ReportProcessFault(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  // Waits until the controller knows the job's world size (its view has the pods).
  bool WaitWorldSize(const std::string& job, int64_t want) {
    const absl::Time deadline = absl::Now() + kWait;
    while (absl::Now() < deadline) {
      std::optional<Json> r = Recovery(job);
      if (r.has_value() && (*r)["worldSize"] == want) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  uintmax_t LogBytes() const { return std::filesystem::file_size(proc_->log_path()); }

  std::string Metrics() {
    httplib::Client http("http://" + proc_->http_address());
    auto res = http.Get("/metrics");
    return res && res->status == 200 ? res->body : "";
  }

  CommandResult Clusterctl(const std::string& args) {
    return RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", proc_->grpc_address(), " --http ",
                                   proc_->http_address(), " ", args));
  }

  TempDir dir_;
  std::string state_;
  std::unique_ptr<sim::ClusterdProcess> proc_;
  std::unique_ptr<::Recover::Stub> stub_;
};

TEST_F(RecoverServiceIntegrationTest, InitRegisterSubscribeAndAProcessFaultStartTheCycle) {
  WriteRecoverableJob();
  ::Status init = InitWhenVisible(kJobUid);
  EXPECT_EQ(init.code(), 0);
  EXPECT_EQ(init.info(), absl::StrCat("job(uid=", kJobUid, ") init success"));
  ::Status reg = Call("Register", kJobUid);
  EXPECT_EQ(reg.code(), 0);
  EXPECT_EQ(reg.info(), "register success");

  SignalReader stream(*stub_, kJobUid);
  ASSERT_TRUE(WaitSubscribed(kJobUid));
  size_t seen = 0;
  // §2.3: nothing is sent when the stream opens; the first message is a keep-alive (uuid "").
  auto keep_alive = stream.WaitFor("keep-alive", &seen, absl::Seconds(8));
  ASSERT_TRUE(keep_alive.has_value());
  EXPECT_EQ(keep_alive->jobid(), kJobUid);
  EXPECT_EQ(keep_alive->uuid(), "");
  EXPECT_EQ(seen, 1u);

  ::Status fault = ReportFault(kJobUid, "10", "1");
  EXPECT_EQ(fault.code(), 0);
  EXPECT_EQ(fault.info(), "receive ReportProcessFault");

  // §15 step 6: stopTrain with the fault, a new uuid.
  auto stop = stream.WaitFor("stopTrain", &seen);
  ASSERT_TRUE(stop.has_value());
  EXPECT_EQ(stop->jobid(), kJobUid);
  ASSERT_EQ(stop->actions_size(), 1);
  EXPECT_EQ(stop->actions(0), "stop_train");
  ASSERT_EQ(stop->faultranks_size(), 1);
  EXPECT_EQ(stop->faultranks(0).rankid(), "10");
  EXPECT_EQ(stop->faultranks(0).faulttype(), "1");
  EXPECT_EQ(stop->changestrategy(), "");
  EXPECT_EQ(stop->timeout(), 0);
  const std::string uuid = stop->uuid();
  ASSERT_FALSE(uuid.empty());

  // §15 step 7: the stop report is acknowledged with the cycle's uuid.
  {
    grpc::ClientContext ctx;
    ::StopCompleteRequest req;
    req.set_jobid(kJobUid);
    req.mutable_status()->set_code(0);
    ::Status resp;
    ASSERT_TRUE(stub_->ReportStopComplete(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.code(), 0);
    EXPECT_EQ(resp.info(),
              absl::StrCat("jobId=", kJobUid, ", uuid=", uuid, ", receive ReportStopComplete"));
  }

  // clusterctl shows the job's controller mid-cycle.
  CommandResult table = Clusterctl("get recovery");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, kJobUid)) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "pt-2x8")) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "10:1")) << table.output;
  CommandResult one = Clusterctl("get recovery pt-2x8 -o json");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  Json j = Json::parse(one.output);
  EXPECT_EQ(j["jobId"], kJobUid);
  EXPECT_EQ(j["uuid"], uuid);
  EXPECT_NE(j["state"], "INIT");
  ASSERT_GE(j["history"].size(), 3u);
  EXPECT_EQ(j["history"][0]["from"], "INIT");
  EXPECT_EQ(j["history"][0]["event"], "faultOccur");
  EXPECT_FALSE(j["history"][0]["at"].get<std::string>().empty());

  // §15 step 8: after the flush and the force-release pause, the global fault of pod 1.
  auto global = stream.WaitFor("globalFault", &seen);
  ASSERT_TRUE(global.has_value()) << absl::StrJoin(stream.Types(), ",");
  EXPECT_EQ(global->uuid(), uuid);
  EXPECT_EQ(global->faultranks_size(), 8);
  ASSERT_EQ(global->noderankids_size(), 1);
  EXPECT_EQ(global->noderankids(0), "1");

  // §15 steps 9-12: the client's strategies, the decision `recover`, success, and the reset
  // that ends the stream with status OK.
  {
    grpc::ClientContext ctx;
    ::RecoverStrategyRequest req;
    req.set_jobid(kJobUid);
    req.add_strategies("recover");
    req.add_strategies("exit");
    ::Status resp;
    ASSERT_TRUE(stub_->ReportRecoverStrategy(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.info(),
              absl::StrCat("jobId=", kJobUid, ", uuid=", uuid, ", receive ReportRecoverStrategy"));
  }
  auto decided = stream.WaitFor("changeStrategy", &seen);
  ASSERT_TRUE(decided.has_value()) << absl::StrJoin(stream.Types(), ",");
  EXPECT_EQ(decided->changestrategy(), "recover");
  EXPECT_EQ(decided->uuid(), uuid);
  ASSERT_EQ(decided->actions_size(), 1);
  EXPECT_EQ(decided->actions(0), "change_strategy");
  {
    grpc::ClientContext ctx;
    ::RecoverStatusRequest req;
    req.set_jobid(kJobUid);
    req.mutable_status()->set_code(0);
    req.set_strategy("recover");
    ::Status resp;
    ASSERT_TRUE(stub_->ReportRecoverStatus(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.code(), 0);
  }
  std::optional<grpc::Status> ended = stream.WaitDone();
  ASSERT_TRUE(ended.has_value());
  EXPECT_TRUE(ended->ok()) << ended->error_message();
  std::optional<Json> after = Recovery(kJobUid);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ((*after)["state"], "INIT");
  EXPECT_EQ((*after)["uuid"], "");
}

TEST_F(RecoverServiceIntegrationTest, BadInputGetsTheSpecCodesAndIsCounted) {
  WriteRecoverableJob();
  // Unknown job: Init 502, Register 408, reports 400, Subscribe fails with UNKNOWN.
  EXPECT_EQ(Call("Init", "no-such-job").code(), 502);
  ::Status reg = Call("Register", "no-such-job");
  EXPECT_EQ(reg.code(), 408);
  EXPECT_EQ(reg.info(), "jobId=no-such-job not inited");
  ::Status fault = ReportFault("no-such-job", "1", "1");
  EXPECT_EQ(fault.code(), 400);
  EXPECT_EQ(fault.info(), "jobId=no-such-job not registed");
  {
    grpc::ClientContext ctx;
    ::RecoverStatusRequest req;
    req.set_jobid("no-such-job");
    ::Status resp;
    ASSERT_TRUE(stub_->ReportRecoverStatus(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.code(), 400);
  }
  {
    SignalReader refused(*stub_, "no-such-job");
    std::optional<grpc::Status> st = refused.WaitDone();
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->error_code(), grpc::StatusCode::UNKNOWN);
    EXPECT_EQ(st->error_message(), "jobId=no-such-job not registed");
  }

  // A registered job: malformed faultRanks are refused without touching the controller.
  ASSERT_EQ(InitWhenVisible(kJobUid).code(), 0);
  ASSERT_EQ(Call("Register", kJobUid).code(), 0);
  ::Status bad = ReportFault(kJobUid, "ten", "1");
  EXPECT_EQ(bad.code(), 409);
  EXPECT_TRUE(absl::StrContains(bad.info(), "ten")) << bad.info();
  std::optional<Json> r = Recovery(kJobUid);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)["state"], "INIT");

  httplib::Client http("http://" + proc_->http_address());
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      R"(clusterd_recover_rejected_total{method="/Recover/ReportProcessFault",reason="malformed_fault_rank"})"))
      << metrics->body.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(metrics->body, R"(reason="unregistered")"));
}

// Issue 16: a report naming ranks the job does not have is refused before the controller sees
// it (it used to put every rank on the stream and log a line per missing pod).
TEST_F(RecoverServiceIntegrationTest, AProcessFaultOutsideTheJobsWorldSizeIsRefused) {
  WriteRecoverableJob();  // 2 pods of 8 NPUs: global ranks 0-15
  ASSERT_EQ(InitWhenVisible(kJobUid).code(), 0);
  ASSERT_EQ(Call("Register", kJobUid).code(), 0);
  SignalReader stream(*stub_, kJobUid);
  ASSERT_TRUE(WaitSubscribed(kJobUid));
  ASSERT_TRUE(WaitWorldSize(kJobUid, 16));
  const uintmax_t log_before = LogBytes();

  ::ProcessFaultRequest huge;
  huge.set_jobid(kJobUid);
  for (int rank = 0; rank < 200000; ++rank) {
    ::FaultRank* f = huge.add_faultranks();
    f->set_rankid(std::to_string(rank));
    f->set_faulttype("1");
  }
  ::Status too_many = ReportFaults(huge);
  EXPECT_EQ(too_many.code(), 409);
  EXPECT_TRUE(absl::StrContains(too_many.info(), "200000 entries")) << too_many.info();

  ::Status past_the_end = ReportFault(kJobUid, "16", "1");
  EXPECT_EQ(past_the_end.code(), 409);
  EXPECT_TRUE(
      absl::StrContains(past_the_end.info(), "rankId 16 is outside the job's world size 16"))
      << past_the_end.info();

  // Nothing reached the controller, and the log grew by a few lines only.
  std::optional<Json> r = Recovery(kJobUid);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)["state"], "INIT");
  EXPECT_EQ((*r)["faultRanks"].size(), 0u);
  EXPECT_LT(LogBytes() - log_before, 4096u);
  const std::string metrics = Metrics();
  EXPECT_TRUE(absl::StrContains(
      metrics,
      R"(clusterd_recover_rejected_total{method="/Recover/ReportProcessFault",reason="too_many_fault_ranks"} 1)"));
  EXPECT_TRUE(absl::StrContains(
      metrics,
      R"(clusterd_recover_rejected_total{method="/Recover/ReportProcessFault",reason="rank_outside_world"} 1)"));

  // The job's last rank, listed twice, is accepted and reaches the stream once.
  ::ProcessFaultRequest last;
  last.set_jobid(kJobUid);
  for (int i = 0; i < 2; ++i) {
    ::FaultRank* f = last.add_faultranks();
    f->set_rankid("15");
    f->set_faulttype("1");
  }
  ::Status accepted = ReportFaults(last);
  EXPECT_EQ(accepted.code(), 0);
  EXPECT_EQ(accepted.info(), "receive ReportProcessFault");
  size_t seen = 0;
  auto stop = stream.WaitFor("stopTrain", &seen);
  ASSERT_TRUE(stop.has_value()) << absl::StrJoin(stream.Types(), ",");
  ASSERT_EQ(stop->faultranks_size(), 1);
  EXPECT_EQ(stop->faultranks(0).rankid(), "15");
}

// Issue 16: 50 Init calls with a 4 MiB jobId wrote 619 MB of log. An oversized string is refused
// with the protocol's invalid-parameter code before anything logs it.
TEST_F(RecoverServiceIntegrationTest, OversizedStringFieldsAreRefusedBeforeAnythingIsLogged) {
  WriteRecoverableJob();
  const std::string huge(4 * 1024 * 1024 - 1024, 'j');
  const uintmax_t log_before = LogBytes();
  for (int i = 0; i < 10; ++i) {
    ::Status init = Call("Init", huge);
    EXPECT_EQ(init.code(), 409);
    EXPECT_EQ(init.info().substr(0, 200),
              "jobId is 4193280 bytes, over the limit of 256, method=/Recover/Init");
  }
  ::Status reg = Call("Register", huge);
  EXPECT_EQ(reg.code(), 409);
  EXPECT_TRUE(absl::StrContains(reg.info(), "jobId is 4193280 bytes")) << reg.info().substr(0, 200);
  {
    // Free text has a larger bound than ids.
    grpc::ClientContext ctx;
    ::StopCompleteRequest req;
    req.set_jobid(kJobUid);
    req.mutable_status()->set_code(0);
    req.mutable_status()->set_info(std::string(8192, 'i'));
    ::Status resp;
    ASSERT_TRUE(stub_->ReportStopComplete(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.code(), 409);
    EXPECT_EQ(
        resp.info(),
        "status.info is 8192 bytes, over the limit of 4096, method=/Recover/ReportStopComplete");
  }
  {
    SignalReader refused(*stub_, huge);
    std::optional<grpc::Status> st = refused.WaitDone();
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(st->error_message(), "jobId is 4193280 bytes"));
  }
  EXPECT_LT(LogBytes() - log_before, 16u * 1024);
  EXPECT_TRUE(absl::StrContains(
      Metrics(),
      R"(clusterd_grpc_bad_requests_total{method="/Recover/Init",reason="field_too_long"} 10)"));
  // The job itself is served as before.
  EXPECT_EQ(InitWhenVisible(kJobUid).code(), 0);
}

// A job id that cannot name the job's recovery record (ConfigMap clusterd-recovery-<jobId>, a
// DNS-1123 subdomain) is refused at Init and at Register with 409 and the reason, instead of a
// job served without a durable record.
TEST_F(RecoverServiceIntegrationTest, AJobIdThatCannotNameItsRecordIsRefusedAtInitAndRegister) {
  const std::string bad = "job_7";
  WriteRecoverableJob(/*recover_on=*/true, bad);
  // 502 only until the store shows the PodGroup owned by `bad`.
  const absl::Time deadline = absl::Now() + kWait;
  ::Status init;
  do {
    init = Call("Init", bad);
    if (init.code() != 502) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  EXPECT_EQ(init.code(), 409);
  EXPECT_TRUE(absl::StrContains(init.info(), "job(uid=job_7)")) << init.info();
  EXPECT_TRUE(absl::StrContains(init.info(), "clusterd-recovery-job_7")) << init.info();
  EXPECT_TRUE(absl::StrContains(init.info(), "DNS-1123")) << init.info();
  ::Status reg = Call("Register", bad);
  EXPECT_EQ(reg.code(), 409);
  EXPECT_TRUE(absl::StrContains(reg.info(), "jobId=job_7")) << reg.info();
  EXPECT_TRUE(absl::StrContains(reg.info(), "DNS-1123")) << reg.info();
  // Too long for a name (253 characters) once prefixed.
  const std::string long_id(240, 'a');
  EXPECT_EQ(Call("Init", long_id).code(), 409);
  EXPECT_EQ(Call("Register", long_id).code(), 409);
  EXPECT_FALSE(Recovery(bad).has_value());

  httplib::Client http("http://" + proc_->http_address());
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      R"(clusterd_recover_rejected_total{method="/Recover/Init",reason="invalid_job_id"})"))
      << metrics->body.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      R"(clusterd_recover_rejected_total{method="/Recover/Register",reason="invalid_job_id"})"));
}

TEST_F(RecoverServiceIntegrationTest, InitRefusesAJobWithRecoveryOff) {
  WriteRecoverableJob(/*recover_on=*/false);
  const absl::Time deadline = absl::Now() + kWait;
  ::Status init;
  do {
    init = Call("Init", kJobUid);
    if (init.code() != 502) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  EXPECT_EQ(init.code(), 403);
  EXPECT_EQ(init.info(), absl::StrCat("job(uid=", kJobUid,
                                      ") process-recover-enable and subhealthy hotswtich not "
                                      "open:<nil>"));
}

TEST_F(RecoverServiceIntegrationTest, ASecondSubscriptionEndsTheFirstAndADisconnectResets) {
  WriteRecoverableJob();
  ASSERT_EQ(InitWhenVisible(kJobUid).code(), 0);
  ASSERT_EQ(Call("Register", kJobUid).code(), 0);
  auto first = std::make_unique<SignalReader>(*stub_, kJobUid);
  ASSERT_TRUE(WaitSubscribed(kJobUid));
  auto second = std::make_unique<SignalReader>(*stub_, kJobUid);
  // §2.3: the new subscription resets the controller, and the reset ends the older stream (OK).
  std::optional<grpc::Status> ended = first->WaitDone();
  ASSERT_TRUE(ended.has_value());
  EXPECT_TRUE(ended->ok()) << ended->error_message();
  EXPECT_FALSE(second->WaitDone(absl::Milliseconds(200)).has_value());

  // A fault starts a cycle on the second stream; the client going away resets it.
  ASSERT_EQ(ReportFault(kJobUid, "3", "1").code(), 0);
  size_t seen = 0;
  ASSERT_TRUE(second->WaitFor("stopTrain", &seen).has_value());
  second->Cancel();
  const absl::Time deadline = absl::Now() + kWait;
  std::string state;
  while (absl::Now() < deadline) {
    std::optional<Json> r = Recovery(kJobUid);
    if (r.has_value()) {
      state = (*r)["state"];
      if (state == "INIT" && (*r)["subscribed"] == false) break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(state, "INIT");
  EXPECT_EQ((*Recovery(kJobUid))["uuid"], "");
}

}  // namespace recover_service_test
}  // namespace clusterd
