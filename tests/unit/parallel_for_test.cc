#include "common/parallel_for.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace parallel_for_test {

TEST(ParallelFor, EveryIndexRunsExactlyOnce) {
  constexpr size_t kItems = 10'007;  // not a multiple of the batch
  std::vector<std::atomic<int>> runs(kItems);
  ParallelFor(kItems, /*min_per_thread=*/16, "test-pool", [&](size_t i) { runs[i]++; });
  for (size_t i = 0; i < kItems; ++i) ASSERT_EQ(runs[i].load(), 1) << i;
}

TEST(ParallelFor, FewItemsRunOnTheCallingThread) {
  const std::thread::id caller = std::this_thread::get_id();
  absl::Mutex mu;
  std::set<std::thread::id> seen;
  ParallelFor(100, /*min_per_thread=*/1000, "test-pool", [&](size_t) {
    absl::MutexLock lock(&mu);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(seen, std::set<std::thread::id>{caller});
}

TEST(ParallelFor, ManyItemsUseMoreThreadsWhenTheMachineHasThem) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core";
  absl::Mutex mu;
  std::set<std::thread::id> seen;
  std::atomic<bool> release{false};
  // The first item waits until another thread has taken an item, so that a second thread is
  // seen however the scheduler runs them.
  ParallelFor(4096, /*min_per_thread=*/64, "test-pool", [&](size_t i) {
    {
      absl::MutexLock lock(&mu);
      seen.insert(std::this_thread::get_id());
      if (seen.size() > 1) release = true;
    }
    if (i == 0) {
      while (!release.load()) std::this_thread::yield();
    }
  });
  EXPECT_GE(seen.size(), 2u);
}

// Two long items with one item a thread run side by side (ClusterBrain starts two rooms so).
// Before, the first thread took both items as one batch of 64 and the helper found nothing.
TEST(ParallelFor, TwoItemsOfOneAThreadRunOnTwoThreads) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core";
  absl::Mutex mu;
  std::set<std::thread::id> seen;
  ParallelFor(2, /*min_per_thread=*/1, "test-pool", [&](size_t) {
    absl::MutexLock lock(&mu);
    seen.insert(std::this_thread::get_id());
    // Each item holds its thread until the other item has started on another.
    mu.AwaitWithTimeout(absl::Condition(
                            +[](std::set<std::thread::id>* s) { return s->size() == 2; }, &seen),
                        absl::Seconds(30));
  });
  EXPECT_EQ(seen.size(), 2u);
}

TEST(ParallelFor, NothingToDoCallsNothing) {
  int calls = 0;
  ParallelFor(0, 1, "test-pool", [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace parallel_for_test
}  // namespace clusterd
