// The HTTP port is safe to expose (issue 17): idle and slowloris connections, connection caps,
// header and body limits, the store mirror off by default and what it never serves, the
// authorisation hook, and HTTPS with certificate reload. Real clusterd processes on loopback
// (port 0); attackers connect from 127.0.0.2/127.0.0.3 so the probes (127.0.0.1) are another
// client, as the kubelet is on a cluster.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "server/http_server.h"
#include "sim/clusterd_process.h"
#include "store/object_store.h"
#include "test_env.h"
#include "test_pki.h"

namespace clusterd {
namespace http_hardening_test {

using testing::RunCommand;
using testing::TempDir;
using testing::TestPki;
using Json = nlohmann::ordered_json;

int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

// A TCP connection from `source` (a loopback address) to 127.0.0.1:port; -1 on failure.
int Connect(const std::string& source, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source.c_str(), &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// What the server sends before `timeout` or until it closes (or `until` appears).
std::string ReadFor(int fd, std::chrono::milliseconds timeout, const std::string& until = "") {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (!until.empty() && absl::StrContains(out, until)) break;
  }
  return out;
}

// A connection from `source` that the server has admitted: one keep-alive request is answered
// on it. The event loops accept in parallel, so a connection the kernel completed is not yet
// counted; the refusal tests below need the earlier ones counted before the next arrives. A
// filler refused because a probe's closed connection was not yet released is retried.
int ConnectAdmitted(const std::string& source, int port) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int fd = Connect(source, port);
    if (fd < 0) return -1;
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size()) &&
        absl::StrContains(ReadFor(fd, std::chrono::seconds(5), "ok\n"), "200")) {
      return fd;
    }
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

// True when the server closed `fd` (EOF or reset) within `timeout`.
bool ClosedWithin(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char c;
  return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

// One GET /healthz on a new connection: its latency in ms, or -1 when it failed.
double ProbeHealthzMs(int port) {
  auto start = std::chrono::steady_clock::now();
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(5);
  http.set_read_timeout(5);
  auto res = http.Get("/healthz");
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return res && res->status == 200 ? ms : -1;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * (v.size() - 1) + 0.5))];
}

// The value of one counter sample in /metrics (0 when absent).
double Metric(int port, const std::string& sample) {
  return testing::MetricSample(absl::StrCat("http://127.0.0.1:", port), sample);
}

int64_t VmRssKib(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "VmRSS:")) return std::stoll(line.substr(6));
  }
  return -1;
}

class HttpHardeningTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> extra, bool store_mirror = false) {
    sim::ClusterdProcess::Options options;
    options.binary = CLUSTERD_BIN;
    options.store = "dir:" + dir_.path() + "/state";
    options.work_dir = dir_.path() + absl::StrCat("/run", ++starts_);
    options.store_mirror = store_mirror;
    options.extra_args = std::move(extra);
    auto proc = sim::ClusterdProcess::Start(options);
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = std::move(*proc);
    port_ = PortOf(proc_->http_address());
  }
  void Write(const std::string& resource, const Json& object) {
    testing::WriteStoreObjectFile(dir_.path() + "/state", resource, object);
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
  }

  TempDir dir_;
  int starts_ = 0;
  std::unique_ptr<sim::ClusterdProcess> proc_;
  int port_ = 0;
  std::vector<int> fds_;
};

