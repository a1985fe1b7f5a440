#include "common/rate_limiter.h"

#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace rate_limiter_test {

TEST(TokenBucket, StartsFullAndABurstDrainsIt) {
  ManualClock clock;
  TokenBucket bucket(10, 5, clock);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(bucket.TryAcquire()) << i;
  EXPECT_FALSE(bucket.TryAcquire());
}

TEST(TokenBucket, RefillsWithTime) {
  ManualClock clock;
  TokenBucket bucket(10, 5, clock);
  ASSERT_TRUE(bucket.TryAcquire(5));
  clock.Advance(absl::Milliseconds(99));
  EXPECT_FALSE(bucket.TryAcquire());
  clock.Advance(absl::Milliseconds(1));
  EXPECT_TRUE(bucket.TryAcquire());
  EXPECT_FALSE(bucket.TryAcquire());
  clock.Advance(absl::Milliseconds(300));
  EXPECT_TRUE(bucket.TryAcquire(3));
  EXPECT_FALSE(bucket.TryAcquire());
}

TEST(TokenBucket, NeverHoldsMoreThanTheBurst) {
  ManualClock clock;
  TokenBucket bucket(10, 5, clock);
  clock.Advance(absl::Hours(1));
  EXPECT_DOUBLE_EQ(bucket.Available(), 5);
  EXPECT_FALSE(bucket.TryAcquire(6));
  EXPECT_TRUE(bucket.TryAcquire(5));
  EXPECT_FALSE(bucket.TryAcquire());
}

TEST(TokenBucket, FractionalRefillAccumulates) {
  ManualClock clock;
  TokenBucket bucket(2, 1, clock);
  ASSERT_TRUE(bucket.TryAcquire());
  clock.Advance(absl::Milliseconds(250));
  EXPECT_DOUBLE_EQ(bucket.Available(), 0.5);
  EXPECT_FALSE(bucket.TryAcquire());
  EXPECT_EQ(bucket.TimeUntilAvailable(), absl::Milliseconds(250));
  clock.Advance(absl::Milliseconds(250));
  EXPECT_TRUE(bucket.TryAcquire());
}

TEST(TokenBucket, FailedMultiTokenAcquireTakesNothing) {
  ManualClock clock;
  TokenBucket bucket(1, 5, clock);
  ASSERT_TRUE(bucket.TryAcquire(3));
  EXPECT_FALSE(bucket.TryAcquire(3));
  EXPECT_TRUE(bucket.TryAcquire(2));
}

TEST(TokenBucket, WaitingTimeUntilAvailableIsAlwaysEnough) {
  ManualClock clock;
  TokenBucket bucket(3, 1, clock);  // 1/3 s per token: not exact in binary
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(bucket.TryAcquire()) << i;
    const absl::Duration wait = bucket.TimeUntilAvailable();
    ASSERT_GT(wait, absl::ZeroDuration());
    clock.Advance(wait);
  }
}

TEST(TokenBucket, TimeUntilAvailableIsZeroWhenTokensAreThere) {
  ManualClock clock;
  TokenBucket bucket(1, 2, clock);
  EXPECT_EQ(bucket.TimeUntilAvailable(2), absl::ZeroDuration());
  EXPECT_EQ(bucket.TimeUntilAvailable(0), absl::ZeroDuration());
}

TEST(TokenBucket, MoreThanTheBurstIsNeverAvailable) {
  ManualClock clock;
  TokenBucket bucket(100, 2, clock);
  EXPECT_EQ(bucket.TimeUntilAvailable(3), absl::InfiniteDuration());
  clock.Advance(absl::Hours(1));
  EXPECT_FALSE(bucket.TryAcquire(3));
}

TEST(TokenBucket, ReserveTakesAFreeTokenAtOnce) {
  ManualClock clock;
  TokenBucket bucket(10, 2, clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_FALSE(bucket.TryAcquire());
}

TEST(TokenBucket, ReservesOnCreditGiveEachCallerItsOwnLaterTurn) {
  ManualClock clock;
  TokenBucket bucket(10, 1, clock);
  ASSERT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(100));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(200));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(300));
  // The reserved tokens are owed: nobody else gets one until they are paid for.
  clock.Advance(absl::Milliseconds(300));
  EXPECT_FALSE(bucket.TryAcquire());
  EXPECT_EQ(bucket.TimeUntilAvailable(), absl::Milliseconds(100));
  clock.Advance(absl::Milliseconds(100));
  EXPECT_TRUE(bucket.TryAcquire());
}

TEST(TokenBucket, ABucketThatCannotGrantReservesNothing) {
  ManualClock clock;
  TokenBucket no_burst(10, 0, clock);
  EXPECT_EQ(no_burst.Reserve(), absl::InfiniteDuration());
  TokenBucket no_rate(0, 1, clock);
  ASSERT_EQ(no_rate.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(no_rate.Reserve(), absl::InfiniteDuration());
  EXPECT_DOUBLE_EQ(no_rate.Available(), 0.0);
}

TEST(TokenBucket, ZeroRateNeverRefills) {
  ManualClock clock;
  TokenBucket bucket(0, 1, clock);
  ASSERT_TRUE(bucket.TryAcquire());
  clock.Advance(absl::Hours(24));
  EXPECT_FALSE(bucket.TryAcquire());
  EXPECT_EQ(bucket.TimeUntilAvailable(), absl::InfiniteDuration());
}

TEST(TokenBucket, ClockSteppingBackDoesNotMintTokens) {
  ManualClock clock;
  TokenBucket bucket(1, 1, clock);
  const absl::Time start = clock.Now();
  ASSERT_TRUE(bucket.TryAcquire());
  clock.Set(start - absl::Hours(1));
  EXPECT_FALSE(bucket.TryAcquire());
  clock.Set(start);
  EXPECT_FALSE(bucket.TryAcquire());
  clock.Set(start + absl::Seconds(1));
  EXPECT_TRUE(bucket.TryAcquire());
}

TEST(TokenBucket, ConcurrentCallersShareExactlyTheBurst) {
  ManualClock clock;  // frozen: no refill while the threads run
  TokenBucket bucket(1000, 100, clock);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        if (bucket.TryAcquire()) granted.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(granted.load(), 100);
}

}  // namespace rate_limiter_test
}  // namespace clusterd
