#pragma once

// RFC 3339 in UTC with milliseconds ("2026-12-03T14:22:09.761Z"): the timestamps of clusterd's
// own HTTP views (recovery history, goodput timelines, offenders, the dashboard feed).
#include <string>

#include "absl/time/time.h"

namespace clusterd {

inline std::string Rfc3339Millis(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

}  // namespace clusterd
