#include "common/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "common/thread_name.h"

namespace clusterd {

void ParallelFor(size_t n, size_t min_per_thread, const std::string& thread_name,
                 absl::FunctionRef<void(size_t)> fn, size_t max_threads) {
  constexpr size_t kBatch = 64;
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads =
      std::min({cores, std::max<size_t>(max_threads, 1), n / std::max<size_t>(min_per_thread, 1)});
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Batches of up to kBatch items, at least four per thread: a few large items (two rooms
  // started side by side) are spread over the threads instead of one batch on the first.
  const size_t batch = std::clamp<size_t>(n / (threads * 4), 1, kBatch);
  std::atomic<size_t> cursor{0};
  auto work = [&] {
    for (;;) {
      const size_t begin = cursor.fetch_add(batch, std::memory_order_relaxed);
      if (begin >= n) return;
      const size_t end = std::min(begin + batch, n);
      for (size_t i = begin; i < end; ++i) fn(i);
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) {
    helpers.emplace_back([&] {
      SetCurrentThreadName(thread_name);
      work();
    });
  }
  work();
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace clusterd
