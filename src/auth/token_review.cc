#include "auth/token_review.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "nlohmann/json.hpp"

namespace clusterd::auth {

absl::StatusOr<Principal> PrincipalOfTokenReview(absl::string_view body) {
  nlohmann::json review = nlohmann::json::parse(body, nullptr, false);
  if (review.is_discarded() || !review.is_object() || !review.contains("status") ||
      !review["status"].is_object()) {
    return absl::InvalidArgumentError("TokenReview answer has no status object");
  }
  const nlohmann::json& status = review["status"];
  if (!status.value("authenticated", false)) {
    std::string why = status.contains("error") && status["error"].is_string()
                          ? status["error"].get<std::string>()
                          : "token not authenticated";
    return absl::UnauthenticatedError(absl::StrCat("TokenReview: ", why));
  }
  Principal p;
  p.method = AuthMethod::kToken;
  if (status.contains("user") && status["user"].is_object()) {
    const nlohmann::json& user = status["user"];
    if (user.contains("username") && user["username"].is_string()) {
      p.name = user["username"].get<std::string>();
    }
    if (user.contains("groups") && user["groups"].is_array()) {
      for (const auto& g : user["groups"]) {
        if (g.is_string()) p.groups.push_back(g.get<std::string>());
      }
    }
  }
  if (p.name.empty()) return absl::UnauthenticatedError("TokenReview: no user name in the answer");
  p.groups.push_back(std::string(kGroupAuthenticated));
  return p;
}

absl::StatusOr<Principal> TokenReviewAuthenticator::Review(absl::string_view token) {
  nlohmann::json request = {{"apiVersion", "authentication.k8s.io/v1"},
                            {"kind", "TokenReview"},
                            {"spec", {{"token", std::string(token)}}}};
  absl::StatusOr<std::pair<long, std::string>> answer = post_(request.dump());
  MetricsRegistry::Default()
      .GetCounter("clusterd_auth_tokenreviews_total", "TokenReview requests sent, by outcome.",
                  {{"result", answer.ok() ? std::to_string(answer->first) : "unreachable"}})
      .Increment();
  if (!answer.ok()) {
    return absl::UnavailableError(
        absl::StrCat("TokenReview: the API server cannot be asked: ", answer.status().message()));
  }
  if (answer->first != 200 && answer->first != 201) {
    LogWarn("auth", "TokenReview refused", {{"code", answer->first}});
    return absl::UnavailableError(
        absl::StrCat("TokenReview: the API server answered HTTP ", answer->first));
  }
  return PrincipalOfTokenReview(answer->second);
}

absl::StatusOr<Principal> TokenReviewAuthenticator::Authenticate(absl::string_view token) {
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(token); it != cache_.end() && now < it->second.until) {
      return it->second.answer;
    }
  }
  absl::StatusOr<Principal> answer = Review(token);
  // A transport failure is not cached: the next call asks again.
  if (answer.ok() || absl::IsUnauthenticated(answer.status())) {
    absl::MutexLock lock(&mu_);
    if (cache_.size() >= options_.max_entries) cache_.clear();
    cache_[std::string(token)] =
        Entry{answer, now + (answer.ok() ? options_.ttl : options_.negative_ttl)};
  }
  return answer;
}

}  // namespace clusterd::auth
