#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace clusterd::server {

// One token bucket per caller (client address), so that one caller cannot take more than its
// share of a bucket every caller shares (unary_gate.h). Memory is bounded: at most
// `max_callers` entries. An entry idle for as long as its bucket takes to refill from empty
// holds a full bucket, exactly what a new entry would hold, so it is dropped without changing
// any answer; when the table is full of busy callers, the one seen longest ago is dropped.
// Thread-safe.
class CallerBuckets {
 public:
  struct Options {
    double rate_per_second = 500;
    int64_t burst = 500;
    size_t max_callers = 4096;
  };
  CallerBuckets(Clock& clock, Options options);

  // Takes one token of `caller`'s bucket if it has one.
  bool TryAcquire(absl::string_view caller);

  // Callers tracked now; for metrics and tests.
  size_t size();
  // Entries dropped so far to keep the table within max_callers (not counting idle ones).
  int64_t evicted_busy();

 private:
  struct Entry {
    double tokens;
    absl::Time last;
  };
  void RefillLocked(Entry& e, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MakeRoomLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const Options options_;
  // Time an empty bucket takes to fill again: past it, an entry is the same as a fresh one.
  const absl::Duration refill_time_;

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> callers_ ABSL_GUARDED_BY(mu_);
  absl::Time last_sweep_ ABSL_GUARDED_BY(mu_);
  int64_t evicted_busy_ ABSL_GUARDED_BY(mu_) = 0;
};

// The caller key of a gRPC peer string: the address without the port ("ipv4:10.0.0.7:51234"
// -> "10.0.0.7", "ipv6:[fd00::7]:51234" -> "fd00::7"); anything else (unix sockets) as given.
std::string CallerOfPeer(absl::string_view peer);

}  // namespace clusterd::server
