// StreamHub over a real in-process gRPC server on loopback (port 0): order, bounded queues, slow
// clients, replacement and closing of streams.
#include "server/stream_hub.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "config.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "unit/server/loopback_server.h"

namespace clusterd::server {
namespace stream_hub_test {

using Message = ::config::RankTableStream;

// config.Config with SubscribeRankTable attached to the hub's mailbox of the request's jobId.
class HubService final : public ::config::Config::CallbackService {
 public:
  explicit HubService(StreamHub<Message>& hub) : hub_(hub) {}
  grpc::ServerWriteReactor<Message>* SubscribeRankTable(grpc::CallbackServerContext*,
                                                        const ::config::ClientInfo* req) override {
    auto mb = hub_.Find(req->jobid());
    if (mb == nullptr) mb = hub_.Open(req->jobid());
    std::deque<Message> preamble;
    if (req->role() == "with-preamble") {
      Message m;
      m.set_ranktable("preamble");
      preamble.push_back(m);
    }
    return hub_.Subscribe<Message>(
        mb, std::move(preamble), [](Message&& m) { return std::move(m); },
        [this] { done_.fetch_add(1); });
  }
  std::atomic<int> done_{0};

 private:
  StreamHub<Message>& hub_;
};

Message Msg(const std::string& text) {
  Message m;
  m.set_ranktable(text);
  return m;
}

class StreamHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::LoopbackServer::Start(&service_);
    ASSERT_NE(server_.server, nullptr);
    channel_ = server_.channel;
  }
  void TearDown() override {
    hub_.CloseAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "test over"));
    server_.Shutdown();
  }

  struct Client {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReader<Message>> reader;
  };
  std::unique_ptr<Client> Subscribe(const std::string& key, const std::string& role = "") {
    auto c = std::make_unique<Client>();
    ::config::ClientInfo req;
    req.set_jobid(key);
    req.set_role(role);
    c->reader = ::config::Config::NewStub(channel_)->SubscribeRankTable(&c->ctx, req);
    return c;
  }
  // Waits until `key`'s mailbox has a stream attached (the server received the call).
  void AwaitAttached(const std::string& key) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      auto mb = hub_.Find(key);
      if (mb != nullptr && mb->HasStream()) return;
      std::this_thread::yield();
    }
    FAIL() << "no stream attached to " << key;
  }

  StreamHub<Message> hub_{"test", 10};
  HubService service_{hub_};
  testing::LoopbackServer server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(StreamHubTest, ItemsArriveInOrderIncludingThoseQueuedBeforeTheStream) {
  auto mb = hub_.Open("job");
  ASSERT_TRUE(mb->Push(Msg("0")));
  auto client = Subscribe("job");
  AwaitAttached("job");
  for (int i = 1; i < 5; ++i) ASSERT_TRUE(mb->Push(Msg(std::to_string(i))));
  Message m;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client->reader->Read(&m));
    EXPECT_EQ(m.ranktable(), std::to_string(i));
  }
}

TEST_F(StreamHubTest, ThePreambleComesFirst) {
  auto mb = hub_.Open("job");
  ASSERT_TRUE(mb->Push(Msg("queued")));
  auto client = Subscribe("job", "with-preamble");
  Message m;
  ASSERT_TRUE(client->reader->Read(&m));
  EXPECT_EQ(m.ranktable(), "preamble");
  ASSERT_TRUE(client->reader->Read(&m));
  EXPECT_EQ(m.ranktable(), "queued");
}

TEST_F(StreamHubTest, AFullMailboxDropsTheNewItemAndCountsIt) {
  auto mb = hub_.Open("nobody-reads");
  const uint64_t before = hub_.metrics().dropped_full.Value();
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(mb->Push(Msg("x")));
  EXPECT_FALSE(mb->Push(Msg("one too many")));
  EXPECT_EQ(hub_.metrics().dropped_full.Value(), before + 1);
  EXPECT_EQ(mb->size(), 10u);
}