// Before: 8 idle connections delayed /healthz 2-8 s and 8 slowloris ones made it unanswerable.
// Now a connection costs a slot of an event loop, not a thread: with 100 of each held open
// (the per-client cap raised so that all of them are), every probe is answered at once.
TEST_F(HttpHardeningTest, HundredIdleAndHundredSlowlorisConnectionsLeaveHealthzAnswering) {
  Start({"--http-max-connections-per-client", "1000"});
  for (int i = 0; i < 100; ++i) {
    int fd = Connect("127.0.0.2", port_);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  std::vector<int> loris;
  for (int i = 0; i < 100; ++i) {
    int fd = Connect("127.0.0.2", port_);
    ASSERT_GE(fd, 0);
    ASSERT_GT(send(fd, "GET /healthz HTTP/1.1\r\n", 23, MSG_NOSIGNAL), 0);
    loris.push_back(fd);
    fds_.push_back(fd);
  }
  std::vector<double> ms;
  for (int round = 0; round < 30; ++round) {
    for (int fd : loris) send(fd, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);  // one byte a round
    double t = ProbeHealthzMs(port_);
    ASSERT_GE(t, 0) << "probe " << round << " failed";
    ms.push_back(t);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  const double p50 = Percentile(ms, 50), p99 = Percentile(ms, 99);
  std::printf("healthz with 100 idle + 100 slowloris: p50=%.1f ms p99=%.1f ms\n", p50, p99);
  // The bar is 100 ms; a loaded 2-core CI machine gets a looser bound for the worst probe.
  EXPECT_LT(p50, 100);
  EXPECT_LT(p99, 1000);
}

// One client cannot hold more than --http-max-connections-per-client; the total is capped by
// --http-max-connections; another client (the probe) is still served.
TEST_F(HttpHardeningTest, ConnectionCapsPerClientAndInTotal) {
  Start({"--http-max-connections-per-client", "4", "--http-max-connections", "8"});
  for (int i = 0; i < 4; ++i) {
    int fd = ConnectAdmitted("127.0.0.2", port_);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  int fifth = Connect("127.0.0.2", port_);
  ASSERT_GE(fifth, 0);  // the kernel accepts; clusterd closes it at once
  fds_.push_back(fifth);
  EXPECT_TRUE(ClosedWithin(fifth, std::chrono::seconds(5)));
  EXPECT_GE(ProbeHealthzMs(port_), 0);
  EXPECT_GE(Metric(port_, "clusterd_http_refused_total{reason=\"connections_per_client\"}"), 1);

  for (int i = 0; i < 4; ++i) {
    int fd = ConnectAdmitted("127.0.0.3", port_);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  // 8 open now: a ninth from a third client is refused too.
  int ninth = Connect("127.0.0.4", port_);
  ASSERT_GE(ninth, 0);
  fds_.push_back(ninth);
  EXPECT_TRUE(ClosedWithin(ninth, std::chrono::seconds(5)));
  // Closing the attackers frees the slots.
  for (int fd : fds_) close(fd);
  fds_.clear();
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    served = ProbeHealthzMs(port_) >= 0;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(served);
  EXPECT_GE(Metric(port_, "clusterd_http_refused_total{reason=\"connections_total\"}"), 1);
}

// An idle connection is closed after --http-idle-timeout.
TEST_F(HttpHardeningTest, IdleConnectionsAreClosedAfterTheIdleTimeout) {
  Start({"--http-idle-timeout", "1"});
  int fd = Connect("127.0.0.2", port_);
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  EXPECT_TRUE(ClosedWithin(fd, std::chrono::seconds(10)));
}

TEST_F(HttpHardeningTest, AHeaderOf64KiBIsRefusedWith431AndCounted) {
  Start({});
  int fd = Connect("127.0.0.2", port_);
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  std::string request = absl::StrCat(
      "GET /version HTTP/1.1\r\nHost: x\r\nX-Big: ", std::string(64 * 1024, 'a'), "\r\n\r\n");
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string answer = ReadFor(fd, std::chrono::seconds(10));
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 431")) << answer.substr(0, 200);
  EXPECT_TRUE(absl::StrContains(answer, "\"kind\":\"Status\"")) << answer.substr(0, 400);
  EXPECT_GE(Metric(port_, "clusterd_http_refused_total{reason=\"header_too_large\"}"), 1);
  EXPECT_GE(ProbeHealthzMs(port_), 0);
}

// Before: three 400 MiB bodies took RSS to 1.5 GB. Now a 200 MiB body is answered 413 from
// its headers, before a byte of it is read, and RSS does not move.
TEST_F(HttpHardeningTest, ABodyOf200MiBIsRefusedAtOnceWith413AndRssStaysFlat) {
  Start({});
  const pid_t pid = proc_->process().pid();
  const int64_t before = VmRssKib(pid);
  std::vector<std::thread> senders;
  std::vector<std::string> answers(3);
  std::vector<double> answered_ms(3, -1);
  for (int i = 0; i < 3; ++i) {
    senders.emplace_back([&, i] {
      int fd = Connect("127.0.0.2", port_);
      if (fd < 0) return;
      auto start = std::chrono::steady_clock::now();
      std::string head =
          "POST /api/v1/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          "Content-Length: 209715200\r\n\r\n";
      send(fd, head.data(), head.size(), MSG_NOSIGNAL);
      // Start sending the body as an attacker would; the answer must come regardless.
      std::string mib(1 << 20, 'x');
      for (int k = 0; k < 4; ++k) send(fd, mib.data(), mib.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      answers[i] = ReadFor(fd, std::chrono::seconds(10), "\r\n\r\n");
      answered_ms[i] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      close(fd);
    });
  }
  for (auto& t : senders) t.join();
  const int64_t after = VmRssKib(pid);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(absl::StartsWith(answers[i], "HTTP/1.1 413")) << answers[i].substr(0, 200);
    EXPECT_LT(answered_ms[i], 5000);
  }
  std::printf("VmRSS before=%lld KiB after=%lld KiB\n", static_cast<long long>(before),
              static_cast<long long>(after));
  EXPECT_LT(after - before, 32 * 1024) << "RSS grew by " << (after - before) << " KiB";
  EXPECT_GE(Metric(port_, "clusterd_http_refused_total{reason=\"body_too_large\"}"), 3);
}

// A chunked body carries no length, and no route takes a body: 413 from its headers.
TEST_F(HttpHardeningTest, AChunkedBodyIsRefusedWith413FromItsHeaders) {
  Start({"--http-max-body-bytes", "65536"});
  int fd = Connect("127.0.0.2", port_);
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  std::string head = "POST /version HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  std::string chunk = absl::StrCat("4000\r\n", std::string(0x4000, 'x'), "\r\n");
  for (int i = 0; i < 8; ++i) send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  std::string answer = ReadFor(fd, std::chrono::seconds(10), "\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 413")) << answer.substr(0, 200);
  EXPECT_GE(Metric(port_, "clusterd_http_refused_total{reason=\"body_too_large\"}"), 1);
}

TEST_F(HttpHardeningTest, TheStoreMirrorIsOffByDefault) {
  Start({});
  httplib::Client http("127.0.0.1", port_);
  for (const char* path :
       {"/api/v1/configmaps", "/api/v1/pods", "/api/v1/namespaces/mindx-dl/configmaps"}) {
    auto res = http.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_TRUE(absl::StrContains(res->body, "--http-store-mirror")) << res->body;
  }
  // The clusterd endpoints still answer, and clusterctl's node and NPU views work.
  auto jobs = http.Get("/api/clusterd/v1/jobs");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  Write("nodes", {{"apiVersion", "v1"},
                  {"kind", "Node"},
                  {"metadata", {{"name", "node-a"}}},
                  {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    auto nodes = http.Get("/api/clusterd/v1/nodes/node-a");
    seen = nodes && nodes->status == 200;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(seen);
  auto r = RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", proc_->grpc_address(), " --http ",
                                   proc_->http_address(), " get nodes"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "node-a")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "Ready")) << r.output;
  r = RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", proc_->grpc_address(), " --http ",
                              proc_->http_address(), " get npus"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(HttpHardeningTest, TheMirrorNeverServesEnvNorForeignConfigMaps) {
  Json container = {{"name", "main"},
                    {"image", "train"},
                    {"env", {{{"name", "PASSWORD"}, {"value", "hunter2"}}}},
                    {"envFrom", {{{"secretRef", {{"name", "s3-keys"}}}}}}};
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "worker-0"},
                {"namespace", "tenant"},
                {"annotations",
                 {{"kubectl.kubernetes.io/last-applied-configuration", "{\"hunter2\":1}"}}}}},
              {"spec", {{"containers", {container}}, {"initContainers", {container}}}}};
  Write("pods", pod);
  auto cm = [](const std::string& ns, const std::string& name) {
    return Json{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"data", {{"k", "hunter2-" + name}}}};
  };
  Write("configmaps", cm("tenant", "app-settings"));
  Write("configmaps", cm("tenant", "job-summary-pt"));
  Write("configmaps", cm("mindx-dl", "mindx-dl-nodeinfo-node-a"));
  Start({}, /*store_mirror=*/true);
  httplib::Client http("127.0.0.1", port_);

  auto one = http.Get("/api/v1/namespaces/tenant/pods/worker-0");
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  auto list = http.Get("/api/v1/pods");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200);
  for (const std::string& body : {one->body, list->body}) {
    EXPECT_TRUE(absl::StrContains(body, "worker-0")) << body;
    EXPECT_FALSE(absl::StrContains(body, "hunter2")) << body;
    EXPECT_FALSE(absl::StrContains(body, "s3-keys")) << body;
    EXPECT_FALSE(absl::StrContains(body, "\"env\"")) << body;
  }

  auto foreign = http.Get("/api/v1/namespaces/tenant/configmaps/app-settings");
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 404) << foreign->body;
  EXPECT_FALSE(absl::StrContains(foreign->body, "hunter2")) << foreign->body;
  auto all = http.Get("/api/v1/configmaps");
  ASSERT_TRUE(all);
  EXPECT_FALSE(absl::StrContains(all->body, "app-settings")) << all->body;
  EXPECT_TRUE(absl::StrContains(all->body, "mindx-dl-nodeinfo-node-a")) << all->body;
  // clusterd's own ConfigMaps in a job's namespace are served.
  EXPECT_TRUE(absl::StrContains(all->body, "job-summary-pt")) << all->body;
  auto tenant = http.Get("/api/v1/namespaces/tenant/configmaps");
  ASSERT_TRUE(tenant);
  EXPECT_FALSE(absl::StrContains(tenant->body, "app-settings")) << tenant->body;
  auto own = http.Get("/api/v1/namespaces/tenant/configmaps/job-summary-pt");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200);
}

