#include "auth/policy.h"

#include "auth/permissions.h"
#include "gtest/gtest.h"

namespace clusterd::auth {
namespace policy_test {

Principal User(std::string name, std::vector<std::string> groups = {}) {
  Principal p;
  p.name = std::move(name);
  p.groups = std::move(groups);
  p.groups.push_back("system:authenticated");
  p.method = AuthMethod::kToken;
  return p;
}

TEST(Policy, ParsesYamlRulesBoundToResources) {
  auto p = ParsePolicy(
      "jobIdentity: podIP\n"
      "rules:\n"
      "- users: [ccae]\n"
      "  permissions: [pubfault:send]\n"
      "  resources: [CCAE]\n"
      "- groups: [ops]\n"
      "  permissions: [stresstest, read]\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->job_identity, JobIdentity::kPodIp);
  EXPECT_TRUE(p->Allows(User("ccae"), kPermPubFaultSend, "CCAE"));
  EXPECT_FALSE(p->Allows(User("ccae"), kPermPubFaultSend, "fd")) << "bound to its resource";
  EXPECT_FALSE(p->Allows(User("ccae"), kPermStressTest));
  EXPECT_TRUE(p->Allows(User("bob", {"ops"}), kPermStressTest));
  EXPECT_FALSE(p->Allows(User("bob", {"ops"}), kPermPubFaultSend, "CCAE"));
}

TEST(Policy, JsonIsAcceptedToo) {
  auto p = ParsePolicy(R"({"jobIdentity":"any","rules":[{"users":["a"],"permissions":["*"]}]})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->job_identity, JobIdentity::kAny);
  EXPECT_TRUE(p->Allows(User("a"), kPermInject));
}

TEST(Policy, MistakesAreRefusedWithWhere) {
  auto unknown = ParsePolicy("rules:\n- users: [a]\n  permissions: [pubfault:sned]\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown permission \"pubfault:sned\""),
            absl::string_view::npos);
  EXPECT_FALSE(ParsePolicy("jobIdentity: pod\n").ok());
  EXPECT_FALSE(ParsePolicy("rules:\n- permissions: [read]\n").ok()) << "names nobody";
  EXPECT_FALSE(ParsePolicy("rule: []\n").ok()) << "unknown field";
  EXPECT_FALSE(ParsePolicy("[1, 2").ok());
}

TEST(Policy, EmbeddedDefaultTrustsLoopbackKubernetesDefaultDoesNot) {
  Principal loop = AnonymousPrincipal(true);
  Principal remote = AnonymousPrincipal(false);
  Policy embedded = DefaultPolicy(DeploymentMode::kEmbedded);
  EXPECT_EQ(embedded.job_identity, JobIdentity::kLoopback);
  EXPECT_TRUE(embedded.Allows(loop, kPermStressTest));
  EXPECT_FALSE(embedded.Allows(remote, kPermStressTest));
  Policy kube = DefaultPolicy(DeploymentMode::kKubernetes);
  EXPECT_EQ(kube.job_identity, JobIdentity::kPodIp);
  EXPECT_FALSE(kube.Allows(loop, kPermStressTest));
  EXPECT_FALSE(kube.Allows(loop, kPermPubFaultSend, "CCAE"));
  EXPECT_TRUE(kube.Allows(User("op", {"clusterd:operators"}), kPermPubFaultSend, "CCAE"));
}

TEST(Policy, JsonRenderingRoundTrips) {
  Policy kube = DefaultPolicy(DeploymentMode::kKubernetes);
  auto back = ParsePolicy(PolicyJson(kube));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(PolicyJson(*back), PolicyJson(kube));
}

}  // namespace policy_test
}  // namespace clusterd::auth
