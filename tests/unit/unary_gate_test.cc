#include "server/unary_gate.h"

#include "gtest/gtest.h"

namespace clusterd::server {
namespace {

TEST(UnaryGate, SharedBucketRefusesPastTheBurstWithTheOriginalErrorText) {
  ManualClock clock;
  UnaryGate gate(clock, {.health_rate = 10, .health_burst = 10, .shared_rate = 2, .shared_burst = 2});
  EXPECT_TRUE(gate.Admit("/Recover/Init").ok());
  EXPECT_TRUE(gate.Admit("/job.Job/Register").ok());
  absl::Status refused = gate.Admit("/Recover/Register");
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(refused.message(), "qps exceeded, method=/Recover/Register");
}

TEST(UnaryGate, HealthCheckHasABucketOfItsOwn) {
  ManualClock clock;
  UnaryGate gate(clock, {.health_rate = 1, .health_burst = 1, .shared_rate = 1, .shared_burst = 1});
  EXPECT_TRUE(gate.Admit("/Recover/Init").ok());
  EXPECT_FALSE(gate.Admit("/Recover/Init").ok());
  EXPECT_TRUE(gate.Admit(kHealthCheckMethod).ok());
  EXPECT_FALSE(gate.Admit(kHealthCheckMethod).ok());
}

TEST(UnaryGate, TokensComeBackWithTime) {
  ManualClock clock;
  UnaryGate gate(clock, {.health_rate = 1, .health_burst = 1, .shared_rate = 1000, .shared_burst = 1000});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(gate.Admit("/PubFault/SendPublicFault").ok());
  EXPECT_FALSE(gate.Admit("/PubFault/SendPublicFault").ok());
  clock.Advance(absl::Milliseconds(10));
  int admitted = 0;
  while (gate.Admit("/PubFault/SendPublicFault").ok()) ++admitted;
  EXPECT_EQ(admitted, 10);
}

TEST(UnaryGate, DefaultLimitsAreThoseOfTheOriginal) {
  UnaryGate::Limits limits;
  EXPECT_EQ(limits.health_rate, 10000);
  EXPECT_EQ(limits.health_burst, 10000);
  EXPECT_EQ(limits.shared_rate, 1000);
  EXPECT_EQ(limits.shared_burst, 1000);
}

}  // namespace
}  // namespace clusterd::server
