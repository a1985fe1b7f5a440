// clusterd as a user runs it: flags, the six services on one port, the HTTP endpoints,
// bad start-up input, and a clean stop.
#include "sim/clusterd_process.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "client/channel.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "recover.grpc.pb.h"
#include "test_env.h"

namespace clusterd {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

std::unique_ptr<sim::ClusterdProcess> StartClusterd(const TempDir& dir, std::string store) {
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = std::move(store);
  options.work_dir = dir.path() + "/run";
  auto proc = sim::ClusterdProcess::Start(options);
  EXPECT_TRUE(proc.ok()) << proc.status();
  return proc.ok() ? std::move(*proc) : nullptr;
}

TEST(ClusterdProcess, ServesHealthCheckAndStopsCleanlyOnSigterm) {
  TempDir dir;
  auto proc = StartClusterd(dir, "dir:" + dir.path() + "/state");
  ASSERT_NE(proc, nullptr);
  auto stub = ::Recover::NewStub(client::MakeChannel(proc->grpc_address()));
  grpc::ClientContext ctx;
  ::ClientInfo req;
  req.set_jobid("uid-1");
  ::Status resp;
  grpc::Status st = stub->HealthCheck(&ctx, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.code(), 0);
  EXPECT_EQ(resp.info(), "jobId=uid-1, receive HeathCheck");
  auto rc = proc->Stop();
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
}

// Every method is served now; a request the controller cannot act on is refused with the
// spec's code and a reason, never UNIMPLEMENTED.
TEST(ClusterdProcess, StressTestForAnUnknownJobIsRefusedWithAReason) {
  TempDir dir;
  auto proc = StartClusterd(dir, "memory");
  ASSERT_NE(proc, nullptr);
  auto stub = ::Recover::NewStub(client::MakeChannel(proc->grpc_address()));
  grpc::ClientContext ctx;
  ::StressTestParam req;
  req.set_jobid("no-such-job");
  ::Status resp;
  grpc::Status st = stub->StressTest(&ctx, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.code(), 413);
  EXPECT_FALSE(resp.info().empty());
}

TEST(ClusterdProcess, HttpServesHealthReadinessMetricsAndTheStore) {
  TempDir dir;
  auto proc = StartClusterd(dir, "dir:" + dir.path() + "/state");
  ASSERT_NE(proc, nullptr);
  httplib::Client http("http://" + proc->http_address());
  auto healthz = http.Get("/healthz");
  ASSERT_TRUE(healthz);
  EXPECT_EQ(healthz->status, 200);
  auto readyz = http.Get("/readyz");
  ASSERT_TRUE(readyz);
  EXPECT_EQ(readyz->status, 200);

  // One gRPC call so a request counter exists.
  auto stub = ::Recover::NewStub(client::MakeChannel(proc->grpc_address()));
  grpc::ClientContext ctx;
  ::Status resp;
  ASSERT_TRUE(stub->HealthCheck(&ctx, ::ClientInfo(), &resp).ok());

  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_TRUE(absl::StrContains(metrics->get_header_value("Content-Type"), "version=0.0.4"));
  EXPECT_TRUE(absl::StrContains(
      metrics->body, "clusterd_grpc_requests_total{code=\"OK\",method=\"/Recover/HealthCheck\"} 1"))
      << metrics->body;
  EXPECT_TRUE(absl::StrContains(metrics->body, "# TYPE clusterd_grpc_requests_total counter"));

  auto missing = http.Get("/api/v1/namespaces/default/configmaps/absent");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(absl::StrContains(missing->body, "\"reason\":\"NotFound\"")) << missing->body;

  auto unknown = http.Get("/api/v1/namespaces/default/widgets");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);

  auto bad_selector = http.Get("/api/v1/configmaps?labelSelector=%3D%3D%3D");
  ASSERT_TRUE(bad_selector);
  EXPECT_EQ(bad_selector->status, 400) << bad_selector->body;
}

TEST(ClusterdProcess, AnUnusableStoreDirectoryIsAOneLineErrorAndNonZeroExit) {
  TempDir dir;
  std::string file = dir.path() + "/not-a-dir";
  std::ofstream(file) << "x";
  CommandResult r = RunCommand(std::string(CLUSTERD_BIN) + " --store dir:" + file +
                               "/state --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, file)) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(ClusterdProcess, AnUnknownStoreSyntaxIsRefused) {
  CommandResult r =
      RunCommand(std::string(CLUSTERD_BIN) +
                 " --store sqlite:x --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, "dir:PATH")) << r.output;
}

TEST(ClusterdProcess, ABadListenAddressIsRefused) {
  CommandResult r = RunCommand(std::string(CLUSTERD_BIN) +
                               " --store memory --grpc-listen nonsense --http-listen 127.0.0.1:0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, "nonsense")) << r.output;
}

TEST(ClusterdProcess, VersionAndHelpDescribeTheStableFlags) {
  CommandResult version = RunCommand(std::string(CLUSTERD_BIN) + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(version.output, "clusterd ")) << version.output;
  CommandResult help = RunCommand(std::string(CLUSTERD_BIN) + " --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--store", "--grpc-listen", "--http-listen", "dir:PATH", "memory"}) {
    EXPECT_TRUE(absl::StrContains(help.output, flag)) << flag;
  }
}

}  // namespace
}  // namespace clusterd
