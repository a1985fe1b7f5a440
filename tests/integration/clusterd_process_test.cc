// clusterd as a user runs it: flags, the six services on one port, the HTTP endpoints,
// bad start-up input, and a clean stop.
#include "sim/clusterd_process.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/channel.h"
#include "common/file_change.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "recover.grpc.pb.h"
#include "test_env.h"

namespace clusterd {
namespace clusterd_process_test {

using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

std::unique_ptr<sim::ClusterdProcess> StartClusterd(const TempDir& dir, std::string store,
                                                    std::vector<std::string> extra_args = {}) {
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = std::move(store);
  options.work_dir = dir.path() + "/run";
  options.extra_args = std::move(extra_args);
  auto proc = sim::ClusterdProcess::Start(options);
  EXPECT_TRUE(proc.ok()) << proc.status();
  return proc.ok() ? std::move(*proc) : nullptr;
}

// Runs clusterd with `args` (after the binary) and waits for it to exit, at most `timeout`; a
// clusterd still running then is killed and reported as nullopt, so that a test expecting a
// refusal fails instead of hanging.
struct Outcome {
  int exit_code;
  std::string output;
};
// `wrapper` runs clusterd under another command (setpriv to drop root).
std::optional<Outcome> RunClusterdToExit(const TempDir& dir, const std::string& name,
                                         std::vector<std::string> args,
                                         absl::Duration timeout = absl::Seconds(15),
                                         std::vector<std::string> wrapper = {}) {
  Subprocess::Options spawn;
  spawn.argv = std::move(wrapper);
  spawn.argv.push_back(CLUSTERD_BIN);
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.stdout_path = spawn.stderr_path = dir.path() + "/" + name + ".log";
  absl::StatusOr<Subprocess> child = Subprocess::Start(spawn);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return std::nullopt;
  absl::StatusOr<int> code = child->Wait(timeout);
  if (!code.ok()) {
    child->Signal(SIGKILL);
    (void)child->Wait(absl::Seconds(10));
    return std::nullopt;
  }
  return Outcome{*code, ReadWholeFile(spawn.stdout_path).value_or("")};
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

// Object files written by other programs, as the running daemon reads them (simdjson first,
// nlohmann for what it refuses): a byte-order mark and a repeated key are read as before, a
// broken file is skipped by name with a metric, and a broken rewrite keeps the last good object.
TEST(ClusterdProcess, OutsideWrittenStoreFilesAreReadOrRefusedByName) {
  TempDir dir;
  const std::string cms = dir.path() + "/state/configmaps/default/";
  std::filesystem::create_directories(cms);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(cms + name + ".json", std::ios::binary | std::ios::trunc) << text;
  };
  write("good", R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"good"},)"
                R"("data":{"k":"v"}})");
  write("bom",
        "\xEF\xBB\xBF"
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bom"}})");
  write("repeated", R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"repeated"},)"
                    R"("data":{"k":"first","j":"x","k":"last"}})");
  write("broken", R"({"apiVersion":"v1","kind":)");
  auto proc = StartClusterd(dir, "dir:" + dir.path() + "/state",
                            {"--http-store-mirror", "--http-configmap-namespaces", "default"});
  ASSERT_NE(proc, nullptr);
  httplib::Client http("http://" + proc->http_address());
  auto get = [&](const std::string& name) {
    return http.Get("/api/v1/namespaces/default/configmaps/" + name);
  };
  auto good = get("good");
  ASSERT_TRUE(good);
  ASSERT_EQ(good->status, 200) << good->body;
  EXPECT_EQ(nlohmann::json::parse(good->body)["data"]["k"], "v");
  auto bom = get("bom");
  ASSERT_TRUE(bom);
  EXPECT_EQ(bom->status, 200) << bom->body;
  auto repeated = get("repeated");
  ASSERT_TRUE(repeated);
  ASSERT_EQ(repeated->status, 200) << repeated->body;
  EXPECT_EQ(nlohmann::json::parse(repeated->body)["data"],
            nlohmann::json({{"k", "last"}, {"j", "x"}}));
  auto broken = get("broken");
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->status, 404);
  auto malformed_files = [&]() -> std::string {
    auto metrics = http.Get("/metrics");
    if (!metrics) return "";
    for (absl::string_view line : absl::StrSplit(metrics->body, '\n')) {
      if (absl::StartsWith(line, "clusterd_store_bad_files_total{reason=\"malformed\"}")) {
        return std::string(line.substr(line.rfind(' ') + 1));
      }
    }
    return "";
  };
  EXPECT_EQ(malformed_files(), "1");
  EXPECT_TRUE(absl::StrContains(ReadWholeFile(proc->log_path()).value_or(""), "broken.json"));

  // A broken rewrite while it runs: counted, and the last good object stays.
  write("good", "{ not json");
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (malformed_files() != "2" && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(malformed_files(), "2");
  good = get("good");
  ASSERT_TRUE(good);
  ASSERT_EQ(good->status, 200) << good->body;
  EXPECT_EQ(nlohmann::json::parse(good->body)["data"]["k"], "v");
}

