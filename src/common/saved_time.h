#pragma once

// Times in clusterd's saved state (the goodput ledger, fault episodes, repeat offenders): Unix
// milliseconds, with 0 for a time not known (absl::InfinitePast() in memory).
#include <cstdint>

#include "absl/time/time.h"

namespace clusterd {

inline int64_t SavedMillis(absl::Time t) {
  return t == absl::InfinitePast() ? 0 : absl::ToUnixMillis(t);
}

inline absl::Time FromSavedMillis(int64_t ms) {
  return ms == 0 ? absl::InfinitePast() : absl::FromUnixMillis(ms);
}

}  // namespace clusterd
