#include "auth/token_review.h"

#include "gtest/gtest.h"

namespace clusterd::auth {
namespace token_review_test {

constexpr char kAlice[] =
    R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":true,)"
    R"("user":{"username":"system:serviceaccount:ops:ccae","groups":["system:serviceaccounts"]}}})";

TEST(TokenReview, AuthenticatedAnswerIsThePrincipal) {
  int posts = 0;
  std::string sent;
  ManualClock clock;
  TokenReviewAuthenticator a(
      [&](const std::string& body) -> absl::StatusOr<std::pair<long, std::string>> {
        ++posts;
        sent = body;
        return std::make_pair(201L, std::string(kAlice));
      },
      clock);
  auto p = a.Authenticate("tok");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "system:serviceaccount:ops:ccae");
  EXPECT_NE(sent.find("\"token\":\"tok\""), std::string::npos);
  EXPECT_TRUE(a.Authenticate("tok").ok());
  EXPECT_EQ(posts, 1) << "the answer is cached";
  clock.Advance(absl::Seconds(11));
  EXPECT_TRUE(a.Authenticate("tok").ok());
  EXPECT_EQ(posts, 2) << "the cache entry expired";
}

TEST(TokenReview, RefusalCarriesTheServersReason) {
  ManualClock clock;
  TokenReviewAuthenticator a(
      [&](const std::string&) -> absl::StatusOr<std::pair<long, std::string>> {
        return std::make_pair(
            201L, std::string(R"({"status":{"authenticated":false,"error":"token has expired"}})"));
      },
      clock);
  auto p = a.Authenticate("tok");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(p.status()));
  EXPECT_EQ(p.status().message(), "TokenReview: token has expired");
}

TEST(TokenReview, UnreachableApiServerIsNotCached) {
  ManualClock clock;
  int posts = 0;
  TokenReviewAuthenticator a(
      [&](const std::string&) -> absl::StatusOr<std::pair<long, std::string>> {
        ++posts;
        return absl::UnavailableError("connection refused");
      },
      clock);
  EXPECT_TRUE(absl::IsUnavailable(a.Authenticate("tok").status()));
  EXPECT_TRUE(absl::IsUnavailable(a.Authenticate("tok").status()));
  EXPECT_EQ(posts, 2);
}

TEST(TokenReview, GarbageAnswerIsAnError) {
  EXPECT_FALSE(PrincipalOfTokenReview("<html>").ok());
  EXPECT_FALSE(PrincipalOfTokenReview(R"({"status":{"authenticated":true}})").ok());
}

}  // namespace token_review_test
}  // namespace clusterd::auth
