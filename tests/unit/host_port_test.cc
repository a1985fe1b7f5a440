#include "gtest/gtest.h"
#include "server/grpc_server.h"

namespace clusterd::server {
namespace host_port_test {

TEST(ParseHostPort, AcceptsIpv4HostnamesAndBracketedIpv6) {
  auto a = ParseHostPort("127.0.0.1:8899");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8899);
  auto b = ParseHostPort("[::1]:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->ToString(), "[::1]:0");
  auto c = ParseHostPort("localhost:11251");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ToString(), "localhost:11251");
}

TEST(ParseHostPort, RefusesMalformedAddressesNamingThem) {
  for (const char* bad : {"nonsense", ":8899", "host:", "host:99999", "host:-1", "::1:80",
                          "[::1]", "[::1]80", "host:8a"}) {
    auto r = ParseHostPort(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), absl::string_view::npos) << r.status();
  }
}

}  // namespace host_port_test
}  // namespace clusterd::server
