// HandlerPool: tasks run on its own threads, a full queue refuses with RESOURCE_EXHAUSTED and
// counts it, and destroying the pool still runs every task already queued (each one finishes
// a call the gRPC server's shutdown waits for).
#include "server/handler_pool.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/metrics.h"
#include "gtest/gtest.h"

namespace clusterd::server {
namespace handler_pool_test {

TEST(HandlerPool, ATaskRunsOnAThreadOfThePool) {
  MetricsRegistry metrics;
  HandlerPool pool({.threads = 2, .max_queued = 10}, metrics);
  absl::Notification ran;
  std::thread::id where;
  ASSERT_TRUE(pool.Run([&] {
                    where = std::this_thread::get_id();
                    ran.Notify();
                  })
                  .ok());
  ran.WaitForNotification();
  EXPECT_NE(where, std::this_thread::get_id());
}

TEST(HandlerPool, AFullQueueRefusesAndCountsAndTheDestructorRunsWhatWasQueued) {
  MetricsRegistry metrics;
  std::atomic<int> ran{0};
  absl::Notification release;
  {
    HandlerPool pool({.threads = 1, .max_queued = 2}, metrics);
    absl::Notification started;
    ASSERT_TRUE(pool.Run([&] {
                      started.Notify();
                      release.WaitForNotification();
                      ran.fetch_add(1);
                    })
                    .ok());
    started.WaitForNotification();  // the only worker is busy: what follows waits in the queue
    ASSERT_TRUE(pool.Run([&] { ran.fetch_add(1); }).ok());
    ASSERT_TRUE(pool.Run([&] { ran.fetch_add(1); }).ok());
    EXPECT_EQ(pool.Queued(), 2u);
    absl::Status refused = pool.Run([&] { ran.fetch_add(100); });
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(metrics.RenderPrometheus().find("clusterd_grpc_handler_refused_total 1"),
              std::string::npos);
    release.Notify();
  }  // destroyed with tasks possibly still queued
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace handler_pool_test
}  // namespace clusterd::server
