#include "store/dir/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "store/strings.h"

namespace clusterd::store {
namespace {

// flock without waiting; true if taken, false if another holds a conflicting lock. EINTR is
// retried; other errors are returned in `error`.
bool TryLock(int fd, int operation, int* error) {
  for (;;) {
    if (flock(fd, operation | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    *error = errno == EWOULDBLOCK ? 0 : errno;
    return false;
  }
}

}  // namespace

std::optional<pid_t> InstanceLock::RecordedPid(int fd) {
  char buf[32];
  ssize_t n;
  do {
    n = pread(fd, buf, sizeof(buf) - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return std::nullopt;
  // The first line: shared holders write concurrently, each "<pid>\n" from offset 0, so the
  // first line is always one holder's whole pid (see Acquire).
  int64_t pid = 0;
  ssize_t i = 0;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) {
    pid = pid * 10 + (buf[i] - '0');
    if (pid > (int64_t{1} << 31)) return std::nullopt;
  }
  if (i == 0 || (i < n && buf[i] != '\n') || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

absl::StatusOr<std::unique_ptr<InstanceLock>> InstanceLock::Acquire(std::string path, Mode mode) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, Cat(path, ": cannot open lock file"));
  int error = 0;
  if (!TryLock(fd, mode == Mode::kExclusive ? LOCK_EX : LOCK_SH, &error)) {
    if (error != 0) {
      close(fd);
      return absl::ErrnoToStatus(error, Cat(path, ": cannot lock"));
    }
    // Held. By instances sharing it, or by one alone? (A shared lock is granted unless an
    // exclusive one is held.)
    bool shared_holders = false;
    if (mode == Mode::kExclusive && TryLock(fd, LOCK_SH, &error)) {
      shared_holders = true;
      flock(fd, LOCK_UN);
    }
    std::optional<pid_t> pid = RecordedPid(fd);
    close(fd);
    std::string holder = pid.has_value() ? Cat("pid ", *pid) : std::string("a process");
    return absl::FailedPreconditionError(
        Cat(path, " is held by ", holder,
            shared_holders ? " (shared with other instances)" : " (exclusively)"));
  }
  // "<pid>\n" at offset 0, then the length: with holders writing concurrently (shared mode)
  // the first line is the last writer's whole pid, whatever the interleaving.
  std::string text = Cat(getpid(), "\n");
  ssize_t n;
  do {
    n = pwrite(fd, text.data(), text.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(text.size()) ||
      ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
    // The lock holds without it; only a refused instance's message is less helpful.
    LogWarn("store", "cannot record the pid in the lock file",
            {{"path", path}, {"error", std::strerror(n < 0 ? errno : EIO)}});
  }
  return std::unique_ptr<InstanceLock>(new InstanceLock(std::move(path), fd));
}

InstanceLock::~InstanceLock() { close(fd_); }

}  // namespace clusterd::store
