#include "server/connection_limits.h"

#include "gtest/gtest.h"

namespace clusterd::server {
namespace connection_limits_test {

using Verdict = ConnectionLimits::Verdict;

TEST(ConnectionLimits, DefaultsAreThoseOfTheOriginal) {
  ConnectionLimits::Limits limits;
  EXPECT_EQ(limits.max_total, 1024u);
  EXPECT_EQ(limits.max_per_client, 512u);
}

TEST(ConnectionLimits, RefusesPastThePerClientLimitButServesOthers) {
  ConnectionLimits limits({.max_total = 10, .max_per_client = 3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limits.TryAdmit("10.0.0.1"), Verdict::kAdmitted);
  EXPECT_EQ(limits.TryAdmit("10.0.0.1"), Verdict::kPerClient);
  EXPECT_EQ(limits.TryAdmit("10.0.0.2"), Verdict::kAdmitted);
  EXPECT_EQ(limits.of("10.0.0.1"), 3u);
  EXPECT_EQ(limits.total(), 4u);
  limits.Release("10.0.0.1");
  EXPECT_EQ(limits.TryAdmit("10.0.0.1"), Verdict::kAdmitted);
}

TEST(ConnectionLimits, RefusesPastTheTotal) {
  ConnectionLimits limits({.max_total = 4, .max_per_client = 3});
  for (int i = 0; i < 3; ++i) ASSERT_EQ(limits.TryAdmit("a"), Verdict::kAdmitted);
  ASSERT_EQ(limits.TryAdmit("b"), Verdict::kAdmitted);
  EXPECT_EQ(limits.TryAdmit("c"), Verdict::kTotal);
  EXPECT_EQ(ConnectionLimits::ReasonOf(Verdict::kTotal), "total");
  EXPECT_EQ(ConnectionLimits::ReasonOf(Verdict::kPerClient), "per_client");
}

TEST(ConnectionLimits, ClientsWithoutConnectionsAreForgotten) {
  ConnectionLimits limits({.max_total = 4, .max_per_client = 4});
  ASSERT_EQ(limits.TryAdmit("a"), Verdict::kAdmitted);
  ASSERT_EQ(limits.TryAdmit("b"), Verdict::kAdmitted);
  limits.Release("a");
  limits.Release("b");
  limits.Release("never-admitted");
  EXPECT_EQ(limits.clients(), 0u);
  EXPECT_EQ(limits.total(), 0u);
}

}  // namespace connection_limits_test
}  // namespace clusterd::server
