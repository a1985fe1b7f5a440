#include "runtime/controller.h"

#include <atomic>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/background_thread.h"
#include "gtest/gtest.h"

namespace clusterd::runtime {
namespace controller_test {

class ControllerTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  MetricsRegistry metrics_;
};

TEST_F(ControllerTest, AddsOfOneKeyWaitingAreReconciledOnce) {
  std::vector<std::string> seen;
  Controller controller(
      {.name = "t"}, clock_,
      [&](const std::string& key, int) {
        seen.push_back(key);
        return Result::Done();
      },
      metrics_);
  controller.Enqueue("a");
  controller.Enqueue("a");
  controller.Enqueue("b");
  EXPECT_EQ(controller.RunUntilIdleForTest(), 2u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 0u);
}

TEST_F(ControllerTest, RequeueAfterWakesTheKeyOnlyWhenTheClockReachesIt) {
  int calls = 0;
  Controller controller(
      {.name = "t"}, clock_,
      [&](const std::string&, int) {
        ++calls;
        return calls < 3 ? Result::RequeueAfter(absl::Seconds(10)) : Result::Done();
      },
      metrics_);
  controller.Enqueue("k");
  EXPECT_EQ(controller.RunUntilIdleForTest(), 1u);
  EXPECT_EQ(controller.Parked(), 1u);
  clock_.Advance(absl::Seconds(9));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 0u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 1u);
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 1u);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(controller.Parked(), 0u);
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 0u);
}

TEST_F(ControllerTest, AFailedReconcileIsRetriedWithGrowingBackOffAndSeesItsRetries) {
  std::vector<int> retries_seen;
  Controller controller(
      {.name = "t", .base_retry_delay = absl::Seconds(2), .max_retry_delay = absl::Seconds(16)},
      clock_,
      [&](const std::string&, int retries) {
        retries_seen.push_back(retries);
        if (retries < 3) return Result::Retry(absl::UnavailableError("down"));
        return Result::Done();
      },
      metrics_);
  controller.Enqueue("k");
  EXPECT_EQ(controller.RunUntilIdleForTest(), 1u);
  // Back-off 2 s, then 4 s, then 8 s.
  for (absl::Duration wait : {absl::Seconds(2), absl::Seconds(4), absl::Seconds(8)}) {
    clock_.Advance(wait - absl::Milliseconds(1));
    EXPECT_EQ(controller.RunUntilIdleForTest(), 0u);
    clock_.Advance(absl::Milliseconds(1));
    EXPECT_EQ(controller.RunUntilIdleForTest(), 1u);
  }
  EXPECT_EQ(retries_seen, (std::vector<int>{0, 1, 2, 3}));
  // Success reset the back-off: the next failure starts again at 0 retries.
  controller.Enqueue("k");
  controller.RunUntilIdleForTest();
  EXPECT_EQ(retries_seen.back(), 0);
}

TEST_F(ControllerTest, ASuccessAfterFailuresResetsTheBackOffBeforeItsRequeue) {
  int calls = 0;
  std::vector<int> retries_seen;
  Controller controller(
      {.name = "t", .base_retry_delay = absl::Seconds(1)}, clock_,
      [&](const std::string&, int retries) {
        retries_seen.push_back(retries);
        ++calls;
        if (calls == 1) return Result::Retry(absl::InternalError("x"));
        if (calls == 2) return Result::RequeueAfter(absl::Seconds(5));
        return Result::Retry(absl::InternalError("y"));
      },
      metrics_);
  controller.Enqueue("k");
  controller.RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(1));
  controller.RunUntilIdleForTest();
  clock_.Advance(absl::Seconds(5));
  controller.RunUntilIdleForTest();
  EXPECT_EQ(retries_seen, (std::vector<int>{0, 1, 0}));
}

TEST_F(ControllerTest, AKeyEnqueuedDuringItsReconcileIsReconciledAgain) {
  int calls = 0;
  Controller* self = nullptr;
  Controller controller(
      {.name = "t"}, clock_,
      [&](const std::string& key, int) {
        if (++calls == 1) self->Enqueue(key);
        return Result::Done();
      },
      metrics_);
  self = &controller;
  controller.Enqueue("k");
  EXPECT_EQ(controller.RunUntilIdleForTest(), 2u);
  EXPECT_EQ(calls, 2);
}

TEST_F(ControllerTest, AZeroRequeueComesBackAtOnceAfterTheKeysWaiting) {
  std::vector<std::string> seen;
  Controller controller(
      {.name = "t"}, clock_,
      [&](const std::string& key, int) {
        seen.push_back(key);
        if (key == "a" && seen.size() == 1) {
          return Result::RequeueAfter(absl::ZeroDuration());
        }
        return Result::Done();
      },
      metrics_);
  controller.Enqueue("a");
  controller.Enqueue("b");
  EXPECT_EQ(controller.RunUntilIdleForTest(), 3u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "a"}));
}

TEST_F(ControllerTest, EnqueueAfterKeepsTheEarlierTime) {
  int calls = 0;
  Controller controller(
      {.name = "t"}, clock_,
      [&](const std::string&, int) {
        ++calls;
        return Result::Done();
      },
      metrics_);
  controller.EnqueueAfter("k", absl::Seconds(5));
  controller.EnqueueAfter("k", absl::Seconds(2));
  controller.EnqueueAfter("k", absl::Seconds(9));
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 1u);
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(controller.RunUntilIdleForTest(), 0u);
  EXPECT_EQ(calls, 1);
}

