#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace clusterd {

// Token bucket: holds at most `burst` tokens, starts full and refills continuously at
// `rate_per_second` by the injected clock, so tests drive it with a ManualClock. Thread-safe.
class TokenBucket {
 public:
  // A rate <= 0 never refills; a burst <= 0 never grants anything.
  TokenBucket(double rate_per_second, int64_t burst, Clock& clock);

  TokenBucket(const TokenBucket&) = delete;
  TokenBucket& operator=(const TokenBucket&) = delete;

  // Takes `n` tokens if all of them are available now; otherwise takes none. n <= 0 succeeds.
  bool TryAcquire(int64_t n = 1);

  // How long until TryAcquire(n) would succeed if nobody else takes tokens meanwhile: zero
  // when it would succeed now, InfiniteDuration when it never can (n > burst or no refill).
  absl::Duration TimeUntilAvailable(int64_t n = 1);
  // Takes one token, now or on credit, and says how long until it is paid for: zero when one
  // was there. On credit the bucket goes below zero, so the next caller is told a later time:
  // each of N waiters gets its own turn, instead of all N retrying at every refill and one of
  // them winning (N wake-ups per token). InfiniteDuration, and nothing taken, when the bucket
  // cannot grant (burst <= 0, or empty with no refill).
  absl::Duration Reserve();

  // Tokens available now (fractional; below zero while reserved tokens are unpaid); for
  // metrics and tests.
  double Available();

 private:
  void RefillLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double rate_per_second_;
  const int64_t burst_;
  Clock& clock_;

  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_refill_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd
