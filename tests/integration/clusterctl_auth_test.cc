// clusterctl's credentials against a clusterd that enforces them (docs/security.md): bearer
// tokens and client certificates, over HTTPS and gRPC TLS, each refusal with its own message and
// exit code, and the refusals counted per method. clusterd runs with a policy that gives the
// anonymous loopback caller nothing, as a Kubernetes deployment does for remote callers.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "test_env.h"
#include "test_pki.h"

namespace clusterd {
namespace clusterctl_auth_test {

using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;
using testing::TestPki;

constexpr char kPolicy[] = R"(jobIdentity: loopback
rules:
- users: [alice]
  permissions: [read]
- users: [alice]
  permissions: [pubfault:send]
  resources: [CCAE]
- users: [bob]
  permissions: [read]
)";

class ClusterctlAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = std::make_unique<TestPki>(dir_.path());
    pki_->Issue("server", "clusterd", true);
    pki_->Issue("alice", "alice", false);
    pki_->Issue("mallory", "mallory", false);
    std::filesystem::create_directories(dir_.path() + "/other");
    other_ = std::make_unique<TestPki>(dir_.path() + "/other");
    other_->Issue("alice", "alice", false);  // the right name from the wrong CA
    std::ofstream(dir_.path() + "/policy.yaml") << kPolicy;
    std::ofstream(dir_.path() + "/tokens.csv") << "b0b-t0ken,bob,1\n";
    testing::WriteStoreObjectFile(
        dir_.path() + "/state", "nodes",
        {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "node-a"}}}});

    sim::ClusterdProcess::Options options;
    options.binary = CLUSTERD_BIN;
    options.store = "dir:" + dir_.path() + "/state";
    options.work_dir = dir_.path() + "/run";
    const std::string ca = pki_->Path("ca.pem"), cert = pki_->Path("server.pem"),
                      key = pki_->Path("server.key");
    options.extra_args = {"--auth-policy",     dir_.path() + "/policy.yaml",
                          "--token-auth-file", dir_.path() + "/tokens.csv",
                          "--grpc-tls-listen", "127.0.0.1:0",
                          "--grpc-tls-cert",   cert,
                          "--grpc-tls-key",    key,
                          "--grpc-client-ca",  ca,
                          "--http-tls-cert",   cert,
                          "--http-tls-key",    key,
                          "--http-client-ca",  ca};
    auto proc = sim::ClusterdProcess::Start(options);
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = std::move(*proc);
    std::ifstream in(dir_.path() + "/run/listen.json");
    grpc_tls_ = nlohmann::json::parse(in, nullptr, false).value("grpc_tls", "");
    ASSERT_FALSE(grpc_tls_.empty());
  }

  // clusterctl over HTTPS (and the gRPC TLS port) with `args` (credentials and a command).
  CommandResult Ctl(const std::string& args) {
    return RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --timeout 10 --config /dev/null --addr ",
                                   grpc_tls_, " --http https://", proc_->http_address(), " ", args,
                                   " 2>&1"));
  }
  std::string Ca() const { return " --cacert " + pki_->Path("ca.pem"); }
  std::string As(const TestPki& pki, const std::string& who) const {
    return absl::StrCat(" --cert ", pki.Path(who + ".pem"), " --key ", pki.Path(who + ".key"));
  }

  // One sample of /metrics (open, over HTTPS).
  double Metric(const std::string& sample) {
    httplib::SSLClient https(
        "127.0.0.1", std::stoi(proc_->http_address().substr(proc_->http_address().rfind(':') + 1)));
    https.set_ca_cert_path(pki_->Path("ca.pem").c_str());
    https.enable_server_certificate_verification(true);
    auto res = https.Get("/metrics");
    if (!res || res->status != 200) return -1;
    for (absl::string_view line : absl::StrSplit(res->body, '\n')) {
      if (absl::StartsWith(line, sample + " ")) {
        double v = 0;
        if (absl::SimpleAtod(line.substr(sample.size() + 1), &v)) return v;
      }
    }
    return 0;
  }

  TempDir dir_;
  std::unique_ptr<TestPki> pki_, other_;
  std::unique_ptr<sim::ClusterdProcess> proc_;
  std::string grpc_tls_;
};

