// RecoverClient's loop against an in-process fake Recover server on loopback: the
// Init/Register/Subscribe sequence, reconnect after the stream ends, TaskD de-duplication,
// refusals and health checks. Back-off is shortened so the loop turns in milliseconds.
#include "client/recover_client.h"

#include <deque>

#include "absl/synchronization/mutex.h"
#include "client/training_agent_driver.h"
#include "gtest/gtest.h"

namespace clusterd::client {
namespace recover_client_test {

::ProcessManageSignal Signal(const std::string& uuid, const std::string& type,
                             const std::string& strategy = "") {
  ::ProcessManageSignal s;
  s.set_uuid(uuid);
  s.set_jobid("J");
  s.set_signaltype(type);
  s.set_changestrategy(strategy);
  return s;
}

// Serves scripted streams: the i-th Subscribe writes scripts[i] and ends OK; later ones block
// until cancelled.
class FakeRecover final : public ::Recover::Service {
 public:
  grpc::Status Init(grpc::ServerContext*, const ::ClientInfo*, ::Status* resp) override {
    absl::MutexLock lock(&mu_);
    ++inits;
    resp->set_code(init_code);
    return grpc::Status::OK;
  }
  grpc::Status Register(grpc::ServerContext*, const ::ClientInfo*, ::Status* resp) override {
    absl::MutexLock lock(&mu_);
    ++registers;
    resp->set_code(register_codes.empty() ? 0 : register_codes.front());
    if (!register_codes.empty()) register_codes.pop_front();
    return grpc::Status::OK;
  }
  grpc::Status SubscribeProcessManageSignal(
      grpc::ServerContext* ctx, const ::ClientInfo*,
      grpc::ServerWriter<::ProcessManageSignal>* writer) override {
    std::vector<::ProcessManageSignal> script;
    {
      absl::MutexLock lock(&mu_);
      ++subscribes;
      if (scripts.empty()) {
        auto cancelled = [ctx] { return ctx->IsCancelled(); };
        while (!ctx->IsCancelled())
          mu_.AwaitWithTimeout(absl::Condition(&cancelled), absl::Milliseconds(20));
        return grpc::Status::CANCELLED;
      }
      script = std::move(scripts.front());
      scripts.pop_front();
    }
    for (const auto& s : script) writer->Write(s);
    return grpc::Status::OK;
  }
  grpc::Status ReportStopComplete(grpc::ServerContext*, const ::StopCompleteRequest* req,
                                  ::Status* resp) override {
    absl::MutexLock lock(&mu_);
    stop_codes.push_back(req->status().code());
    resp->set_code(0);
    resp->set_info("ok");
    return grpc::Status::OK;
  }
  grpc::Status HealthCheck(grpc::ServerContext*, const ::ClientInfo*, ::Status* resp) override {
    absl::MutexLock lock(&mu_);
    ++health;
    resp->set_code(0);
    return grpc::Status::OK;
  }

  absl::Mutex mu_;
  int32_t init_code = 0;
  std::deque<int32_t> register_codes;
  std::deque<std::vector<::ProcessManageSignal>> scripts;
  int inits = 0, registers = 0, subscribes = 0, health = 0;
  std::vector<int32_t> stop_codes;
};

class RecoverClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (client_ != nullptr) client_->Stop();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  void StartClient(bool dedup, bool stop_on_refusal = false) {
    RecoverClient::Options o;
    o.address = "127.0.0.1:" + std::to_string(port_);
    o.job_id = "J";
    o.deduplicate = dedup;
    o.stop_on_init_refusal = stop_on_refusal;
    o.backoff.initial = absl::Milliseconds(10);
    o.backoff.max = absl::Milliseconds(40);
    o.health_check_period = absl::Milliseconds(20);
    o.seed = 1;
    client_ = std::make_unique<RecoverClient>(o, &driver_);
    driver_.Attach(client_.get());
    client_->Start();
  }