// One brain per store: a second clusterd on the same dir store is refused, naming the first.
TEST(ClusterdProcess, ASecondClusterdOnTheSameDirStoreExitsNamingTheFirst) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  auto first = StartClusterd(dir, "dir:" + state);
  ASSERT_NE(first, nullptr);
  std::optional<Outcome> second = RunClusterdToExit(
      dir, "second",
      {"--store", "dir:" + state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(second.has_value()) << "the second clusterd kept running";
  EXPECT_EQ(second->exit_code, 1) << second->output;
  EXPECT_TRUE(absl::StrContains(second->output, absl::StrCat("pid ", first->process().pid())))
      << second->output;
  EXPECT_TRUE(absl::StrContains(second->output, state)) << second->output;
  EXPECT_TRUE(std::filesystem::exists(state + "/.clusterd.lock"));

  // Once the first has stopped, the store is free again.
  auto rc = first->Stop();
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
  auto third = StartClusterd(dir, "dir:" + state);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(*third->Stop(), 0);
}

// With --leader-elect the Lease decides among replicas on one dir store: a second replica
// waits as a follower (the claim is shared), and a clusterd without the flag is refused.
TEST(ClusterdProcess, LeaderElectReplicasShareTheDirStoreAndKeepOutOneWithoutTheFlag) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/leader";
  options.extra_args = {"--leader-elect"};
  auto leader = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(leader.ok()) << leader.status();

  Subprocess::Options spawn;
  spawn.argv = {CLUSTERD_BIN,    "--store",     "dir:" + state,  "--leader-elect",
                "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"};
  spawn.stdout_path = spawn.stderr_path = dir.path() + "/follower.log";
  absl::StatusOr<Subprocess> follower = Subprocess::Start(spawn);
  ASSERT_TRUE(follower.ok()) << follower.status();
  auto follower_log = [&] {
    std::ifstream log(spawn.stdout_path);
    std::stringstream text;
    text << log.rdbuf();
    return text.str();
  };
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!absl::StrContains(follower_log(), "waiting for the leader lease")) {
    ASSERT_TRUE(follower->Running()) << follower_log();
    ASSERT_LT(absl::Now(), deadline) << follower_log();
    absl::SleepFor(absl::Milliseconds(20));
  }

  std::optional<Outcome> alone = RunClusterdToExit(
      dir, "alone",
      {"--store", "dir:" + state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(alone.has_value()) << "a clusterd without --leader-elect kept running";
  EXPECT_EQ(alone->exit_code, 1) << alone->output;
  EXPECT_TRUE(absl::StrContains(alone->output, ".clusterd.lock is held by pid")) << alone->output;
  EXPECT_TRUE(follower->Running()) << follower_log();

  follower->Signal(SIGTERM);
  EXPECT_EQ(*follower->Wait(absl::Seconds(15)), 0) << follower_log();
  EXPECT_EQ(*(*leader)->Stop(), 0);
}

// One brain per port: no listening beside another process (SO_REUSEPORT would let clients
// alternate between the two).
TEST(ClusterdProcess, ASecondClusterdOnTheSameGrpcPortExitsNamingTheAddress) {
  TempDir dir;
  auto first = StartClusterd(dir, "memory");
  ASSERT_NE(first, nullptr);
  std::optional<Outcome> second =
      RunClusterdToExit(dir, "second",
                        {"--store", "memory", "--grpc-listen", first->grpc_address(),
                         "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(second.has_value()) << "the second clusterd kept running";
  EXPECT_NE(second->exit_code, 0) << second->output;
  EXPECT_TRUE(absl::StrContains(second->output, first->grpc_address())) << second->output;
}

TEST(ClusterdProcess, ASecondClusterdOnTheSameHttpPortExitsNamingTheAddress) {
  TempDir dir;
  auto first = StartClusterd(dir, "memory");
  ASSERT_NE(first, nullptr);
  std::optional<Outcome> second =
      RunClusterdToExit(dir, "second",
                        {"--store", "memory", "--grpc-listen", "127.0.0.1:0", "--http-listen",
                         first->http_address()});
  ASSERT_TRUE(second.has_value()) << "the second clusterd kept running";
  EXPECT_NE(second->exit_code, 0) << second->output;
  EXPECT_TRUE(absl::StrContains(second->output, first->http_address())) << second->output;
}

// Bytes that are not UTF-8 in a path are a bad request with a Status body, like every other
// error of the HTTP server.
TEST(ClusterdProcess, HttpAnswersANameThatIsNotUtf8WithABadRequestStatus) {
  TempDir dir;
  auto proc = StartClusterd(dir, "dir:" + dir.path() + "/state");
  ASSERT_NE(proc, nullptr);
  httplib::Client http("http://" + proc->http_address());
  for (const char* path : {"/api/v1/namespaces/default/configmaps/%ff%fe",
                           "/api/v1/namespaces/%ff/configmaps", "/api/v1/nodes/%ff"}) {
    auto res = http.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 400) << path << ": " << res->body;
    nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << path << ": " << res->body;
    EXPECT_EQ(body.value("kind", ""), "Status") << res->body;
    EXPECT_EQ(body.value("reason", ""), "BadRequest") << res->body;
    EXPECT_EQ(body.value("code", 0), 400) << res->body;
    EXPECT_FALSE(body.value("message", "").empty()) << res->body;
  }
  // An unknown resource spelt with such bytes is still a 404 Status; so is a name that is
  // UTF-8 but no object's (as kubectl would be told).
  for (const char* path : {"/api/v1/%ff", "/api/v1/namespaces/default/configmaps/Not_A_Name"}) {
    auto res = http.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path << ": " << res->body;
    EXPECT_TRUE(absl::StrContains(res->body, "\"kind\":\"Status\"")) << path << ": " << res->body;
  }
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

// Every thread of a running clusterd but the main one blocks SIGTERM and SIGINT, so that a stop
// signal waits for the main thread's sigwait (a graceful stop) whenever it comes; the main thread
// unblocks them only while it waits in sigwait. The run log's flusher thread used to start before
// the block: a SIGTERM during start-up reached it and ended the process at once, without its stop
// and with the run log's last second unwritten.
TEST(ClusterdProcess, EveryThreadBlocksTheStopSignals) {
  TempDir dir;
  auto proc = StartClusterd(dir, "memory", {"-logFile=" + dir.path() + "/log/clusterd.log"});
  ASSERT_NE(proc, nullptr);
  const std::string tasks = absl::StrCat("/proc/", proc->process().pid(), "/task");
  size_t threads = 0;
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    if (task.path().filename() == std::to_string(proc->process().pid())) continue;  // main
    const std::string status = ReadWholeFile(task.path().string() + "/status").value_or("");
    const size_t at = status.find("SigBlk:");
    if (at == std::string::npos) continue;  // the thread ended meanwhile
    uint64_t blocked = 0;
    ASSERT_TRUE(absl::SimpleHexAtoi(
        absl::StripAsciiWhitespace(status.substr(at + 7, status.find('\n', at) - at - 7)),
        &blocked))
        << status;
    ++threads;
    const uint64_t stop = (uint64_t{1} << (SIGTERM - 1)) | (uint64_t{1} << (SIGINT - 1));
    EXPECT_EQ(blocked & stop, stop) << task.path() << " SigBlk " << std::hex << blocked;
  }
  EXPECT_GT(threads, 5u);
  ASSERT_TRUE(proc->Stop().ok());
}

// The threads whose work can wait a scheduler tick run as SCHED_BATCH, so that the work a store
// write wakes does not preempt a report's recovery strand or the gRPC threads (docs/benchmarks.md,
// "Ninth round"); the threads on a request's path stay ordinary.
TEST(ClusterdProcess, BackgroundThreadsRunAsBatchAndTheRequestPathDoesNot) {
  TempDir dir;
  auto proc = StartClusterd(dir, "dir:" + dir.path() + "/state");
  ASSERT_NE(proc, nullptr);
  const std::string tasks = absl::StrCat("/proc/", proc->process().pid(), "/task");
  std::map<std::string, std::set<int>> policies;  // thread name -> scheduling policies seen
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    const std::string name = std::string(
        absl::StripAsciiWhitespace(ReadWholeFile((task.path() / "comm").string()).value_or("")));
    const std::string stat = ReadWholeFile((task.path() / "stat").string()).value_or("");
    const size_t close = stat.rfind(')');
    if (name.empty() || close == std::string::npos) continue;  // the thread ended meanwhile
    // proc(5): after the name, fields 3.. of the line; the 41st is the policy.
    const std::vector<std::string> fields =
        absl::StrSplit(stat.substr(close + 2), ' ', absl::SkipEmpty());
    int policy = -1;
    ASSERT_GT(fields.size(), 38u) << stat;
    ASSERT_TRUE(absl::SimpleAtoi(fields[38], &policy)) << stat;
    policies[name].insert(policy);
  }
  for (const char* background :
       {"dir-inotify", "store-watch", "job-registry", "fault-centre", "rank-tables", "cluster-info",
        "recover-bridge", "goodput", "slow-node"}) {
    EXPECT_EQ(policies[background], std::set<int>{SCHED_BATCH}) << background;
  }
  for (const char* request_path : {"recovery", "grpc-handler"}) {
    EXPECT_EQ(policies[request_path], std::set<int>{SCHED_OTHER}) << request_path;
  }
  ASSERT_TRUE(proc->Stop().ok());
}

// The original's shipped command line (its flags, Go style) runs clusterd with the same meaning:
// the run log goes to -logFile, the level is -logLevel's.
TEST(ClusterdProcess, TheOriginalsFlagsWriteTheRunLogToItsFile) {
  TempDir dir;
  const std::string log_file = dir.path() + "/log/clusterd.log";
  auto proc = StartClusterd(dir, "memory",
                            {"-logFile=" + log_file, "-logLevel=0", "--enable-healthz=true"});
  ASSERT_NE(proc, nullptr);
  httplib::Client http("http://" + proc->http_address());
  auto root = http.Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 200);
  absl::StatusOr<int> stopped = proc->Stop();
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(*stopped, 0) << "a stop signal must end clusterd through its stop, not at once";
  const std::string text = ReadWholeFile(log_file).value_or("");
  EXPECT_TRUE(absl::StrContains(text, "original flag -logLevel=0 read as --log-level=info"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "[clusterd] ready")) << text;
  EXPECT_TRUE(absl::StrContains(text, "[clusterd] stopped")) << text;
}

