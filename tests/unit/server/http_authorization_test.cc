// The HTTP side of authorisation: what the authorizer is told of an HTTP caller, and the route
// labels of clusterd_authz_denied_total.
#include "server/http_authorization.h"

#include <memory>

#include "auth/policy.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "gtest/gtest.h"

namespace clusterd::server {
namespace http_authorization_test {

TEST(HttpAuthorization, ThePeerTakesGrpcsFormSoThatOnePolicyReadsBoth) {
  HttpCaller v4;
  v4.peer = "10.0.0.7:51000";
  v4.peer_ip = "10.0.0.7";
  v4.authorization = "Bearer abc";
  auth::Caller c = AuthCallerOf(v4);
  EXPECT_EQ(c.peer, "ipv4:10.0.0.7:51000");
  EXPECT_EQ(c.authorization, "Bearer abc");
  EXPECT_EQ(c.cert_common_name, "");

  HttpCaller v6;
  v6.peer = "[::1]:4000";
  v6.peer_ip = "::1";
  EXPECT_EQ(AuthCallerOf(v6).peer, "ipv6:[::1]:4000");
  auto parsed = auth::ParsePeerAddress(AuthCallerOf(v6).peer);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->loopback);
}

TEST(HttpAuthorization, TheCommonNameOfASubjectIsTheUser) {
  EXPECT_EQ(CommonNameOf("CN=operator-alice,O=example"), "operator-alice");
  EXPECT_EQ(CommonNameOf("O=example,cn=bob"), "bob");
  EXPECT_EQ(CommonNameOf("CN=ops\\, team+OU=x"), "ops, team");
  EXPECT_EQ(CommonNameOf("CN=a\\2Cb"), "a,b");
  EXPECT_EQ(CommonNameOf("O=example"), "");
  EXPECT_EQ(CommonNameOf(""), "");
  EXPECT_EQ(CommonNameOf("CN"), "");
  HttpCaller tls;
  tls.peer = "10.0.0.7:1";
  tls.peer_ip = "10.0.0.7";
  tls.client_cert_subject = "CN=carol,O=ops";
  EXPECT_EQ(AuthCallerOf(tls).cert_common_name, "carol");
}

TEST(HttpAuthorization, RouteLabelsNeverCarryAJobNorARandomPath) {
  EXPECT_EQ(HttpRouteLabel("/api/clusterd/v1/jobs"), "HTTP /api/clusterd/v1/jobs");
  EXPECT_EQ(HttpRouteLabel("/api/clusterd/v1/jobs/default/ranktable"),
            "HTTP /api/clusterd/v1/jobs");
  EXPECT_EQ(HttpRouteLabel("/api/clusterd/v1/recovery/job-7"), "HTTP /api/clusterd/v1/recovery");
  EXPECT_EQ(HttpRouteLabel("/api/clusterd/v1/episodes"), "HTTP /api/clusterd/v1/episodes");
  EXPECT_EQ(HttpRouteLabel("/api/clusterd/v1/events/recent"), "HTTP /api/clusterd/v1/events");
  EXPECT_EQ(HttpRouteLabel("/api/v1/namespaces/x/configmaps"), "HTTP /api/v1");
  EXPECT_EQ(HttpRouteLabel("/"), "HTTP /");
  EXPECT_EQ(HttpRouteLabel("/dashboard"), "HTTP /dashboard");
  EXPECT_EQ(HttpRouteLabel("/version"), "HTTP /version");
  EXPECT_EQ(HttpRouteLabel("/api/clusterd/v1/zzz"), "HTTP other");
  EXPECT_EQ(HttpRouteLabel("/random-4711"), "HTTP other");
  EXPECT_EQ(HttpRouteLabel("/metrics/extra"), "HTTP other");
}

// The hook asks for `read`: anonymous remote callers are 401, a principal without it 403.
TEST(HttpAuthorization, EveryRouteNeedsRead) {
  auth::PolicySource policy(auth::DefaultPolicy(auth::DeploymentMode::kKubernetes));
  auth::Authorizer authorizer({.policy = &policy}, Clock::Real());
  auto hook = HttpReadAuthorizer(&authorizer);
  HttpCaller remote;
  remote.path = "/api/clusterd/v1/jobs";
  remote.peer = "10.1.2.3:5000";
  remote.peer_ip = "10.1.2.3";
  const double before =
      MetricsRegistry::Default()
          .GetCounter("clusterd_authz_denied_total", "",
                      {{"method", "HTTP /api/clusterd/v1/jobs"}, {"reason", "no_credential"}})
          .Value();
  absl::Status s = hook(remote);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_NE(s.message().find("permission read"), absl::string_view::npos) << s;
  EXPECT_EQ(MetricsRegistry::Default()
                .GetCounter("clusterd_authz_denied_total", "",
                            {{"method", "HTTP /api/clusterd/v1/jobs"}, {"reason", "no_credential"}})
                .Value(),
            before + 1);
  // kubectl port-forward arrives on loopback: it may read.
  HttpCaller forwarded = remote;
  forwarded.peer = "127.0.0.1:5000";
  forwarded.peer_ip = "127.0.0.1";
  EXPECT_TRUE(hook(forwarded).ok());
  // A certificate user the policy does not name.
  HttpCaller stranger = remote;
  stranger.client_cert_subject = "CN=stranger";
  EXPECT_EQ(hook(stranger).code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace http_authorization_test
}  // namespace clusterd::server
