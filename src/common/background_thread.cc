#include "common/background_thread.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <mutex>

#include "common/log.h"

namespace clusterd {

bool MarkCurrentThreadBackground() {
  // Lowering the policy needs no privilege; SCHED_BATCH takes priority 0. A sandbox may still
  // refuse the call (a seccomp profile without sched_setscheduler): said once, not per thread.
  sched_param param{};
  param.sched_priority = 0;
  const int error = pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
  if (error == 0) return true;
  static std::once_flag said;
  std::call_once(said, [error] {
    LogInfo("threads", "background threads run as ordinary ones: SCHED_BATCH refused",
            {{"error", std::strerror(error)}});
  });
  return false;
}

bool CurrentThreadIsBackground() {
  int policy = 0;
  sched_param param{};
  return pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_BATCH;
}

}  // namespace clusterd
