#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "absl/functional/function_ref.h"

namespace clusterd {

// Runs fn(0) .. fn(n - 1), on up to the machine's cores (at most max_threads, the calling
// thread among them) when there are at least `min_per_thread` items per thread; otherwise on
// the calling thread alone. Threads take batches from a shared cursor, so one slow item does
// not leave the others idle. Returns when every call has returned. For start-up work that is
// a set of independent items (files to parse, ConfigMaps to decode): fn must touch only its
// own item's state. Helper threads are named `thread_name`.
void ParallelFor(size_t n, size_t min_per_thread, const std::string& thread_name,
                 absl::FunctionRef<void(size_t)> fn, size_t max_threads = 8);

// How a pure core is handed ParallelFor: runs fn(0) .. fn(n - 1), each item independent. The
// assembly (ClusterBrain) passes one over ParallelFor; a core left without one runs the items
// in turn on the calling thread, so it starts no thread of its own.
using ParallelRunner = std::function<void(size_t n, const std::function<void(size_t)>& fn)>;

}  // namespace clusterd