TEST(ClusterdProcess, AnOriginalFlagWithAValueTheOriginalRefusesIsRefused) {
  TempDir dir;
  std::optional<Outcome> r = RunClusterdToExit(
      dir, "max-age", {"--store", "memory", "-maxAge=3", "--grpc-listen", "127.0.0.1:0"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r->output, "-maxAge=3")) << r->output;
  EXPECT_TRUE(absl::StrContains(r->output, "--log-max-age")) << r->output;
}

// The shipped data files belong to the installation: without one, clusterd does not start, and
// says which file (not "malformed JSON").
TEST(ClusterdProcess, ADataDirectoryWithoutOneFileStopsStartNamingTheFile) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  for (const char* name : {"relationFaultCustomization.json", "publicFaultConfiguration.json"}) {
    std::filesystem::copy_file(std::string(CLUSTERD_DATA_DIR) + "/" + name, data + "/" + name);
  }
  std::optional<Outcome> r =
      RunClusterdToExit(dir, "no-duration",
                        {"--store", "memory", "--data-dir", data, "--grpc-listen", "127.0.0.1:0",
                         "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r->output, data + "/faultDuration.json")) << r->output;
  EXPECT_FALSE(absl::StrContains(r->output, "malformed")) << r->output;
}

TEST(ClusterdProcess, ReadyzNamesAnOptionalFileThatIsNotThere) {
  TempDir dir;
  const std::string user = dir.path() + "/publicCustomization.json";
  auto proc = StartClusterd(dir, "memory", {"--public-fault-config", user});
  ASSERT_NE(proc, nullptr);
  httplib::Client http("http://" + proc->http_address());
  auto readyz = http.Get("/readyz");
  ASSERT_TRUE(readyz);
  EXPECT_EQ(readyz->status, 200);
  EXPECT_TRUE(absl::StartsWith(readyz->body, "ok\nnote: optional file " + user)) << readyz->body;
}

// A state directory clusterd cannot write is refused at start, naming it (as a user without
// the right to it when the test runs as root).
TEST(ClusterdProcess, AStateDirectoryThatIsNotWritableIsRefused) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  std::filesystem::create_directories(state);
  std::vector<std::string> wrapper;
  if (geteuid() == 0) {
    if (!std::filesystem::exists("/usr/bin/setpriv")) GTEST_SKIP() << "root without setpriv";
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                                 std::filesystem::perms::group_exec |
                                                 std::filesystem::perms::others_exec);
    wrapper = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  } else {
    std::filesystem::permissions(
        state, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  }
  std::optional<Outcome> r = RunClusterdToExit(
      dir, "unwritable",
      {"--store", "dir:" + state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"},
      absl::Seconds(15), wrapper);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code, 1) << r->output;
  EXPECT_TRUE(absl::StrContains(r->output, state)) << r->output;
  EXPECT_TRUE(absl::StrContains(r->output, "not writable")) << r->output;
  std::filesystem::permissions(state, std::filesystem::perms::owner_all);
}

// A usage error exits 2 in every binary (CLI11's own codes, 106 and 109, are not a convention
// scripts know); --help still exits 0.
TEST(ClusterdProcess, EveryBinaryExitsTwoOnAUsageError) {
  std::vector<std::string> binaries = {CLUSTERD_BIN, CLUSTERSIM_BIN, CLUSTERCTL_BIN};
#ifdef NPU_AGENT_BIN
  binaries.push_back(NPU_AGENT_BIN);
#endif
  for (const std::string& binary : binaries) {
    CommandResult unknown = RunCommand(binary + " --no-such-flag");
    EXPECT_EQ(unknown.exit_code, 2) << binary << ": " << unknown.output;
    // The first problem CLI11 meets is named (the unknown flag, or a required one missing).
    EXPECT_TRUE(absl::StrContains(unknown.output, "Run with --help"))
        << binary << ": " << unknown.output;
    CommandResult help = RunCommand(binary + " --help");
    EXPECT_EQ(help.exit_code, 0) << binary;
  }
}

}  // namespace clusterd_process_test
}  // namespace clusterd