TEST_F(ClusterctlAuthTest, HttpsReadsNeedATokenOrACertificateWithRead) {
  CommandResult anonymous = Ctl(Ca() + " get jobs");
  EXPECT_EQ(anonymous.exit_code, 1) << anonymous.output;
  EXPECT_TRUE(absl::StrContains(anonymous.output, "not authenticated by clusterd (HTTP 401)"))
      << anonymous.output;
  EXPECT_TRUE(absl::StrContains(anonymous.output, "needs a credential with permission read"))
      << anonymous.output;

  CommandResult bob = Ctl(Ca() + " --token b0b-t0ken get jobs");
  EXPECT_EQ(bob.exit_code, 0) << bob.output;
  CommandResult alice = Ctl(Ca() + As(*pki_, "alice") + " get jobs");
  EXPECT_EQ(alice.exit_code, 0) << alice.output;

  CommandResult mallory = Ctl(Ca() + As(*pki_, "mallory") + " get jobs");
  EXPECT_EQ(mallory.exit_code, 1) << mallory.output;
  EXPECT_TRUE(absl::StrContains(mallory.output, "not permitted by clusterd (HTTP 403)"))
      << mallory.output;
  EXPECT_TRUE(absl::StrContains(mallory.output, "mallory")) << mallory.output;

  CommandResult forged = Ctl(Ca() + " --token f0rged get jobs");
  EXPECT_EQ(forged.exit_code, 1) << forged.output;
  EXPECT_TRUE(absl::StrContains(forged.output, "unknown bearer token")) << forged.output;

  // Without the CA clusterd's certificate is not trusted: unreachable, not a silent downgrade.
  CommandResult untrusted = Ctl("--token b0b-t0ken get jobs");
  EXPECT_EQ(untrusted.exit_code, 3) << untrusted.output;

  EXPECT_GE(Metric("clusterd_authz_denied_total{method=\"HTTP /api/clusterd/v1/jobs\",reason="
                   "\"no_credential\"}"),
            1);
  EXPECT_GE(Metric("clusterd_authz_denied_total{method=\"HTTP /api/clusterd/v1/jobs\",reason="
                   "\"no_permission\"}"),
            1);
}

TEST_F(ClusterctlAuthTest, GrpcTlsTakesTheClientCertificateAsTheCaller) {
  const std::string inject = " inject fault --node node-a --npu 0 --code 220001001";
  CommandResult alice = Ctl(Ca() + As(*pki_, "alice") + inject);
  EXPECT_EQ(alice.exit_code, 0) << alice.output;
  EXPECT_TRUE(absl::StrContains(alice.output, "accepted")) << alice.output;

  CommandResult mallory = Ctl(Ca() + As(*pki_, "mallory") + inject);
  EXPECT_EQ(mallory.exit_code, 1) << mallory.output;
  EXPECT_TRUE(absl::StrContains(mallory.output, "not permitted by clusterd")) << mallory.output;
  EXPECT_TRUE(absl::StrContains(mallory.output, "mallory")) << mallory.output;
  EXPECT_TRUE(absl::StrContains(mallory.output, "pubfault:send on CCAE")) << mallory.output;
  EXPECT_GE(Metric("clusterd_authz_denied_total{method=\"/PubFault/SendPublicFault\",reason="
                   "\"no_permission\"}"),
            1);

  // alice may send for CCAE only.
  CommandResult other_sender = Ctl(Ca() + As(*pki_, "alice") + inject + " --resource fd-online");
  EXPECT_EQ(other_sender.exit_code, 1) << other_sender.output;
  EXPECT_TRUE(absl::StrContains(other_sender.output, "pubfault:send on fd-online"))
      << other_sender.output;

  // A certificate from another CA, or none, does not get past the handshake.
  CommandResult foreign = Ctl(Ca() + As(*other_, "alice") + inject);
  EXPECT_EQ(foreign.exit_code, 3) << foreign.output;
  CommandResult none = Ctl(Ca() + inject);
  EXPECT_EQ(none.exit_code, 3) << none.output;
}

TEST_F(ClusterctlAuthTest, BadCredentialFilesAreUsageErrorsNamingTheFile) {
  CommandResult missing = Ctl(" --cacert /nonexistent/ca.pem get jobs");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(absl::StrContains(missing.output, "/nonexistent/ca.pem")) << missing.output;
  CommandResult not_pem = Ctl(" --cacert " + dir_.path() + "/policy.yaml get jobs");
  EXPECT_EQ(not_pem.exit_code, 2) << not_pem.output;
  EXPECT_TRUE(absl::StrContains(not_pem.output, "not a PEM file")) << not_pem.output;
  CommandResult half = Ctl(Ca() + " --cert " + pki_->Path("alice.pem") + " get jobs");
  EXPECT_EQ(half.exit_code, 2) << half.output;
  EXPECT_TRUE(absl::StrContains(half.output, "--cert and --key go together")) << half.output;

  // The same files from the credentials file.
  const std::string config = dir_.path() + "/ctl.config";
  std::ofstream(config) << "certificate-authority: " << pki_->Path("ca.pem")
                        << "\nclient-certificate: " << pki_->Path("alice.pem")
                        << "\nclient-key: " << pki_->Path("alice.key") << "\n";
  CommandResult from_file =
      RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --timeout 10 --config ", config, " --http https://",
                              proc_->http_address(), " get jobs 2>&1"));
  EXPECT_EQ(from_file.exit_code, 0) << from_file.output;
}

}  // namespace clusterctl_auth_test
}  // namespace clusterd