  FakeRecover fake_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  TrainingAgentDriver driver_{"J"};
  std::unique_ptr<RecoverClient> client_;
};

TEST_F(RecoverClientTest, TaskdDeduplicationHandsARepeatedSignalOverOnce) {
  fake_.scripts = {{Signal("", "keep-alive"), Signal("U1", "stopTrain"), Signal("U1", "stopTrain")},
                   {Signal("U1", "stopTrain"), Signal("U1", "changeStrategy", "exit")}};
  StartClient(/*dedup=*/true);
  ASSERT_TRUE(client_->WaitStreamEnds(2, absl::Seconds(10)));
  ASSERT_TRUE(
      driver_.WaitUntil([](const auto& d) { return d.signals().size() >= 2; }, absl::Seconds(10)));
  const auto signals = driver_.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].signaltype(), "stopTrain");
  EXPECT_EQ(signals[1].changestrategy(), "exit");
  EXPECT_EQ(client_->stats().duplicates_suppressed, 2);
  EXPECT_EQ(client_->stats().keep_alives, 1);
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_EQ(fake_.stop_codes, std::vector<int32_t>{0});  // stop complete reported once
}

TEST_F(RecoverClientTest, WithoutDeduplicationEveryCopyIsHandled) {
  fake_.scripts = {{Signal("U1", "stopTrain"), Signal("U1", "stopTrain")}};
  StartClient(/*dedup=*/false);
  ASSERT_TRUE(client_->WaitStreamEnds(1, absl::Seconds(10)));
  ASSERT_TRUE(
      driver_.WaitUntil([](const auto& d) { return d.replies().size() >= 2; }, absl::Seconds(10)));
  EXPECT_EQ(driver_.signals().size(), 2u);
  EXPECT_EQ(client_->stats().duplicates_suppressed, 0);
}

TEST_F(RecoverClientTest, TheClientReconnectsWithInitRegisterSubscribeAfterTheStreamEnds) {
  fake_.scripts = {{Signal("U1", "killMaster")}, {Signal("U2", "killMaster")}};
  StartClient(true);
  ASSERT_TRUE(client_->WaitStreamEnds(2, absl::Seconds(10)));
  EXPECT_TRUE(
      driver_.WaitUntil([](const auto& d) { return d.kill_count() == 2; }, absl::Seconds(10)));
  // The third Subscribe (no script: it stays open) proves the loop came back after each end.
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_TRUE(
      fake_.mu_.AwaitWithTimeout(absl::Condition(
                                     +[](FakeRecover* f) { return f->subscribes >= 3; }, &fake_),
                                 absl::Seconds(10)));
  EXPECT_GE(fake_.inits, 3);
  EXPECT_GE(fake_.registers, 3);
}

TEST_F(RecoverClientTest, ARegisterFailureIsRetriedBeforeSubscribing) {
  fake_.register_codes = {408, 402};
  fake_.scripts = {{Signal("U1", "killMaster")}};
  StartClient(true);
  ASSERT_TRUE(client_->WaitStreamEnds(1, absl::Seconds(10)));
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_GE(fake_.registers, 3);
  EXPECT_EQ(fake_.subscribes >= 1, true);
}

TEST_F(RecoverClientTest, InitRefusalStopsAToolkitStyleClientForGood) {
  fake_.init_code = 403;
  StartClient(true, /*stop_on_refusal=*/true);
  EXPECT_TRUE(
      client_->WaitForStats([](const auto& s) { return s.init_refused; }, absl::Seconds(10)));
  client_->Stop();  // joins the loop, which had already returned
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_EQ(fake_.inits, 1);
  EXPECT_EQ(fake_.subscribes, 0);
}

TEST_F(RecoverClientTest, HealthChecksRunEveryPeriod) {
  StartClient(true);
  EXPECT_TRUE(
      client_->WaitForStats([](const auto& s) { return s.health_ok >= 3; }, absl::Seconds(10)));
  EXPECT_EQ(client_->stats().health_failed, 0);
}

TEST_F(RecoverClientTest, ReportHelpersReturnTheWireStatusAndStopCancelsTheLoop) {
  StartClient(true);
  absl::StatusOr<::Status> st = client_->ReportStopComplete(404, "not ready");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->info(), "ok");
  client_->Stop();
  EXPECT_FALSE(client_->stats().subscribed);
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_EQ(fake_.stop_codes, std::vector<int32_t>{404});
}

}  // namespace recover_client_test
}  // namespace clusterd::client
