#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/peer_address.h"
#include "auth/pod_identity_index.h"
#include "auth/policy.h"
#include "auth/principal.h"
#include "auth/token_authenticator.h"
#include "common/clock.h"
#include "common/rate_limiter.h"

namespace clusterd::auth {

// What a transport knows about a caller.
struct Caller {
  std::string peer;              // gRPC peer form: "ipv4:10.0.0.1:4000", "ipv6:[::1]:4000"
  std::string authorization;     // the `authorization` metadata / header, "" when absent
  std::string cert_common_name;  // CN of a TLS client certificate the server verified, or ""
};

// Decides who may call what, for every service (gRPC and HTTP) of one clusterd:
//  - ActForJob: a call that acts for `job_id`. Allowed when the principal has job:act, when
//    the policy's jobIdentity is any, when it is loopback and the peer is a loopback address,
//    or when the peer's IP is the podIP of one of the job's pods (PodIdentityIndex).
//  - Permit: an operator/platform call needing `permission` on `resource`.
// A refusal is Unauthenticated (a credential was given and is bad, or none was given where one
// is needed) or PermissionDenied (the principal lacks the permission, or the peer is not a pod
// of the job), with a message naming the method, the job or permission, and the caller; it is
// logged (warn, at most 10 at once then 1/s) and counted in
// clusterd_authz_denied_total{method,reason}.
class Authorizer {
 public:
  struct Options {
    PolicySource* policy = nullptr;          // required
    TokenAuthenticator* tokens = nullptr;    // null: bearer tokens are refused as unknown
    const PodIdentityIndex* pods = nullptr;  // null: no pod is known
  };
  Authorizer(Options options, Clock& clock);

  // The caller's principal; Unauthenticated when the credential it presents is bad.
  absl::StatusOr<Principal> Authenticate(const Caller& caller) const;

  absl::Status ActForJob(absl::string_view method, const Caller& caller, absl::string_view job_id,
                         Principal* who = nullptr);
  absl::Status Permit(absl::string_view method, const Caller& caller, absl::string_view permission,
                      absl::string_view resource = "", Principal* who = nullptr);

  std::shared_ptr<const Policy> policy() const { return options_.policy->Current(); }

 private:
  absl::Status Deny(absl::string_view method, absl::string_view reason, const Caller& caller,
                    absl::Status status);

  Options options_;
  TokenBucket log_budget_;
};

// The token of an `authorization` value "Bearer <token>"; InvalidArgument otherwise.
absl::StatusOr<absl::string_view> BearerToken(absl::string_view authorization);

}  // namespace clusterd::auth
