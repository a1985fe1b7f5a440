#pragma once

// The process logger's set-up, and the run log on disk: spdlog's size-based rotation, plus removal
// of backups older than an age (the original's -maxAge), which spdlog does not have.
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/log.h"
#include "spdlog/sinks/sink.h"

namespace clusterd {

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warn (warning), error, critical, off
  LogFormat format = LogFormat::kText;
  // "" = stderr. Otherwise the run log: PATH is written until it holds max_file_bytes, then
  // renamed PATH-stem.1.ext (the older backups shift up), keeping max_backups of them; backups
  // older than max_age_days are removed (0 = kept whatever their age).
  std::string file;
  size_t max_file_bytes = 20 << 20;
  size_t max_backups = 30;
  int max_age_days = 7;
};

// Configures the process logger (ConfigureLogging of log.h is this with stderr). The error
// names the level or the file that is wrong.
absl::Status ConfigureLogging(const LogOptions& options);

// Opens (creates or appends to) `path`. The error names the file and the reason (a missing
// directory, no permission). max_age_days 0: backups are kept whatever their age.
absl::StatusOr<std::shared_ptr<spdlog::sinks::sink>> OpenRotatingLogFile(const std::string& path,
                                                                         size_t max_file_bytes,
                                                                         size_t max_backups,
                                                                         int max_age_days);

// Removes the backups of `path` (spdlog's names: dir/stem.N.ext, N = 1..max_backups) whose last
// change is older than `max_age_seconds` before `now_unix_seconds`. Returns how many it removed.
size_t RemoveAgedLogBackups(const std::string& path, size_t max_backups, int64_t max_age_seconds,
                            int64_t now_unix_seconds);

}  // namespace clusterd
