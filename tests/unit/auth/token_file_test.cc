#include "auth/token_file.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"

namespace clusterd::auth {
namespace token_file_test {

TEST(TokenFile, ParsesKubeApiserverFormatWithQuotedGroups) {
  auto t = ParseTokenFile(
      "# comment\n"
      "s3cret,alice,1001,\"clusterd:operators,ops\"\n"
      "\n"
      "other,ccae,1002\n");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 2u);
  const TokenEntry& alice = t->at("s3cret");
  EXPECT_EQ(alice.user, "alice");
  EXPECT_EQ(alice.uid, "1001");
  EXPECT_EQ(alice.groups, (std::vector<std::string>{"clusterd:operators", "ops"}));
  EXPECT_TRUE(t->at("other").groups.empty());
}

TEST(TokenFile, MalformedLinesNameTheLine) {
  auto few = ParseTokenFile("ok,user,1\nonlytoken\n");
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("line 2"), absl::string_view::npos);
  auto dup = ParseTokenFile("a,u,1\na,v,2\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate"), absl::string_view::npos);
  EXPECT_FALSE(ParseTokenFile("a,u,1,\"g\n").ok());
  EXPECT_FALSE(ParseTokenFile("a,u,1,g,yesterday\n").ok());
}

class TokenFileAuthenticatorTest : public ::testing::Test {
 protected:
  void Write(const std::string& text) {
    std::string tmp = path_ + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << text;
    }
    std::rename(tmp.c_str(), path_.c_str());  // a new inode, as a Secret volume update
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_ = ::testing::TempDir() + "/tokens-" + std::to_string(getpid()) + ".csv";
  ManualClock clock_;
};

TEST_F(TokenFileAuthenticatorTest, KnownTokenGivesThePrincipalUnknownIsUnauthenticated) {
  Write("tok,alice,1,\"ops\"\n");
  auto a = TokenFileAuthenticator::Open(path_, clock_);
  ASSERT_TRUE(a.ok()) << a.status();
  auto p = (*a)->Authenticate("tok");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "alice");
  EXPECT_EQ(p->method, AuthMethod::kToken);
  EXPECT_EQ(p->groups, (std::vector<std::string>{"ops", "system:authenticated"}));
  auto bad = (*a)->Authenticate("nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(bad.status()));
  EXPECT_EQ(bad.status().message(), "unknown bearer token");
}

TEST_F(TokenFileAuthenticatorTest, ExpiredTokenIsRefusedWithItsExpiry) {
  Write("tok,alice,1,,2024-06-10T06:20:00Z\n");
  auto a = TokenFileAuthenticator::Open(path_, clock_);
  ASSERT_TRUE(a.ok()) << a.status();
  clock_.Set(absl::FromUnixSeconds(1718000000));  // 2024-06-10T06:13:20Z
  EXPECT_TRUE((*a)->Authenticate("tok").ok());
  clock_.Advance(absl::Minutes(10));
  auto p = (*a)->Authenticate("tok");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(p.status()));
  EXPECT_NE(p.status().message().find("expired at 2024-06-10T06:20:00"), absl::string_view::npos)
      << p.status();
}

TEST_F(TokenFileAuthenticatorTest, ReloadsWhenTheFileChangesAndKeepsTokensOnABadFile) {
  Write("old,alice,1\n");
  auto a = TokenFileAuthenticator::Open(path_, clock_);
  ASSERT_TRUE(a.ok());
  Write("new,bob,2\n");
  clock_.Advance(absl::Seconds(2));
  EXPECT_FALSE((*a)->Authenticate("old").ok());
  auto bob = (*a)->Authenticate("new");
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ(bob->name, "bob");
  Write("broken\n");
  clock_.Advance(absl::Seconds(2));
  EXPECT_TRUE((*a)->Authenticate("new").ok());
}

TEST_F(TokenFileAuthenticatorTest, AMissingFileIsAnErrorAtStart) {
  EXPECT_FALSE(TokenFileAuthenticator::Open(path_ + ".absent", clock_).ok());
}

}  // namespace token_file_test
}  // namespace clusterd::auth
