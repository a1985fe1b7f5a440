// StreamChannel / ChannelStream over a real in-process gRPC server on loopback (port 0): order,
// graceful close after the queued items, one-shot streams, client cancellation, and a client
// that never reads (producers never block; the bounded queue drops).
#include "server/recover_stream.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "recover.grpc.pb.h"
#include "unit/server/loopback_server.h"

namespace clusterd::server {
namespace recover_stream_test {

using Channel = StreamChannel<::ProcessManageSignal>;

::ProcessManageSignal Signal(const std::string& type, size_t padding = 0) {
  ::ProcessManageSignal s;
  s.set_signaltype(type);
  s.set_extraparams(std::string(padding, 'x'));
  return s;
}

// Recover with SubscribeProcessManageSignal served from the test's next channel.
class ChannelService final : public ::Recover::CallbackService {
 public:
  grpc::ServerWriteReactor<::ProcessManageSignal>* SubscribeProcessManageSignal(
      grpc::CallbackServerContext*, const ::ClientInfo*) override {
    std::shared_ptr<Channel> channel;
    {
      absl::MutexLock lock(&mu_);
      channel = next_;
    }
    auto* stream = new ChannelStream<::ProcessManageSignal>(channel, [this](bool client_ended) {
      client_ended_ = client_ended;
      done_.Notify();
    });
    attached_.Notify();
    return stream;
  }
  void SetNext(std::shared_ptr<Channel> c) {
    absl::MutexLock lock(&mu_);
    next_ = std::move(c);
  }
  absl::Mutex mu_;
  std::shared_ptr<Channel> next_;
  absl::Notification attached_;
  absl::Notification done_;
  std::atomic<bool> client_ended_{false};
};

class RecoverStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::LoopbackServer::Start(&service_);
    ASSERT_NE(server_.server, nullptr);
    stub_ = ::Recover::NewStub(server_.channel);
  }
  void TearDown() override { server_.Shutdown(); }

  std::shared_ptr<Channel> Open(size_t capacity, bool one_shot = false) {
    auto c = std::make_shared<Channel>(capacity, one_shot, metrics_);
    service_.SetNext(c);
    reader_ = stub_->SubscribeProcessManageSignal(&ctx_, ::ClientInfo());
    EXPECT_TRUE(service_.attached_.WaitForNotificationWithTimeout(absl::Seconds(10)));
    return c;
  }

  StreamMetrics metrics_{"recover_stream_test"};
  ChannelService service_;
  testing::LoopbackServer server_;
  std::unique_ptr<::Recover::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<::ProcessManageSignal>> reader_;
};

TEST_F(RecoverStreamTest, QueuedItemsAreWrittenInOrderBeforeAGracefulClose) {
  auto c = Open(8);
  ASSERT_TRUE(c->Push(Signal("stopTrain")));
  ASSERT_TRUE(c->Push(Signal("killMaster")));
  c->Close(grpc::Status::OK);
  EXPECT_FALSE(c->Push(Signal("late")));
  ::ProcessManageSignal m;
  ASSERT_TRUE(reader_->Read(&m));
  EXPECT_EQ(m.signaltype(), "stopTrain");
  ASSERT_TRUE(reader_->Read(&m));
  EXPECT_EQ(m.signaltype(), "killMaster");
  EXPECT_FALSE(reader_->Read(&m));
  EXPECT_TRUE(reader_->Finish().ok());
  ASSERT_TRUE(service_.done_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(service_.client_ended_);
  EXPECT_TRUE(c->ended());
}

TEST_F(RecoverStreamTest, AOneShotStreamEndsAfterItsFirstMessage) {
  auto c = Open(1, /*one_shot=*/true);
  ASSERT_TRUE(c->Push(Signal("switch nic finish")));
  ::ProcessManageSignal m;
  ASSERT_TRUE(reader_->Read(&m));
  EXPECT_EQ(m.signaltype(), "switch nic finish");
  EXPECT_FALSE(reader_->Read(&m));
  EXPECT_TRUE(reader_->Finish().ok());
}

TEST_F(RecoverStreamTest, AClientCancelIsReportedAsClientEnded) {
  auto c = Open(8);
  ctx_.TryCancel();
  ::ProcessManageSignal m;
  EXPECT_FALSE(reader_->Read(&m));
  ASSERT_TRUE(service_.done_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(service_.client_ended_);
  EXPECT_TRUE(c->ended());
  EXPECT_FALSE(c->Push(Signal("keep-alive")));
}

TEST_F(RecoverStreamTest, AClientThatNeverReadsNeverBlocksTheProducer) {
  auto c = Open(16);
  // 64 KiB messages: gRPC's flow-control window fills after a few, then the queue fills, then
  // pushes are refused at once.
  size_t refused = 0;
  const absl::Time start = absl::Now();
  for (int i = 0; i < 400; ++i) {
    if (!c->Push(Signal("stopTrain", 64 * 1024))) ++refused;
  }
  EXPECT_GT(refused, 0u);
  EXPECT_LE(c->size(), 16u);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));  // never waited for the client
  ctx_.TryCancel();
}

}  // namespace recover_stream_test
}  // namespace clusterd::server
