#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "auth/authorizer.h"
#include "auth/pod_identity_index.h"
#include "auth/policy.h"
#include "auth/token_authenticator.h"
#include "common/clock.h"
#include "store/object_store.h"

namespace clusterd::store::kube {
class ApiClient;
}

namespace clusterd::server {

// clusterd's authentication flags (docs/security.md).
struct AuthFlags {
  std::string policy_file;    // --auth-policy: "" = the built-in default of the mode
  std::string token_file;     // --token-auth-file
  bool token_review = false;  // --authn-tokenreview (kube store only)
};

// The authorizer of one clusterd and what it owns: the policy in force, the token authority
// (a token file, or TokenReview through its own client of the store's API server) and the
// pod-IP index of the brain. The mode (embedded or Kubernetes) follows the store.
class AuthSetup {
 public:
  static absl::StatusOr<std::unique_ptr<AuthSetup>> Create(const AuthFlags& flags, bool kube_store,
                                                           const store::StoreOptions& store_options,
                                                           const auth::PodIdentityIndex& pods,
                                                           Clock& clock);
  ~AuthSetup();

  auth::Authorizer& authorizer() { return *authorizer_; }
  // One line for the start-up log: mode, token authority, policy.
  std::string Describe() const;

 private:
  AuthSetup() = default;

  auth::DeploymentMode mode_ = auth::DeploymentMode::kEmbedded;
  std::string authority_ = "none";
  std::unique_ptr<store::kube::ApiClient> api_;
  std::unique_ptr<auth::PolicySource> policy_;
  std::unique_ptr<auth::TokenAuthenticator> tokens_;
  std::unique_ptr<auth::Authorizer> authorizer_;
};

}  // namespace clusterd::server
