#include "common/work_queue.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace work_queue_test {

class WorkQueueTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  MetricsRegistry metrics_;
  WorkQueue queue_{"test", clock_, metrics_};

  // Hands out the next key and finishes it, so the key carries no processing state.
  std::string GetAndDone() {
    absl::optional<std::string> key = queue_.Get();
    EXPECT_TRUE(key.has_value());
    if (!key) return "";
    queue_.Done(*key);
    return *key;
  }

  // True if a key parked `delay` ago is due exactly now and not a nanosecond earlier.
  bool BecomesDueAfter(absl::Duration delay) {
    clock_.Advance(delay - absl::Nanoseconds(1));
    if (queue_.PromoteDue() != 0) return false;
    clock_.Advance(absl::Nanoseconds(1));
    return queue_.PromoteDue() == 1;
  }
};

TEST_F(WorkQueueTest, WaitingKeyIsHeldOnce) {
  queue_.Add("default/a");
  queue_.Add("default/b");
  queue_.Add("default/a");
  EXPECT_EQ(queue_.Len(), 2u);
  EXPECT_EQ(GetAndDone(), "default/a");
  EXPECT_EQ(GetAndDone(), "default/b");
  EXPECT_EQ(queue_.Len(), 0u);
}

TEST_F(WorkQueueTest, KeysComeOutInArrivalOrder) {
  for (const char* key : {"c", "a", "b"}) queue_.Add(key);
  EXPECT_EQ(GetAndDone(), "c");
  EXPECT_EQ(GetAndDone(), "a");
  EXPECT_EQ(GetAndDone(), "b");
}

TEST_F(WorkQueueTest, KeyReAddedWhileProcessingIsQueuedAgainOnlyAfterDone) {
  queue_.Add("a");
  ASSERT_EQ(queue_.Get(), "a");
  queue_.Add("a");
  queue_.Add("a");
  EXPECT_EQ(queue_.Len(), 0u);  // not available to another worker yet
  queue_.Done("a");
  EXPECT_EQ(queue_.Len(), 1u);
  EXPECT_EQ(GetAndDone(), "a");
  EXPECT_EQ(queue_.Len(), 0u);
}

TEST_F(WorkQueueTest, DoneWithoutReAddDoesNotRequeue) {
  queue_.Add("a");
  EXPECT_EQ(GetAndDone(), "a");
  EXPECT_EQ(queue_.Len(), 0u);
}

TEST_F(WorkQueueTest, DoneForUnknownKeyIsIgnored) {
  queue_.Done("never-added");
  EXPECT_EQ(queue_.Len(), 0u);
}

TEST_F(WorkQueueTest, SecondWorkerGetsAReAddedKeyOnlyWhenTheFirstIsDone) {
  queue_.Add("a");
  ASSERT_EQ(queue_.Get(), "a");  // this thread is the first worker
  queue_.Add("a");

  absl::optional<std::string> second;
  std::thread worker([&] { second = queue_.Get(); });
  queue_.AwaitBlockedGetsForTest(1);
  EXPECT_EQ(queue_.Len(), 0u);
  queue_.Done("a");
  worker.join();
  EXPECT_EQ(second, "a");
}

