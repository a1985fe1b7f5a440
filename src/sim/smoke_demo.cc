#include "sim/smoke_demo.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/channel.h"
#include "config.grpc.pb.h"
#include "fault.grpc.pb.h"
#include "httplib.h"
#include "job.grpc.pb.h"
#include "profiling.grpc.pb.h"
#include "pubfault.grpc.pb.h"
#include "recover.grpc.pb.h"
#include "sim/clusterd_process.h"

namespace clusterd::sim {
namespace {

std::string Describe(const grpc::Status& st) {
  if (st.ok()) return "OK";
  return absl::StrCat("code ", static_cast<int>(st.error_code()), ": ", st.error_message());
}

template <typename Call>
grpc::Status Unary(Call&& call) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return call(&ctx);
}

}  // namespace

absl::Status RunSmokeDemo(const std::string& clusterd_binary, const std::string& state_dir) {
  std::printf("== clusterd demo: start the cluster brain on an embedded store\n");
  ClusterdProcess::Options options;
  options.binary = clusterd_binary;
  options.store = "dir:" + state_dir + "/store";
  options.work_dir = state_dir;
  absl::StatusOr<std::unique_ptr<ClusterdProcess>> proc = ClusterdProcess::Start(options);
  if (!proc.ok()) return proc.status();
  std::printf("   clusterd serving gRPC on %s, HTTP on %s, store %s\n",
              (*proc)->grpc_address().c_str(), (*proc)->http_address().c_str(),
              options.store.c_str());

  auto channel = client::MakeChannel((*proc)->grpc_address());
  bool ok = true;
  auto report = [&](const char* method, const grpc::Status& st, bool expected) {
    std::printf("   %-52s %s\n", method, Describe(st).c_str());
    ok &= expected;
  };

  std::printf("== one call to every service\n");
  {
    auto stub = ::Recover::NewStub(channel);
    ::ClientInfo req;
    req.set_jobid("demo-job");
    req.set_role("demo");
    ::Status resp;
    grpc::Status st =
        Unary([&](grpc::ClientContext* c) { return stub->HealthCheck(c, req, &resp); });
    report("/Recover/HealthCheck", st, st.ok() && resp.code() == 0);
    std::printf("     -> code=%d info=\"%s\"\n", resp.code(), resp.info().c_str());
  }
  auto served = [](const grpc::Status& st) {
    return st.ok() || st.error_code() == grpc::StatusCode::UNIMPLEMENTED;
  };
  {
    auto stub = ::config::Config::NewStub(channel);
    ::config::ClientInfo req;
    ::config::Status resp;
    grpc::Status st = Unary([&](grpc::ClientContext* c) { return stub->Register(c, req, &resp); });
    report("/config.Config/Register", st, served(st));
  }
  {
    auto stub = ::fault::Fault::NewStub(channel);
    ::fault::ClientInfo req;
    ::fault::FaultQueryResult resp;
    grpc::Status st =
        Unary([&](grpc::ClientContext* c) { return stub->GetFaultMsgSignal(c, req, &resp); });
    report("/fault.Fault/GetFaultMsgSignal", st, served(st));
  }
  {
    auto stub = ::job::Job::NewStub(channel);
    ::job::ClientInfo req;
    req.set_role("CCAgent");  // Register admits whitelisted roles only
    ::job::Status resp;
    grpc::Status st = Unary([&](grpc::ClientContext* c) { return stub->Register(c, req, &resp); });
    report("/job.Job/Register", st, served(st));
  }
  {
    auto stub = ::TrainingDataTrace::NewStub(channel);
    ::DataStatusReq req;
    ::DataStatusRes resp;
    grpc::Status st = Unary(
        [&](grpc::ClientContext* c) { return stub->GetTrainingDataTraceSwitch(c, req, &resp); });
    report("/TrainingDataTrace/GetTrainingDataTraceSwitch", st, served(st));
  }
  {
    auto stub = ::PubFault::NewStub(channel);
    ::PublicFaultRequest req;
    ::RespStatus resp;
    grpc::Status st =
        Unary([&](grpc::ClientContext* c) { return stub->SendPublicFault(c, req, &resp); });
    report("/PubFault/SendPublicFault", st, served(st));
  }

  std::printf("== HTTP endpoints\n");
  httplib::Client http("http://" + (*proc)->http_address());
  http.set_read_timeout(std::chrono::seconds(5));
  for (const char* path : {"/healthz", "/readyz"}) {
    auto res = http.Get(path);
    bool good = res && res->status == 200;
    std::printf("   GET %-10s %s\n", path, good ? "200 ok" : "FAILED");
    ok &= good;
  }
  if (auto res = http.Get("/metrics"); res && res->status == 200) {
    size_t series = 0;
    for (char ch : res->body) series += ch == '\n';
    std::printf("   GET /metrics    200, %zu lines of Prometheus text\n", series);
  } else {
    ok = false;
  }

  std::printf("== another process writes a ConfigMap into the store directory\n");
  std::string cm_dir = state_dir + "/store/configmaps/mindx-dl";
  std::filesystem::create_directories(cm_dir);
  {
    std::ofstream out(cm_dir + "/.demo-note.json.tmp");
    out << R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo-note","namespace":"mindx-dl"},"data":{"hello":"cluster"}})";
  }
  std::filesystem::rename(cm_dir + "/.demo-note.json.tmp", cm_dir + "/demo-note.json");
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    auto res = http.Get("/api/v1/namespaces/mindx-dl/configmaps/demo-note");
    seen = res && res->status == 200;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf("   clusterd sees configmaps/mindx-dl/demo-note: %s\n", seen ? "yes" : "NO");
  ok &= seen;

  std::printf("== stop clusterd (SIGTERM)\n");
  absl::StatusOr<int> rc = (*proc)->Stop();
  if (!rc.ok()) return rc.status();
  std::printf("   clusterd exited with code %d\n", *rc);
  ok &= *rc == 0;
  if (!ok)
    return absl::InternalError(absl::StrCat("demo failed; clusterd log: ", (*proc)->log_path()));
  std::printf("== demo passed\n");
  return absl::OkStatus();
}

}  // namespace clusterd::sim
