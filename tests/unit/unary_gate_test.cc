#include "server/unary_gate.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace clusterd::server {
namespace unary_gate_test {

constexpr absl::string_view kPeerA = "ipv4:10.0.0.1:40001";
constexpr absl::string_view kPeerB = "ipv4:10.0.0.2:40002";

TEST(UnaryGate, SharedBucketRefusesPastTheBurstWithTheOriginalErrorText) {
  ManualClock clock;
  UnaryGate gate(clock, {.health_rate = 10,
                         .health_burst = 10,
                         .shared_rate = 2,
                         .shared_burst = 2,
                         .caller_share = 1});
  EXPECT_TRUE(gate.Admit("/Recover/Init", kPeerA).ok());
  EXPECT_TRUE(gate.Admit("/job.Job/Register", kPeerB).ok());
  absl::Status refused = gate.Admit("/Recover/Register", kPeerA);
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(refused.message(), "qps exceeded, method=/Recover/Register");
}

TEST(UnaryGate, HealthCheckHasABucketOfItsOwn) {
  ManualClock clock;
  UnaryGate gate(clock, {.health_rate = 1,
                         .health_burst = 1,
                         .shared_rate = 1,
                         .shared_burst = 1,
                         .caller_share = 1});
  EXPECT_TRUE(gate.Admit("/Recover/Init", kPeerA).ok());
  EXPECT_FALSE(gate.Admit("/Recover/Init", kPeerA).ok());
  EXPECT_TRUE(gate.Admit(kHealthCheckMethod, kPeerA).ok());
  EXPECT_FALSE(gate.Admit(kHealthCheckMethod, kPeerA).ok());
}

TEST(UnaryGate, TokensComeBackWithTime) {
  ManualClock clock;
  UnaryGate gate(clock, {.health_rate = 1,
                         .health_burst = 1,
                         .shared_rate = 1000,
                         .shared_burst = 1000,
                         .caller_share = 1});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(gate.Admit("/PubFault/SendPublicFault", kPeerA).ok());
  EXPECT_FALSE(gate.Admit("/PubFault/SendPublicFault", kPeerA).ok());
  clock.Advance(absl::Milliseconds(10));
  int admitted = 0;
  while (gate.Admit("/PubFault/SendPublicFault", kPeerA).ok()) ++admitted;
  EXPECT_EQ(admitted, 10);
}

TEST(UnaryGate, DefaultLimitsAreThoseOfTheOriginal) {
  UnaryGate::Limits limits;
  EXPECT_EQ(limits.health_rate, 10000);
  EXPECT_EQ(limits.health_burst, 10000);
  EXPECT_EQ(limits.shared_rate, 1000);
  EXPECT_EQ(limits.shared_burst, 1000);
  EXPECT_EQ(limits.caller_share, 0.5);
}

// Issue 17: 10,000 SendPublicFault in one second from one caller refused 23 of another job's
// 49 Init calls. With the default limits, the flooder gets its half and every Init passes.
TEST(UnaryGate, AFloodFromOneCallerDoesNotRefuseAnotherCallersInit) {
  ManualClock clock;
  UnaryGate gate(clock);
  int flood_admitted = 0;
  int init_admitted = 0;
  int init_calls = 0;
  // 10,000 calls spread over one second (one per 100 us), an Init every 20 ms between them.
  for (int i = 0; i < 10000; ++i) {
    if (gate.Admit("/PubFault/SendPublicFault", kPeerA).ok()) ++flood_admitted;
    if (i % 200 == 0) {
      ++init_calls;
      if (gate.Admit("/Recover/Init", kPeerB).ok()) ++init_admitted;
    }
    clock.Advance(absl::Microseconds(100));
  }
  EXPECT_EQ(init_calls, 50);
  EXPECT_EQ(init_admitted, init_calls);
  // The flooder's own bucket (a burst of 500, then 500/s) and what it borrowed above the
  // reserve: close to the original's 1000/s, never all of it.
  EXPECT_GE(flood_admitted, 1000);
  EXPECT_LE(flood_admitted, 2000 - 250);
}

TEST(UnaryGate, ACallersRefusalsDoNotDrainTheSharedBucket) {
  ManualClock clock;
  UnaryGate gate(
      clock, {.shared_rate = 10, .shared_burst = 10, .caller_share = 0.5, .reserve_share = 0.5});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(gate.Admit("/Recover/Init", kPeerA).ok());
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(gate.Admit("/Recover/Init", kPeerA).ok());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(gate.Admit("/Recover/Init", kPeerB).ok());
  // Both callers used their halves: the shared bucket is empty for a third one too.
  EXPECT_FALSE(gate.Admit("/Recover/Init", "ipv4:10.0.0.3:1").ok());
}

TEST(UnaryGate, ConnectionsFromOneAddressAreOneCaller) {
  ManualClock clock;
  UnaryGate gate(clock,
                 {.shared_rate = 4, .shared_burst = 4, .caller_share = 0.5, .reserve_share = 0.5});
  EXPECT_TRUE(gate.Admit("/Recover/Init", "ipv4:10.0.0.1:1111").ok());
  EXPECT_TRUE(gate.Admit("/Recover/Init", "ipv4:10.0.0.1:2222").ok());
  absl::Status refused = gate.Admit("/Recover/Init", "ipv4:10.0.0.1:3333");
  EXPECT_EQ(refused.message(), "qps exceeded, method=/Recover/Init");
  EXPECT_TRUE(gate.Admit("/Recover/Init", "ipv6:[fd00::1]:1111").ok());
}

// Alone, a caller keeps the original's rate: a burst of 750 (its 500 and what it may borrow
// above the reserve of 250), then about 1000/s.
TEST(UnaryGate, ALoneCallerKeepsTheOriginalRate) {
  ManualClock clock;
  UnaryGate gate(clock);
  int admitted = 0;
  for (int i = 0; i < 1000; ++i) admitted += gate.Admit("/Recover/Init", kPeerA).ok() ? 1 : 0;
  EXPECT_EQ(admitted, 750);
  EXPECT_FALSE(gate.Admit("/Recover/Init", kPeerA).ok());
  // Over the next second, one call per millisecond: the caller's own 500/s plus what it may
  // borrow above the reserve.
  admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    clock.Advance(absl::Milliseconds(1));
    admitted += gate.Admit("/Recover/Init", kPeerA).ok() ? 1 : 0;
  }
  EXPECT_GE(admitted, 900);
}

