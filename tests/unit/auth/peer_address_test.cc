#include "auth/peer_address.h"

#include "gtest/gtest.h"

namespace clusterd::auth {
namespace peer_address_test {

TEST(PeerAddress, Ipv4PeerGivesTheAddressAndLoopbackness) {
  auto p = ParsePeerAddress("ipv4:10.1.2.3:45678");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ip, "10.1.2.3");
  EXPECT_FALSE(p->loopback);
  auto l = ParsePeerAddress("ipv4:127.0.0.5:1");
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->loopback);
}

TEST(PeerAddress, Ipv6PeerInBothBracketSpellings) {
  auto p = ParsePeerAddress("ipv6:[fd00::1]:5000");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ip, "fd00::1");
  auto encoded = ParsePeerAddress("ipv6:%5B::1%5D:5000");
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_EQ(encoded->ip, "::1");
  EXPECT_TRUE(encoded->loopback);
}

TEST(PeerAddress, Ipv4MappedIpv6BecomesIpv4) {
  auto p = ParsePeerAddress("ipv6:[::ffff:172.16.0.9]:5000");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ip, "172.16.0.9");
}

TEST(PeerAddress, UnixSocketIsLocal) {
  auto p = ParsePeerAddress("unix:/run/clusterd.sock");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->loopback);
}

TEST(PeerAddress, GarbageIsRefusedWithTheText) {
  auto p = ParsePeerAddress("ipv4:not-an-ip:1");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not-an-ip"), absl::string_view::npos);
  EXPECT_FALSE(ParsePeerAddress("tcp:1.2.3.4:5").ok());
  EXPECT_FALSE(ParsePeerAddress("ipv4:1.2.3.4").ok());
}

}  // namespace peer_address_test
}  // namespace clusterd::auth
