#pragma once

#include <functional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/token_authenticator.h"
#include "common/clock.h"

namespace clusterd::auth {

// Bearer tokens checked by the Kubernetes API server (clusterd --authn-tokenreview, kube store):
// POST /apis/authentication.k8s.io/v1/tokenreviews {"spec":{"token":...}}; the answer's
// status.user becomes the principal. Answers are cached for `ttl` (refusals for
// `negative_ttl`), so a flood of calls with one token costs one review per TTL.
class TokenReviewAuthenticator final : public TokenAuthenticator {
 public:
  static constexpr absl::string_view kPath = "/apis/authentication.k8s.io/v1/tokenreviews";
  // Sends one TokenReview body; returns (HTTP status, body) or the transport error.
  using Post = std::function<absl::StatusOr<std::pair<long, std::string>>(const std::string& body)>;
  struct Options {
    absl::Duration ttl = absl::Seconds(10);
    absl::Duration negative_ttl = absl::Seconds(2);
    size_t max_entries = 4096;
  };

  TokenReviewAuthenticator(Post post, const Clock& clock, Options options)
      : post_(std::move(post)), clock_(clock), options_(options) {}
  TokenReviewAuthenticator(Post post, const Clock& clock)
      : TokenReviewAuthenticator(std::move(post), clock, Options{}) {}

  absl::StatusOr<Principal> Authenticate(absl::string_view token) override;

 private:
  absl::StatusOr<Principal> Review(absl::string_view token);

  struct Entry {
    absl::StatusOr<Principal> answer;
    absl::Time until;
  };
  Post post_;
  const Clock& clock_;
  const Options options_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);
};

// The TokenReview answer `body` as a principal: Unauthenticated with the server's reason when
// status.authenticated is false; InvalidArgument when the body is not a TokenReview.
absl::StatusOr<Principal> PrincipalOfTokenReview(absl::string_view body);

}  // namespace clusterd::auth