// A flooder that borrowed the pool down to its reserve leaves the reserve to the others.
TEST(UnaryGate, BorrowingStopsAtTheReserve) {
  ManualClock clock;
  UnaryGate gate(
      clock, {.shared_rate = 10, .shared_burst = 10, .caller_share = 0.5, .reserve_share = 0.5});
  int admitted = 0;
  for (int i = 0; i < 100; ++i) admitted += gate.Admit("/Recover/Init", kPeerA).ok() ? 1 : 0;
  // 5 of its own; borrowing needs more than the reserve of 5 in the pool, which its own calls
  // already took it down to.
  EXPECT_EQ(admitted, 5);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(gate.Admit("/Recover/Init", kPeerB).ok()) << i;
}

TEST(CallerOfPeer, DropsThePort) {
  EXPECT_EQ(CallerOfPeer("ipv4:10.0.0.7:51234"), "10.0.0.7");
  EXPECT_EQ(CallerOfPeer("ipv6:[fd00::7]:51234"), "fd00::7");
  // Newer gRPC percent-encodes the brackets; the same client is the same bucket.
  EXPECT_EQ(CallerOfPeer("ipv6:%5B::1%5D:5"), "::1");
  EXPECT_EQ(CallerOfPeer("ipv6:[::ffff:10.0.0.7]:5"), "10.0.0.7");
  EXPECT_EQ(CallerOfPeer("unix:/run/clusterd.sock"), "unix:/run/clusterd.sock");
  EXPECT_EQ(CallerOfPeer(""), "");
}

TEST(CallerBuckets, TableStaysWithinItsBound) {
  ManualClock clock;
  CallerBuckets buckets(clock, {.rate_per_second = 1, .burst = 1, .max_callers = 8});
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(buckets.TryAcquire(absl::StrCat("10.0.1.", i)));
    EXPECT_LE(buckets.size(), 8u);
  }
  // All were busy (seen within the refill time), so the oldest were dropped.
  EXPECT_EQ(buckets.evicted_busy(), 92);
}

TEST(CallerBuckets, IdleCallersAreDroppedWithoutChangingAnswers) {
  ManualClock clock;
  CallerBuckets buckets(clock, {.rate_per_second = 10, .burst = 10, .max_callers = 4});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(buckets.TryAcquire(absl::StrCat("c", i)));
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(buckets.TryAcquire("c0"));
  EXPECT_FALSE(buckets.TryAcquire("c0"));
  // After the refill time (1 s) every entry is idle: a new caller takes a slot without
  // evicting a busy one, and the idle ones come back with full buckets, as they would have.
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(buckets.TryAcquire("c4"));
  EXPECT_EQ(buckets.evicted_busy(), 0);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(buckets.TryAcquire("c0"));
  EXPECT_FALSE(buckets.TryAcquire("c0"));
}

TEST(CallerBuckets, ABusyCallerKeepsItsEmptyBucket) {
  ManualClock clock;
  CallerBuckets buckets(clock, {.rate_per_second = 10, .burst = 2, .max_callers = 4});
  EXPECT_TRUE(buckets.TryAcquire("c0"));
  EXPECT_TRUE(buckets.TryAcquire("c0"));
  EXPECT_FALSE(buckets.TryAcquire("c0"));
  clock.Advance(absl::Milliseconds(100));
  EXPECT_TRUE(buckets.TryAcquire("c0"));
  EXPECT_FALSE(buckets.TryAcquire("c0"));
}

}  // namespace unary_gate_test
}  // namespace clusterd::server
