#include "common/file_change.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace clusterd {

bool FileChange::Changed() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  if (seen_ && now < next_look_) return false;
  next_look_ = now + period_;
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    if (!removal_ || !seen_) return false;  // gone: keep what we have
    seen_ = false;                          // seen again when it comes back
    return true;
  }
  const int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (seen_ && st.st_ino == inode_ && st.st_size == size_ && mtime_ns == mtime_ns_) return false;
  seen_ = true;
  inode_ = st.st_ino;
  size_ = st.st_size;
  mtime_ns_ = mtime_ns;
  return true;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  auto failure = [&path](int error) -> absl::Status {
    std::string message = absl::StrCat("cannot read ", path, ": ", std::strerror(error));
    if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
    if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
    return absl::UnavailableError(message);
  };
  // O_NONBLOCK: a FIFO in its place must not hang the reader; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return failure(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return failure(error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot read ", path, ": not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return absl::ResourceExhaustedError(absl::StrCat("cannot read ", path, ": ", st.st_size,
                                                     " bytes, more than the ", max_bytes, " allowed"));
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return failure(error);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot read ", path, ": more than the ", max_bytes, " bytes allowed"));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace clusterd
