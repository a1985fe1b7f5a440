#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace clusterd::store {

// A claim on a dir store by one program for the life of the process: flock(2) on a lock file of
// that program's own (clusterd: PATH/.clusterd.lock, DirStore::kClusterdLockFile), apart from
// the writers' PATH/.lock. It excludes only other instances of that program, never the agents,
// the simulator or the tools that share the directory with it (docs/store-layout.md).
//
// The kernel drops the lock when the process ends, however it ends, so a crash leaves no stale
// claim. The holder writes its pid into the file for the message of the instance it refuses;
// the pid is meaningful only while the file is locked.
class InstanceLock {
 public:
  enum class Mode {
    kExclusive,  // the only instance on the store
    kShared,     // one of several cooperating instances (leader election decides among them)
  };

  // Never waits. Creates the file if missing. FailedPrecondition naming the holder's pid when an
  // instance in a conflicting mode holds the lock (an exclusive holder conflicts with every
  // other; shared holders only with an exclusive one).
  static absl::StatusOr<std::unique_ptr<InstanceLock>> Acquire(std::string path, Mode mode);
  ~InstanceLock();  // releases
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  const std::string& path() const { return path_; }

  // The pid the last holder of the lock file at `fd` wrote, if any.
  static std::optional<pid_t> RecordedPid(int fd);

 private:
  InstanceLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_;
};

}  // namespace clusterd::store
