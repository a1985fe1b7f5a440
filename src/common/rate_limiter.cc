#include "common/rate_limiter.h"

#include <algorithm>

namespace clusterd {
namespace {

// Refill arithmetic is in floating point, so rate x elapsed may land a hair below a whole
// token (e.g. 3 x 1/3 s at 1 token/s). Counting anything this close as whole keeps "advance
// by exactly TimeUntilAvailable, then acquire" reliable.
constexpr double kTokenEpsilon = 1e-9;

}  // namespace

TokenBucket::TokenBucket(double rate_per_second, int64_t burst, Clock& clock)
    : rate_per_second_(std::max(rate_per_second, 0.0)),
      burst_(std::max<int64_t>(burst, 0)),
      clock_(clock),
      tokens_(static_cast<double>(burst_)),
      last_refill_(clock.Now()) {}

void TokenBucket::RefillLocked() {
  const absl::Time now = clock_.Now();
  // A clock that steps backwards must not mint tokens later for time already credited.
  if (now <= last_refill_) return;
  const double elapsed = absl::ToDoubleSeconds(now - last_refill_);
  tokens_ = std::min(static_cast<double>(burst_), tokens_ + elapsed * rate_per_second_);
  last_refill_ = now;
}

bool TokenBucket::TryAcquire(int64_t n) {
  if (n <= 0) return true;
  absl::MutexLock lock(&mu_);
  if (n > burst_) return false;
  RefillLocked();
  const double want = static_cast<double>(n);
  if (tokens_ + kTokenEpsilon < want) return false;
  tokens_ = std::max(0.0, tokens_ - want);
  return true;
}

absl::Duration TokenBucket::TimeUntilAvailable(int64_t n) {
  if (n <= 0) return absl::ZeroDuration();
  absl::MutexLock lock(&mu_);
  if (n > burst_) return absl::InfiniteDuration();
  RefillLocked();
  const double missing = static_cast<double>(n) - tokens_;
  if (missing <= kTokenEpsilon) return absl::ZeroDuration();
  if (rate_per_second_ <= 0) return absl::InfiniteDuration();
  // Round up so that waiting exactly this long is always enough.
  return absl::Ceil(absl::Seconds(missing / rate_per_second_), absl::Nanoseconds(1));
}

absl::Duration TokenBucket::Reserve() {
  absl::MutexLock lock(&mu_);
  if (burst_ <= 0) return absl::InfiniteDuration();
  RefillLocked();
  if (tokens_ + kTokenEpsilon >= 1.0) {
    tokens_ = std::max(0.0, tokens_ - 1.0);
    return absl::ZeroDuration();
  }
  if (rate_per_second_ <= 0) return absl::InfiniteDuration();
  tokens_ -= 1.0;
  // Until the refill brings the bucket back to zero: this token's share of the debt.
  return absl::Ceil(absl::Seconds(-tokens_ / rate_per_second_), absl::Nanoseconds(1));
}

double TokenBucket::Available() {
  absl::MutexLock lock(&mu_);
  RefillLocked();
  return tokens_;
}

}  // namespace clusterd