// A client that never reads stalls its own stream (flow control) but neither the producer nor
// the other clients.
TEST_F(StreamHubTest, ASlowClientBlocksNeitherTheProducerNorOtherClients) {
  auto stalled = Subscribe("slow");
  auto healthy = Subscribe("fast");
  AwaitAttached("slow");
  AwaitAttached("fast");
  const std::string big(512 * 1024, 'x');
  std::atomic<int> received{0};
  std::thread reader([&] {
    Message m;
    while (received.load() < 200 && healthy->reader->Read(&m)) received.fetch_add(1);
  });
  const uint64_t dropped_before = hub_.metrics().dropped_full.Value();
  const absl::Time start = absl::Now();
  for (int i = 0; i < 200; ++i) {
    Message m = Msg(big);
    hub_.Find("slow")->Push(m);
    // The healthy client keeps up; give its queue room the way a steady producer would.
    while (hub_.Find("fast")->size() >= 10) std::this_thread::yield();
    ASSERT_TRUE(hub_.Find("fast")->Push(std::move(m)));
  }
  reader.join();
  EXPECT_EQ(received.load(), 200);
  // 200 x 512 KiB were pushed to the stalled client: most of them were dropped, and pushing
  // never waited for it.
  EXPECT_GT(hub_.metrics().dropped_full.Value(), dropped_before + 100);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

TEST_F(StreamHubTest, ANewerStreamOnTheSameMailboxEndsTheOlderOne) {
  auto first = Subscribe("job");
  AwaitAttached("job");
  auto second = Subscribe("job");
  Message m;
  EXPECT_FALSE(first->reader->Read(&m));
  grpc::Status st = first->reader->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(st.error_message(), "replaced by a newer subscription");
  ASSERT_TRUE(hub_.Find("job")->Push(Msg("to the second")));
  ASSERT_TRUE(second->reader->Read(&m));
  EXPECT_EQ(m.ranktable(), "to the second");
}

TEST_F(StreamHubTest, ClosingTheMailboxEndsTheStreamWithItsStatus) {
  auto client = Subscribe("job");
  AwaitAttached("job");
  ASSERT_TRUE(hub_.Remove("job", nullptr, grpc::Status(grpc::StatusCode::UNAVAILABLE, "bye")));
  Message m;
  EXPECT_FALSE(client->reader->Read(&m));
  grpc::Status st = client->reader->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(st.error_message(), "bye");
}

TEST_F(StreamHubTest, ReopeningAKeyClosesThePreviousMailboxWithOk) {
  auto client = Subscribe("job");
  AwaitAttached("job");
  auto old = hub_.Find("job");
  hub_.Open("job");
  EXPECT_TRUE(old->closed());
  EXPECT_FALSE(old->Push(Msg("late")));
  Message m;
  EXPECT_FALSE(client->reader->Read(&m));
  EXPECT_TRUE(client->reader->Finish().ok());
}

TEST_F(StreamHubTest, BroadcastReachesEveryMailbox) {
  auto a = hub_.Open("a");
  auto b = hub_.Open("b");
  EXPECT_EQ(hub_.Broadcast(Msg("all")), 2u);
  EXPECT_EQ(a->size(), 1u);
  EXPECT_EQ(b->size(), 1u);
}

TEST_F(StreamHubTest, AClientThatGoesAwayRunsOnDone) {
  {
    auto client = Subscribe("job");
    AwaitAttached("job");
    client->ctx.TryCancel();
    Message m;
    EXPECT_FALSE(client->reader->Read(&m));
    client->reader->Finish();
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (service_.done_.load() == 0 && absl::Now() < deadline) std::this_thread::yield();
  EXPECT_EQ(service_.done_.load(), 1);
  EXPECT_FALSE(hub_.Find("job")->HasStream());
}

}  // namespace stream_hub_test
}  // namespace clusterd::server
