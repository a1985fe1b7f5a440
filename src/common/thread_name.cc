#include "common/thread_name.h"

#include <pthread.h>

#include <string>

namespace clusterd {
namespace {

// The kernel's TASK_COMM_LEN is 16 bytes including the terminating NUL.
constexpr size_t kMaxThreadNameBytes = 15;

}  // namespace

void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, kMaxThreadNameBytes));
  // Failure only means the name is not shown; the thread works the same.
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace clusterd
