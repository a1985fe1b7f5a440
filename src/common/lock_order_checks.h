#pragma once

// Debian's Abseil is built with mutex deadlock detection on: every acquisition made while
// another lock is held updates a process-wide lock-order graph. It showed up in profiles of
// clusterd at 1,000 jobs, and of the scale harness (a mutex per stream) at 20,000. Lock order is
// what the sanitizer builds, clang's thread-safety analysis and the tests check; the programs
// (daemons, simulator, harnesses) do not pay for it at run time. Call first thing in main.
#include "absl/synchronization/mutex.h"

namespace clusterd {

inline void SkipRuntimeLockOrderChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace clusterd