TEST_F(HttpHardeningTest, MoreConfigMapNamespacesCanBeServed) {
  Write("configmaps", {{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata", {{"name", "app-settings"}, {"namespace", "ops"}}},
                       {"data", {{"k", "v"}}}});
  Start({"--http-configmap-namespaces", "ops,other"}, /*store_mirror=*/true);
  httplib::Client http("127.0.0.1", port_);
  auto res = http.Get("/api/v1/namespaces/ops/configmaps/app-settings");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

// In process: the authorisation hook sees method, path, Authorization and peer; its answers
// become 401 (with WWW-Authenticate: Bearer) and 403 with a Status body; probes stay open.
TEST(HttpServerAuthorize, TheHookDecidesEveryRouteButTheProbes) {
  std::vector<server::HttpCaller> seen;
  absl::Mutex mu;
  server::HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  options.version = "test";
  options.authorize = [&](const server::HttpCaller& c) -> absl::Status {
    absl::MutexLock lock(&mu);
    seen.push_back(c);
    if (c.authorization.empty()) return absl::UnauthenticatedError("no bearer token");
    if (c.authorization != "Bearer good") return absl::PermissionDeniedError("token may not read");
    return absl::OkStatus();
  };
  auto http = server::HttpServer::Start(std::move(options));
  ASSERT_TRUE(http.ok()) << http.status();
  httplib::Client client("127.0.0.1", (*http)->port());

  auto healthz = client.Get("/healthz");
  ASSERT_TRUE(healthz);
  EXPECT_EQ(healthz->status, 200);
  auto readyz = client.Get("/readyz");
  ASSERT_TRUE(readyz);
  EXPECT_EQ(readyz->status, 200);
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(seen.empty());
  }

  auto anonymous = client.Get("/version");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_TRUE(absl::StartsWith(anonymous->get_header_value("WWW-Authenticate"), "Bearer"));
  EXPECT_TRUE(absl::StrContains(anonymous->body, "no bearer token")) << anonymous->body;

  auto denied = client.Get("/metrics", {{"Authorization", "Bearer bad"}});
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403);
  Json body = Json::parse(denied->body, nullptr, false);
  EXPECT_EQ(body.value("kind", ""), "Status") << denied->body;
  EXPECT_TRUE(absl::StrContains(body.value("message", ""), "token may not read")) << denied->body;

  auto ok = client.Get("/version", {{"Authorization", "Bearer good"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  absl::MutexLock lock(&mu);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].method, "GET");
  EXPECT_EQ(seen[2].path, "/version");
  EXPECT_EQ(seen[2].authorization, "Bearer good");
  EXPECT_EQ(seen[2].peer_ip, "127.0.0.1");
  EXPECT_TRUE(absl::StartsWith(seen[2].peer, "127.0.0.1:")) << seen[2].peer;
}

// ---- HTTPS ----

// The subject CN of the certificate the server presents now (openssl s_client).
std::string PresentedCn(int port, const std::string& ca) {
  auto r = RunCommand(absl::StrCat("openssl s_client -connect 127.0.0.1:", port, " -CAfile ", ca,
                                   " </dev/null 2>/dev/null | openssl x509 -noout -subject"));
  return r.output;
}

TEST(HttpTls, ServesHttpsAndReloadsTheCertificateWithoutARestart) {
  TempDir dir;
  TestPki pki(dir.path());
  pki.Issue("server", "clusterd-one", true);
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.work_dir = dir.path() + "/run";
  options.extra_args = {"--http-tls-cert", pki.Path("server.pem"), "--http-tls-key",
                        pki.Path("server.key")};
  // ClusterdProcess waits for the listen-info file, not for HTTP: fine over TLS.
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  const int port = PortOf((*proc)->http_address());

  httplib::SSLClient https("127.0.0.1", port);
  https.set_ca_cert_path(pki.Path("ca.pem").c_str());
  https.enable_server_certificate_verification(true);
  auto res = https.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(absl::StrContains(PresentedCn(port, pki.Path("ca.pem")), "clusterd-one"));
  // Plaintext on the TLS port is not served.
  httplib::Client plain("127.0.0.1", port);
  plain.set_read_timeout(3);
  auto p = plain.Get("/healthz");
  EXPECT_FALSE(p && p->status == 200);

  // Rotate in place (as cert-manager does): new handshakes get the new certificate.
  pki.Issue("next", "clusterd-two", true);
  std::filesystem::rename(pki.Path("next.key"), pki.Path("server.key.new"));
  std::filesystem::rename(pki.Path("next.pem"), pki.Path("server.pem.new"));
  std::filesystem::rename(pki.Path("server.key.new"), pki.Path("server.key"));
  std::filesystem::rename(pki.Path("server.pem.new"), pki.Path("server.pem"));
  bool rotated = false;
  for (int i = 0; i < 60 && !rotated; ++i) {
    rotated = absl::StrContains(PresentedCn(port, pki.Path("ca.pem")), "clusterd-two");
    if (!rotated) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_TRUE(rotated) << "still presenting " << PresentedCn(port, pki.Path("ca.pem"));
  httplib::SSLClient again("127.0.0.1", port);
  again.set_ca_cert_path(pki.Path("ca.pem").c_str());
  again.enable_server_certificate_verification(true);
  auto after = again.Get("/healthz");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

// Garbage instead of a TLS handshake, and a handshake left half-way, cost their connection only.
TEST(HttpTls, GarbageHandshakesDoNotStopTheProbes) {
  TempDir dir;
  TestPki pki(dir.path());
  pki.Issue("server", "clusterd", true);
  server::HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  options.tls.cert = pki.Path("server.pem");
  options.tls.key = pki.Path("server.key");
  auto http = server::HttpServer::Start(std::move(options));
  ASSERT_TRUE(http.ok()) << http.status();
  const int port = (*http)->port();
  std::vector<int> fds;
  for (int i = 0; i < 20; ++i) {
    int fd = Connect("127.0.0.2", port);
    ASSERT_GE(fd, 0);
    const std::string junk =
        i % 2 == 0 ? std::string("\x16\x03\x01\x00\x05hello", 10) : std::string(512, '\xff');
    send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  // The garbage connections are dropped; the half-way ones wait for their idle timeout.
  int dropped = 0;
  for (size_t i = 1; i < fds.size(); i += 2)
    dropped += ClosedWithin(fds[i], std::chrono::seconds(5));
  EXPECT_EQ(dropped, 10);
  httplib::SSLClient https("127.0.0.1", port);
  https.set_ca_cert_path(pki.Path("ca.pem").c_str());
  https.enable_server_certificate_verification(true);
  auto res = https.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  for (int fd : fds) close(fd);
}

TEST(HttpTls, AClientCertificateFromTheClientCaReachesTheHookWithItsSubject) {
  TempDir dir;
  TestPki pki(dir.path());
  pki.Issue("server", "clusterd", true);
  pki.Issue("client", "operator-alice", false);
  // A certificate of another CA.
  TempDir other_dir;
  TestPki other(other_dir.path());
  other.Issue("client", "mallory", false);

  std::vector<std::string> subjects;
  absl::Mutex mu;
  server::HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  options.tls.cert = pki.Path("server.pem");
  options.tls.key = pki.Path("server.key");
  options.tls.client_ca = pki.Path("ca.pem");
  options.authorize = [&](const server::HttpCaller& c) -> absl::Status {
    absl::MutexLock lock(&mu);
    subjects.push_back(c.client_cert_subject);
    if (c.client_cert_subject.empty()) return absl::UnauthenticatedError("no client certificate");
    return absl::OkStatus();
  };
  auto http = server::HttpServer::Start(std::move(options));
  ASSERT_TRUE(http.ok()) << http.status();
  const int port = (*http)->port();

  httplib::SSLClient alice("127.0.0.1", port, pki.Path("client.pem"), pki.Path("client.key"));
  alice.set_ca_cert_path(pki.Path("ca.pem").c_str());
  alice.enable_server_certificate_verification(true);
  auto ok = alice.Get("/version");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);

  httplib::SSLClient mallory("127.0.0.1", port, other.Path("client.pem"), other.Path("client.key"));
  mallory.set_ca_cert_path(pki.Path("ca.pem").c_str());
  mallory.enable_server_certificate_verification(true);
  auto refused = mallory.Get("/version");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);

  httplib::SSLClient anonymous("127.0.0.1", port);
  anonymous.set_ca_cert_path(pki.Path("ca.pem").c_str());
  anonymous.enable_server_certificate_verification(true);
  auto probe = anonymous.Get("/healthz");  // open path: no certificate needed
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->status, 200);

  absl::MutexLock lock(&mu);
  ASSERT_EQ(subjects.size(), 2u);
  EXPECT_TRUE(absl::StrContains(subjects[0], "CN=operator-alice")) << subjects[0];
  EXPECT_EQ(subjects[1], "");
}

TEST(HttpTls, UnreadableCertificateFilesAreAClearStartError) {
  TempDir dir;
  std::ofstream(dir.path() + "/bad.pem") << "not a certificate\n";
  std::ofstream(dir.path() + "/bad.key") << "not a key\n";
  server::HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  options.tls.cert = dir.path() + "/bad.pem";
  options.tls.key = dir.path() + "/bad.key";
  auto http = server::HttpServer::Start(std::move(options));
  ASSERT_FALSE(http.ok());
  EXPECT_TRUE(absl::StrContains(http.status().message(), "bad.pem")) << http.status();
  options = {};
  options.listen = "127.0.0.1:0";
  options.tls.cert = dir.path() + "/missing.pem";
  options.tls.key = dir.path() + "/bad.key";
  http = server::HttpServer::Start(std::move(options));
  ASSERT_FALSE(http.ok());
  EXPECT_TRUE(absl::StrContains(http.status().message(), "missing.pem")) << http.status();
}

}  // namespace http_hardening_test
}  // namespace clusterd
