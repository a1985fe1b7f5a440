// The Job service's client table, jobs-ranktable-diagnosis.md §3.1.
#include "cluster/job_summary_clients.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace job_summary_clients_test {

class JobSummaryClientsTest : public ::testing::Test {
 protected:
  ManualClock clock_;
};

TEST_F(JobSummaryClientsTest, WhitelistedRolesRegisterWithAFreshClientId) {
  JobSummaryClients clients(clock_);
  for (const char* role : {"CCAgent", "DefaultUser1", "DefaultUser2", "FdAgent"}) {
    JobSummaryClients::Registration r = clients.Register(role);
    EXPECT_EQ(r.code, 200);
    EXPECT_EQ(r.info, "registration successful");
    EXPECT_EQ(r.client_id.size(), 36u);
    EXPECT_FALSE(r.rpc_error);
  }
  EXPECT_EQ(clients.size(), 4u);
}

TEST_F(JobSummaryClientsTest, OtherRolesAreRefusedWithAnRpcError) {
  JobSummaryClients clients(clock_);
  JobSummaryClients::Registration r = clients.Register("taskd");
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(r.info, "role:taskd is not in whitelist:[CCAgent DefaultUser1 DefaultUser2 FdAgent]");
  EXPECT_TRUE(r.rpc_error);
  EXPECT_EQ(clients.size(), 0u);
}

TEST_F(JobSummaryClientsTest, TheClientLimitAnswers429WithoutRpcError) {
  JobSummaryClients clients(clock_, {2, 20, 20, 20});
  clients.Register("CCAgent");
  clients.Register("CCAgent");
  JobSummaryClients::Registration r = clients.Register("CCAgent");
  EXPECT_EQ(r.code, 429);
  EXPECT_EQ(r.info, "client num limit, max client num is 2");
  EXPECT_FALSE(r.rpc_error);
}

TEST_F(JobSummaryClientsTest, SubscribeNeedsARegisteredClientWithItsRole) {
  JobSummaryClients clients(clock_);
  auto unknown = clients.BeginStream("nobody", "CCAgent");
  EXPECT_EQ(unknown.status().message(), "invalid clientId: nobody, please register first");
  std::string id = clients.Register("CCAgent").client_id;
  auto wrong_role = clients.BeginStream(id, "FdAgent");
  EXPECT_EQ(wrong_role.status().message(), "invalid role: FdAgent, please check role first");
  EXPECT_TRUE(clients.BeginStream(id, "CCAgent").ok());
}

TEST_F(JobSummaryClientsTest, ResubscribingReplacesTheStreamAndOnlyTheCurrentOneDeregisters) {
  JobSummaryClients clients(clock_);
  std::string id = clients.Register("CCAgent").client_id;
  uint64_t first = *clients.BeginStream(id, "CCAgent");
  uint64_t second = *clients.BeginStream(id, "CCAgent");
  EXPECT_NE(first, second);
  EXPECT_FALSE(clients.EndStream(id, first));  // the replaced stream
  EXPECT_TRUE(clients.Registered(id));
  EXPECT_TRUE(clients.EndStream(id, second));  // the last one: deregistered
  EXPECT_FALSE(clients.Registered(id));
}

TEST_F(JobSummaryClientsTest, AtMostTwentySubscribedClientsPerRole) {
  JobSummaryClients clients(clock_, {100000, 20, 1000, 1000});
  std::vector<std::string> ids;
  for (int i = 0; i < 21; ++i) ids.push_back(clients.Register("CCAgent").client_id);
  std::vector<uint64_t> streams;
  for (int i = 0; i < 20; ++i) streams.push_back(*clients.BeginStream(ids[i], "CCAgent"));
  auto refused = clients.BeginStream(ids[20], "CCAgent");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "role:CCAgent has reached the max subscription num 20");
  EXPECT_TRUE(clients.BeginStream(ids[0], "CCAgent").ok());  // re-subscribing is exempt
  EXPECT_TRUE(clients.BeginStream(clients.Register("FdAgent").client_id, "FdAgent").ok());
  clients.EndStream(ids[1], streams[1]);
  EXPECT_TRUE(clients.BeginStream(ids[20], "CCAgent").ok());
}

TEST_F(JobSummaryClientsTest, SubscribesAreRateLimited) {
  JobSummaryClients clients(clock_);
  std::string id = clients.Register("CCAgent").client_id;
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(clients.BeginStream(id, "CCAgent").ok());
  auto limited = clients.BeginStream(id, "CCAgent");
  EXPECT_EQ(limited.status().message(),
            "rate limited, there is too many requests, please retry later");
  clock_.Advance(absl::Milliseconds(50));
  EXPECT_TRUE(clients.BeginStream(id, "CCAgent").ok());
}

}  // namespace job_summary_clients_test
}  // namespace clusterd::cluster
