// Recover handlers that write the store run on the HandlerPool, not on gRPC's own threads: with
// many Register calls stuck in a store write, the server still answers other calls (and so
// still reads its sockets and acknowledges keepalive pings). An in-process server on loopback
// over a store whose PodGroup patches wait until the test lets them go.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "recover.grpc.pb.h"
#include "server/handler_pool.h"
#include "server/recover_service.h"
#include "server/recovery_bridge.h"
#include "server/unary_gate.h"
#include "store/memory/memory_store.h"
#include "unit/forwarding_store.h"
#include "unit/server/loopback_server.h"

namespace clusterd::server {
namespace blocking_handlers_test {

// More Register calls than gRPC 1.51 has callback threads on any machine (at most 16).
constexpr int kStuckCalls = 40;
constexpr size_t kPoolThreads = 4;

// Patches of a PodGroup (what Register writes) wait until Release().
class StuckPatchStore final : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::Object> Patch(const store::ObjectKey& key,
                                      const store::Object& patch) override {
    if (key.resource == store::kPodGroups) {
      entered_.fetch_add(1);
      release_.WaitForNotification();
    }
    return inner_.Patch(key, patch);
  }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }
  int entered() const { return entered_.load(); }

 private:
  std::atomic<int> entered_{0};
  absl::Notification release_;
};

std::string JobId(int i) { return absl::StrCat("job-uid-", i); }

store::Object PodGroup(int i) {
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", absl::StrCat("pg-", i)},
            {"namespace", "default"},
            {"labels", {{"process-recover-enable", "on"}}},
            {"annotations", {{"recover-strategy", "recover"}}},
            {"ownerReferences",
             {{{"apiVersion", "mindxdl.gitee.com/v1"},
               {"kind", "AscendJob"},
               {"name", absl::StrCat("job-", i)},
               {"uid", JobId(i)},
               {"controller", true}}}}}},
          {"status", {{"phase", "Running"}}}};
}

UnaryGate::Limits Unlimited() {
  UnaryGate::Limits limits;
  limits.health_rate = limits.shared_rate = 1e9;
  limits.health_burst = limits.shared_burst = 1000000000;
  return limits;
}

class BlockingHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kStuckCalls; ++i) {
      ASSERT_TRUE(inner_.Create(store::kPodGroups, PodGroup(i)).ok());
    }
    ASSERT_TRUE(bridge_.Start(/*run_threads=*/false).ok());
    for (int i = 0; i < kStuckCalls; ++i) ASSERT_EQ(bridge_.Init(JobId(i)).code, 0);
    service_.SetHandlerPool(&pool_);
    server_ = testing::LoopbackServer::Start(&service_);
    ASSERT_NE(server_.server, nullptr);
    stub_ = ::Recover::NewStub(server_.channel);
  }
  void TearDown() override {
    store_.Release();
    server_.Shutdown();
  }

  store::MemoryStore inner_;
  StuckPatchStore store_{inner_};
  RecoveryBridge bridge_{store_, Clock::Real(), nullptr, nullptr};
  UnaryGate gate_{Clock::Real(), Unlimited()};
  HandlerPool pool_{HandlerPool::Options{.threads = kPoolThreads, .max_queued = 10000}};
  RecoverService service_{gate_, bridge_};
  testing::LoopbackServer server_;
  std::unique_ptr<::Recover::Stub> stub_;
};

TEST_F(BlockingHandlersTest, OtherCallsAreAnsweredWhileRegisterCallsWaitForTheStore) {
  struct Pending {
    grpc::ClientContext ctx;
    ::ClientInfo request;
    ::Status response;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Pending>> pending;
  absl::Mutex mu;
  int finished = 0;
  for (int i = 0; i < kStuckCalls; ++i) {
    auto p = std::make_unique<Pending>();
    p->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    p->request.set_jobid(JobId(i));
    p->request.set_role("taskd");
    Pending* raw = p.get();
    stub_->async()->Register(&raw->ctx, &raw->request, &raw->response,
                             [raw, &mu, &finished](grpc::Status s) {
                               absl::MutexLock lock(&mu);
                               raw->status = std::move(s);
                               ++finished;
                             });
    pending.push_back(std::move(p));
  }
  // Wait until the store holds some of them.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (store_.entered() == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_GT(store_.entered(), 0);

  // Every handler thread of ours is stuck; gRPC's threads are not.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  ::ClientInfo req;
  req.set_jobid(JobId(0));
  ::Status resp;
  grpc::Status health = stub_->HealthCheck(&ctx, req, &resp);
  EXPECT_TRUE(health.ok()) << health.error_code() << " " << health.error_message();
  EXPECT_EQ(resp.code(), 0);
  EXPECT_LE(store_.entered(), static_cast<int>(kPoolThreads));

  // Let the store go: every Register is answered, in full.
  store_.Release();
  absl::MutexLock lock(&mu);
  ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(
                                      +[](int* n) { return *n == kStuckCalls; }, &finished),
                                  absl::Seconds(30)));
  for (const auto& p : pending) {
    EXPECT_TRUE(p->status.ok()) << p->status.error_message();
    EXPECT_EQ(p->response.code(), 0) << p->response.info();
  }
}

}  // namespace blocking_handlers_test
}  // namespace clusterd::server