TEST_F(WorkQueueTest, BlockedGetReceivesALaterAdd) {
  absl::optional<std::string> got;
  std::thread worker([&] { got = queue_.Get(); });
  queue_.AwaitBlockedGetsForTest(1);
  queue_.Add("a");
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST_F(WorkQueueTest, ShutDownWakesEveryBlockedGet) {
  std::vector<absl::optional<std::string>> results(2, std::string("unset"));
  std::vector<std::thread> workers;
  for (auto& result : results) workers.emplace_back([&] { result = queue_.Get(); });
  queue_.AwaitBlockedGetsForTest(2);
  queue_.ShutDown();
  for (auto& worker : workers) worker.join();
  for (const auto& result : results) EXPECT_EQ(result, absl::nullopt);
  EXPECT_TRUE(queue_.ShuttingDown());
}

TEST_F(WorkQueueTest, AfterShutDownGetReturnsNulloptAndAddsAreIgnored) {
  queue_.Add("queued-before");
  queue_.ShutDown();
  EXPECT_EQ(queue_.Get(), absl::nullopt);
  queue_.Add("b");
  queue_.AddAfter("c", absl::Seconds(1));
  queue_.AddRateLimited("d");
  EXPECT_EQ(queue_.Len(), 1u);
  EXPECT_EQ(queue_.NumParked(), 0u);
}

TEST_F(WorkQueueTest, AddAfterWaitsForTheClock) {
  queue_.AddAfter("a", absl::Seconds(1));
  EXPECT_EQ(queue_.Len(), 0u);
  EXPECT_EQ(queue_.NumParked(), 1u);
  EXPECT_TRUE(BecomesDueAfter(absl::Seconds(1)));
  EXPECT_EQ(queue_.NumParked(), 0u);
  EXPECT_EQ(GetAndDone(), "a");
}

TEST_F(WorkQueueTest, AddAfterWithoutDelayAddsNow) {
  queue_.AddAfter("a", absl::ZeroDuration());
  queue_.AddAfter("b", absl::Seconds(-1));
  EXPECT_EQ(queue_.Len(), 2u);
  EXPECT_EQ(queue_.NumParked(), 0u);
}

TEST_F(WorkQueueTest, ParkedKeyKeepsTheEarlierDueTime) {
  queue_.AddAfter("a", absl::Seconds(10));
  queue_.AddAfter("a", absl::Seconds(2));
  queue_.AddAfter("a", absl::Seconds(5));
  EXPECT_EQ(queue_.NumParked(), 1u);
  EXPECT_TRUE(BecomesDueAfter(absl::Seconds(2)));
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(queue_.PromoteDue(), 0u);
  EXPECT_EQ(queue_.Len(), 1u);
}

TEST_F(WorkQueueTest, ParkedKeysArePromotedInDueOrder) {
  queue_.AddAfter("late", absl::Seconds(3));
  queue_.AddAfter("early", absl::Seconds(1));
  clock_.Advance(absl::Seconds(5));
  EXPECT_EQ(queue_.PromoteDue(), 2u);
  EXPECT_EQ(GetAndDone(), "early");
  EXPECT_EQ(GetAndDone(), "late");
}

TEST_F(WorkQueueTest, PromotedKeyAlreadyWaitingIsNotDuplicated) {
  queue_.AddAfter("a", absl::Seconds(1));
  queue_.Add("a");
  clock_.Advance(absl::Seconds(1));
  queue_.PromoteDue();
  EXPECT_EQ(queue_.Len(), 1u);
}

TEST_F(WorkQueueTest, GetPromotesDueKeysItself) {
  queue_.AddAfter("a", absl::Seconds(1));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(queue_.Get(), "a");
}

TEST_F(WorkQueueTest, BlockedGetWakesWhenAParkedKeyIsPromoted) {
  queue_.AddAfter("a", absl::Hours(1));
  absl::optional<std::string> got;
  std::thread worker([&] { got = queue_.Get(); });
  queue_.AwaitBlockedGetsForTest(1);
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(queue_.PromoteDue(), 1u);
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST_F(WorkQueueTest, RateLimitedBackOffDoublesFromFiveMilliseconds) {
  for (absl::Duration expected : {absl::Milliseconds(5), absl::Milliseconds(10),
                                  absl::Milliseconds(20), absl::Milliseconds(40)}) {
    queue_.AddRateLimited("a");
    EXPECT_TRUE(BecomesDueAfter(expected)) << expected;
    EXPECT_EQ(GetAndDone(), "a");
  }
  EXPECT_EQ(queue_.NumRequeues("a"), 4);
}

TEST_F(WorkQueueTest, RateLimitedBackOffIsCappedAtThirtySeconds) {
  for (int i = 0; i < 13; ++i) {  // 5 ms * 2^12 = 20.48 s, the last step below the cap
    queue_.AddRateLimited("a");
    clock_.Advance(absl::Seconds(30));
    ASSERT_EQ(GetAndDone(), "a");
  }
  for (int i = 0; i < 100; ++i) {
    queue_.AddRateLimited("a");
    ASSERT_TRUE(BecomesDueAfter(absl::Seconds(30))) << "attempt " << 13 + i;
    ASSERT_EQ(GetAndDone(), "a");
  }
}

TEST_F(WorkQueueTest, ForgetResetsTheBackOff) {
  queue_.AddRateLimited("a");
  queue_.AddRateLimited("b");
  clock_.Advance(absl::Milliseconds(5));
  queue_.PromoteDue();
  GetAndDone();
  GetAndDone();
  queue_.Forget("a");
  EXPECT_EQ(queue_.NumRequeues("a"), 0);
  EXPECT_EQ(queue_.NumRequeues("b"), 1);
  queue_.AddRateLimited("a");
  EXPECT_TRUE(BecomesDueAfter(absl::Milliseconds(5)));
}

TEST_F(WorkQueueTest, BackOffIsConfigurable) {
  WorkQueue queue("custom", clock_, metrics_,
                  {.base_retry_delay = absl::Seconds(1), .max_retry_delay = absl::Seconds(3)});
  queue.AddRateLimited("a");
  queue.AddRateLimited("a");  // still parked: keeps the 1 s due time
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(queue.PromoteDue(), 1u);
  ASSERT_EQ(queue.Get(), "a");
  queue.Done("a");
  queue.AddRateLimited("a");  // third failure: 4 s, capped at 3 s
  clock_.Advance(absl::Seconds(3));
  EXPECT_EQ(queue.PromoteDue(), 1u);
}

TEST_F(WorkQueueTest, ExportsDepthAddsAndRetriesWithTheQueueName) {
  const MetricLabels labels = {{"name", "test"}};
  queue_.Add("a");
  queue_.Add("a");
  queue_.Add("b");
  EXPECT_EQ(metrics_.GetCounter("clusterd_workqueue_adds_total", "", labels).Value(), 2u);
  EXPECT_EQ(metrics_.GetGauge("clusterd_workqueue_depth", "", labels).Value(), 2);
  ASSERT_EQ(queue_.Get(), "a");
  EXPECT_EQ(metrics_.GetGauge("clusterd_workqueue_depth", "", labels).Value(), 1);
  queue_.AddRateLimited("c");
  EXPECT_EQ(metrics_.GetCounter("clusterd_workqueue_retries_total", "", labels).Value(), 1u);
  EXPECT_NE(metrics_.RenderPrometheus().find("clusterd_workqueue_depth{name=\"test\"} 1\n"),
            std::string::npos);
}

TEST_F(WorkQueueTest, ConcurrentWorkersNeverShareAKey) {
  constexpr int kWorkers = 4;
  constexpr int kKeys = 8;
  constexpr int kAdds = 2000;
  absl::Mutex mu;
  absl::flat_hash_set<std::string> in_flight;
  int overlaps = 0;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (absl::optional<std::string> key = queue_.Get()) {
        {
          absl::MutexLock lock(&mu);
          if (!in_flight.insert(*key).second) ++overlaps;
        }
        {
          absl::MutexLock lock(&mu);
          in_flight.erase(*key);
        }
        queue_.Done(*key);
      }
    });
  }
  for (int i = 0; i < kAdds; ++i) queue_.Add(absl::StrCat("key-", i % kKeys));
  queue_.ShutDown();
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(overlaps, 0);
}

}  // namespace work_queue_test
}  // namespace clusterd
