#include "auth/authorizer.h"

#include "auth/permissions.h"
#include "common/metrics.h"
#include "gtest/gtest.h"

namespace clusterd::auth {
namespace authorizer_test {

class FixedTokens final : public TokenAuthenticator {
 public:
  absl::StatusOr<Principal> Authenticate(absl::string_view token) override {
    if (token == "op") {
      Principal p;
      p.name = "alice";
      p.groups = {"clusterd:operators", "system:authenticated"};
      p.method = AuthMethod::kToken;
      return p;
    }
    if (token == "ccae") {
      Principal p;
      p.name = "ccae";
      p.groups = {"system:authenticated"};
      p.method = AuthMethod::kToken;
      return p;
    }
    return absl::UnauthenticatedError("unknown bearer token");
  }
};

class AuthorizerTest : public ::testing::Test {
 protected:
  explicit AuthorizerTest(DeploymentMode mode = DeploymentMode::kKubernetes)
      : policy_(DefaultPolicy(mode)),
        authz_(Authorizer::Options{&policy_, &tokens_, &pods_}, clock_) {
    pods_.Set("default/pt-0", "10.0.0.5", "job-a");
    pods_.Set("default/pt-1", "10.0.0.6", "job-a");
    pods_.Set("other/x-0", "10.0.0.9", "job-b");
  }
  static Caller From(std::string peer, std::string authorization = "") {
    return Caller{std::move(peer), std::move(authorization), ""};
  }
  ManualClock clock_;
  FixedTokens tokens_;
  PodIdentityIndex pods_;
  PolicySource policy_;
  Authorizer authz_;
};

TEST_F(AuthorizerTest, AJobsOwnPodMayActForIt) {
  EXPECT_TRUE(authz_.ActForJob("/Recover/Init", From("ipv4:10.0.0.5:4000"), "job-a").ok());
  EXPECT_TRUE(authz_.ActForJob("/Recover/Init", From("ipv4:10.0.0.6:4000"), "job-a").ok());
}

TEST_F(AuthorizerTest, AForeignPodIsDeniedWithJobAndAddressInTheMessage) {
  auto& denied = MetricsRegistry::Default().GetCounter(
      "clusterd_authz_denied_total", "",
      {{"method", "/Recover/ReportProcessFault"}, {"reason", "not_job_pod"}});
  const uint64_t before = denied.Value();
  absl::Status s =
      authz_.ActForJob("/Recover/ReportProcessFault", From("ipv4:10.0.0.9:4000"), "job-a");
  ASSERT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_NE(s.message().find("job job-a"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("ipv4:10.0.0.9:4000"), absl::string_view::npos) << s;
  EXPECT_EQ(denied.Value(), before + 1);
}

TEST_F(AuthorizerTest, KubernetesDefaultDoesNotTrustLoopback) {
  EXPECT_TRUE(absl::IsPermissionDenied(
      authz_.ActForJob("/Recover/Init", From("ipv4:127.0.0.1:1"), "job-a")));
}

TEST_F(AuthorizerTest, AnOperatorTokenMayActForAnyJob) {
  EXPECT_TRUE(
      authz_.ActForJob("/Recover/Init", From("ipv4:10.9.9.9:1", "Bearer op"), "job-a").ok());
}

TEST_F(AuthorizerTest, ABadTokenIsUnauthenticatedEvenFromThePod) {
  absl::Status s = authz_.ActForJob("/Recover/Init", From("ipv4:10.0.0.5:1", "Bearer x"), "job-a");
  ASSERT_TRUE(absl::IsUnauthenticated(s)) << s;
  EXPECT_NE(s.message().find("unknown bearer token"), absl::string_view::npos) << s;
  absl::Status malformed = authz_.Permit(
      "/PubFault/SendPublicFault", From("ipv4:1.1.1.1:1", "Basic abc"), kPermPubFaultSend, "CCAE");
  ASSERT_TRUE(absl::IsUnauthenticated(malformed)) << malformed;
  EXPECT_NE(malformed.message().find("malformed credential"), absl::string_view::npos);
}

TEST_F(AuthorizerTest, OperatorCallsNeedACredentialThenThePermission) {
  absl::Status none =
      authz_.Permit("/Recover/StressTest", From("ipv4:10.0.0.5:1"), kPermStressTest);
  ASSERT_TRUE(absl::IsUnauthenticated(none)) << none;
  EXPECT_NE(none.message().find("needs a credential with permission stresstest"),
            absl::string_view::npos)
      << none;
  absl::Status wrong =
      authz_.Permit("/Recover/StressTest", From("ipv4:10.0.0.5:1", "Bearer ccae"), kPermStressTest);
  ASSERT_TRUE(absl::IsPermissionDenied(wrong)) << wrong;
  EXPECT_NE(wrong.message().find("ccae"), absl::string_view::npos);
  Principal who;
  EXPECT_TRUE(authz_
                  .Permit("/Recover/StressTest", From("ipv4:10.0.0.5:1", "Bearer op"),
                          kPermStressTest, "", &who)
                  .ok());
  EXPECT_EQ(who.name, "alice");
}

TEST_F(AuthorizerTest, AClientCertificateNamesThePrincipal) {
  Caller c = From("ipv4:10.2.2.2:1");
  c.cert_common_name = "platform";
  auto p = authz_.Authenticate(c);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "platform");
  EXPECT_EQ(p->method, AuthMethod::kClientCert);
}

TEST_F(AuthorizerTest, TheIndexFollowsPodChanges) {
  pods_.Set("default/pt-0", "10.0.0.7", "job-a");  // the pod was recreated with a new IP
  EXPECT_FALSE(authz_.ActForJob("/Recover/Init", From("ipv4:10.0.0.5:1"), "job-a").ok());
  EXPECT_TRUE(authz_.ActForJob("/Recover/Init", From("ipv4:10.0.0.7:1"), "job-a").ok());
  pods_.Remove("default/pt-0");
  EXPECT_FALSE(authz_.ActForJob("/Recover/Init", From("ipv4:10.0.0.7:1"), "job-a").ok());
}

class EmbeddedAuthorizerTest : public AuthorizerTest {
 protected:
  EmbeddedAuthorizerTest() : AuthorizerTest(DeploymentMode::kEmbedded) {}
};

TEST_F(EmbeddedAuthorizerTest, LoopbackCallersKeepTodaysBehaviour) {
  EXPECT_TRUE(authz_.ActForJob("/Recover/Init", From("ipv4:127.0.0.1:1"), "job-a").ok());
  EXPECT_TRUE(authz_.ActForJob("/Recover/Init", From("ipv6:[::1]:1"), "job-unknown").ok());
  EXPECT_TRUE(authz_.Permit("/Recover/StressTest", From("ipv4:127.0.0.1:1"), kPermStressTest).ok());
  EXPECT_FALSE(authz_.ActForJob("/Recover/Init", From("ipv4:10.7.7.7:1"), "job-a").ok());
  EXPECT_FALSE(authz_.Permit("/Recover/StressTest", From("ipv4:10.7.7.7:1"), kPermStressTest).ok());
}

}  // namespace authorizer_test
}  // namespace clusterd::auth