TEST_F(ControllerTest, CountsReconcilesByResult) {
  int calls = 0;
  Controller controller(
      {.name = "counted"}, clock_,
      [&](const std::string&, int) {
        switch (calls++) {
          case 0:
            return Result::Retry(absl::InternalError("x"));
          case 1:
            return Result::RequeueAfter(absl::Seconds(1));
          default:
            return Result::Done();
        }
      },
      metrics_);
  controller.Enqueue("k");
  for (int i = 0; i < 3; ++i) {
    controller.RunUntilIdleForTest();
    clock_.Advance(absl::Seconds(1));
  }
  const std::string text = metrics_.RenderPrometheus();
  EXPECT_NE(
      text.find(R"(clusterd_controller_reconciles_total{controller="counted",result="error"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(clusterd_controller_reconciles_total{controller="counted",result="requeue"} 1)"),
      std::string::npos);
  EXPECT_NE(
      text.find(R"(clusterd_controller_reconciles_total{controller="counted",result="ok"} 1)"),
      std::string::npos);
  EXPECT_NE(text.find(R"(clusterd_controller_reconcile_seconds_count{controller="counted"} 3)"),
            std::string::npos);
}

TEST_F(ControllerTest, StartedWorkersReconcileByThemselvesAndStopJoinsThem) {
  RealClock real;
  std::atomic<int> calls{0};
  absl::Notification two;
  Controller controller(
      {.name = "threads", .workers = 2}, real,
      [&](const std::string&, int) {
        if (++calls == 2) two.Notify();
        return Result::Done();
      },
      metrics_);
  controller.Start();
  controller.Start();  // a second Start adds no workers
  EXPECT_TRUE(controller.started());
  controller.Enqueue("a");
  controller.Enqueue("b");
  two.WaitForNotification();
  controller.Stop();
  controller.Stop();
  controller.Enqueue("c");  // ignored after Stop
  EXPECT_EQ(controller.RunUntilIdleForTest(), 0u);
  EXPECT_EQ(calls.load(), 2);
}

// A background controller's workers run as background threads (SCHED_BATCH); others do not, and
// marking one thread leaves the others as they were.
TEST_F(ControllerTest, ABackgroundControllersWorkersRunAsBackgroundThreads) {
  RealClock real;
  for (const bool background : {true, false}) {
    std::atomic<int> seen{-1};
    absl::Notification done;
    Controller controller(
        {.name = "threads", .background = background}, real,
        [&](const std::string&, int) {
          seen = CurrentThreadIsBackground() ? 1 : 0;
          done.Notify();
          return Result::Done();
        },
        metrics_);
    controller.Start();
    controller.Enqueue("a");
    done.WaitForNotification();
    controller.Stop();
    EXPECT_EQ(seen.load(), background ? 1 : 0) << "background=" << background;
  }
  EXPECT_FALSE(CurrentThreadIsBackground()) << "the test's own thread is untouched";
}

TEST_F(ControllerTest, StartedWorkersWakeForARequeueOnTheRealClock) {
  RealClock real;
  std::atomic<int> calls{0};
  absl::Notification again;
  Controller controller(
      {.name = "timer"}, real,
      [&](const std::string&, int) {
        if (++calls == 1) return Result::RequeueAfter(absl::Milliseconds(20));
        again.Notify();
        return Result::Done();
      },
      metrics_);
  controller.Start();
  controller.Enqueue("k");
  again.WaitForNotification();
  EXPECT_EQ(calls.load(), 2);
}

// Two kinds of work named by a variant instead of a string prefix.
struct NodeKey {
  std::string node;
  bool operator==(const NodeKey&) const = default;
};
struct JobKey {
  int id = 0;
  bool operator==(const JobKey&) const = default;
};
using WorkKey = std::variant<NodeKey, JobKey>;

}  // namespace controller_test

template <>
struct KeyCodec<controller_test::WorkKey> {
  static std::string Encode(const controller_test::WorkKey& key) {
    if (const auto* node = std::get_if<controller_test::NodeKey>(&key)) return "n/" + node->node;
    return absl::StrCat("j/", std::get<controller_test::JobKey>(key).id);
  }
  static std::optional<controller_test::WorkKey> Decode(std::string_view text) {
    if (text.substr(0, 2) == "n/") return controller_test::NodeKey{std::string(text.substr(2))};
    int id = 0;
    if (text.substr(0, 2) == "j/" &&
        absl::SimpleAtoi(absl::string_view(text.data() + 2, text.size() - 2), &id)) {
      return controller_test::JobKey{id};
    }
    return std::nullopt;
  }
};

namespace controller_test {

TEST_F(ControllerTest, TypedKeysArriveAsTheyWereEnqueued) {
  std::vector<WorkKey> seen;
  TypedController<WorkKey> controller(
      {.name = "typed"}, clock_,
      [&](const WorkKey& key, int) {
        seen.push_back(key);
        return Result::Done();
      },
      metrics_);
  controller.Enqueue(NodeKey{"node-1"});
  controller.Enqueue(JobKey{7});
  controller.Enqueue(NodeKey{"node-1"});
  EXPECT_EQ(controller.RunUntilIdleForTest(), 2u);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(std::get<NodeKey>(seen[0]).node, "node-1");
  EXPECT_EQ(std::get<JobKey>(seen[1]).id, 7);
}

}  // namespace controller_test
}  // namespace clusterd::runtime
