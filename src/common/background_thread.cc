#include "common/background_thread.h"

#include <pthread.h>
#include <sched.h>

namespace clusterd {

bool MarkCurrentThreadBackground() {
  // Lowering the policy needs no privilege; SCHED_BATCH takes priority 0.
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_BATCH, &param) == 0;
}

bool CurrentThreadIsBackground() {
  int policy = 0;
  sched_param param{};
  return pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_BATCH;
}

}  // namespace clusterd
