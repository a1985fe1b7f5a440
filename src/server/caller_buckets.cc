#include "server/caller_buckets.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "auth/peer_address.h"

namespace clusterd::server {

CallerBuckets::CallerBuckets(Clock& clock, Options options)
    : clock_(clock),
      options_(options),
      refill_time_(options.rate_per_second > 0
                       ? absl::Seconds(static_cast<double>(options.burst) / options.rate_per_second)
                       : absl::InfiniteDuration()),
      last_sweep_(clock.Now()) {}

void CallerBuckets::RefillLocked(Entry& e, absl::Time now) {
  if (now <= e.last) return;
  double elapsed = absl::ToDoubleSeconds(now - e.last);
  e.tokens = std::min(static_cast<double>(options_.burst),
                      e.tokens + elapsed * std::max(options_.rate_per_second, 0.0));
  e.last = now;
}

void CallerBuckets::MakeRoomLocked(absl::Time now) {
  // Idle entries first: they answer exactly as a fresh entry would.
  absl::erase_if(callers_, [&](const auto& kv) { return now - kv.second.last >= refill_time_; });
  if (callers_.size() < options_.max_callers) return;
  // Every entry is busy: drop the one seen longest ago (it gets a full bucket when it returns,
  // so a table full of busy callers is lenient rather than unbounded).
  auto oldest =
      std::min_element(callers_.begin(), callers_.end(),
                       [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
  callers_.erase(oldest);
  ++evicted_busy_;
}

bool CallerBuckets::TryAcquire(absl::string_view caller) {
  absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  // An occasional sweep keeps the table from holding callers that left long ago.
  if (now - last_sweep_ >= std::max(refill_time_, absl::Seconds(1)) && !callers_.empty()) {
    absl::erase_if(callers_, [&](const auto& kv) { return now - kv.second.last >= refill_time_; });
    last_sweep_ = now;
  }
  auto it = callers_.find(caller);
  if (it == callers_.end()) {
    if (options_.max_callers == 0) return false;
    if (callers_.size() >= options_.max_callers) MakeRoomLocked(now);
    it = callers_.emplace(std::string(caller), Entry{static_cast<double>(options_.burst), now})
             .first;
  }
  Entry& e = it->second;
  RefillLocked(e, now);
  e.last = now;
  if (e.tokens < 1) return false;
  e.tokens -= 1;
  return true;
}

size_t CallerBuckets::size() {
  absl::MutexLock lock(&mu_);
  return callers_.size();
}

int64_t CallerBuckets::evicted_busy() {
  absl::MutexLock lock(&mu_);
  return evicted_busy_;
}

std::string CallerOfPeer(absl::string_view peer) {
  // The same parse as authorisation's (percent-encoded brackets, IPv4-mapped addresses), so
  // that one client is one bucket however gRPC spells its address.
  absl::StatusOr<auth::PeerAddress> parsed = auth::ParsePeerAddress(peer);
  if (!parsed.ok() || parsed->ip.empty()) return std::string(peer);
  return parsed->ip;
}

}  // namespace clusterd::server
