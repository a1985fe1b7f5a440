#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace clusterd {

// A child process started with posix_spawn. Used by the simulator and integration tests to run
// the real binaries. The destructor kills a child that is still running.
class Subprocess {
 public:
  struct Options {
    std::vector<std::string> argv;   // argv[0] is the program path
    std::string stdout_path;         // empty: inherit
    std::string stderr_path;         // empty: inherit
  };
  static absl::StatusOr<Subprocess> Start(const Options& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  bool Running();
  void Signal(int signal_number);
  // Waits up to `timeout` for the child to exit; its exit code (128+N when killed by signal N),
  // or DeadlineExceeded.
  absl::StatusOr<int> Wait(absl::Duration timeout);

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// Directory of the running executable (from /proc/self/exe).
std::string ExecutableDir();

}  // namespace clusterd
