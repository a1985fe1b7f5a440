#pragma once

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace clusterd {

// Tells when a file changed (inode, size or mtime), looking at most once per `period` of the
// clock, so that a check on every call costs a clock read. Used to reload the token file and
// the policy and the HTTP TLS files without a restart (a ConfigMap or Secret volume replaces
// files by rename).
class FileChange {
 public:
  // `removal_is_a_change`: the file going away (after it was seen) also counts as a change, for
  // a reader that falls back to defaults; otherwise a gone file keeps what was read.
  FileChange(std::string path, const Clock& clock, absl::Duration period = absl::Seconds(1),
             bool removal_is_a_change = false)
      : path_(std::move(path)), clock_(clock), period_(period), removal_(removal_is_a_change) {}

  // True when the file differs from the last time this returned true (or the first time).
  bool Changed();

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const Clock& clock_;
  const absl::Duration period_;
  const bool removal_;
  absl::Mutex mu_;
  absl::Time next_look_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool seen_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t inode_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t size_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t mtime_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

// The whole regular file, or an error naming it: NotFound, PermissionDenied, FailedPrecondition
// (not a regular file: a directory, a FIFO), ResourceExhausted (over max_bytes), Unavailable.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes = 64 << 20);

}  // namespace clusterd
