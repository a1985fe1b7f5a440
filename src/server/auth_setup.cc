#include "server/auth_setup.h"

#include "absl/strings/str_cat.h"
#include "auth/token_file.h"
#include "auth/token_review.h"
#include "store/kube/api_client.h"
#include "store/kube/kube_config.h"

namespace clusterd::server {

AuthSetup::~AuthSetup() = default;

absl::StatusOr<std::unique_ptr<AuthSetup>> AuthSetup::Create(
    const AuthFlags& flags, bool kube_store, const store::StoreOptions& store_options,
    const auth::PodIdentityIndex& pods, Clock& clock) {
  std::unique_ptr<AuthSetup> setup(new AuthSetup());
  setup->mode_ = kube_store ? auth::DeploymentMode::kKubernetes : auth::DeploymentMode::kEmbedded;
  absl::StatusOr<std::unique_ptr<auth::PolicySource>> policy =
      auth::PolicySource::Open(flags.policy_file, setup->mode_, clock);
  if (!policy.ok()) return policy.status();
  setup->policy_ = *std::move(policy);

  if (flags.token_review && !flags.token_file.empty()) {
    return absl::InvalidArgumentError(
        "--authn-tokenreview and --token-auth-file exclude each other");
  }
  if (flags.token_review) {
    if (!kube_store) return absl::InvalidArgumentError("--authn-tokenreview needs --store kube");
    absl::StatusOr<store::kube::KubeConfig> config =
        store_options.kubeconfig.empty()
            ? store::kube::LoadInClusterConfig()
            : store::kube::LoadKubeconfig(store_options.kubeconfig, store_options.kube_context);
    if (!config.ok()) return config.status();
    store::kube::ApiClient::Options options;
    options.config = *std::move(config);
    options.clock = &clock;
    options.request_timeout = absl::Seconds(5);
    options.user_agent = "clusterd-tokenreview";
    setup->api_ = std::make_unique<store::kube::ApiClient>(std::move(options));
    store::kube::ApiClient* api = setup->api_.get();
    setup->tokens_ = std::make_unique<auth::TokenReviewAuthenticator>(
        [api](const std::string& body) -> absl::StatusOr<std::pair<long, std::string>> {
          store::kube::ApiClient::Request request;
          request.method = "POST";
          request.path = std::string(auth::TokenReviewAuthenticator::kPath);
          request.body = body;
          absl::StatusOr<store::kube::ApiClient::Response> r = api->Do(request);
          if (!r.ok()) return r.status();
          return std::make_pair(r->code, std::move(r->body));
        },
        clock);
    setup->authority_ = "tokenreview";
  } else if (!flags.token_file.empty()) {
    absl::StatusOr<std::unique_ptr<auth::TokenFileAuthenticator>> tokens =
        auth::TokenFileAuthenticator::Open(flags.token_file, clock);
    if (!tokens.ok()) return tokens.status();
    setup->tokens_ = *std::move(tokens);
    setup->authority_ = absl::StrCat("token-file:", flags.token_file);
  }
  setup->authorizer_ = std::make_unique<auth::Authorizer>(
      auth::Authorizer::Options{setup->policy_.get(), setup->tokens_.get(), &pods}, clock);
  return setup;
}

std::string AuthSetup::Describe() const {
  return absl::StrCat(
      "mode=", mode_ == auth::DeploymentMode::kKubernetes ? "kubernetes" : "embedded",
      " tokens=", authority_,
      " policy=", policy_->path().empty() ? std::string("built-in") : policy_->path(), " ",
      auth::PolicyJson(*policy_->Current()));
}

}  // namespace clusterd::server
