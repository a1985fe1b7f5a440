#include "auth/authorizer.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "common/log.h"
#include "common/metrics.h"

namespace clusterd::auth {

absl::StatusOr<absl::string_view> BearerToken(absl::string_view authorization) {
  absl::string_view v = absl::StripAsciiWhitespace(authorization);
  if (v.size() < 7 || !absl::EqualsIgnoreCase(v.substr(0, 7), "bearer ")) {
    return absl::InvalidArgumentError("authorization is not \"Bearer <token>\"");
  }
  absl::string_view token = absl::StripAsciiWhitespace(v.substr(7));
  if (token.empty()) return absl::InvalidArgumentError("authorization carries an empty token");
  for (char c : token) {
    if (c <= ' ' || c >= 0x7f) {
      return absl::InvalidArgumentError("bearer token has characters outside printable ASCII");
    }
  }
  return token;
}

Authorizer::Authorizer(Options options, Clock& clock)
    : options_(std::move(options)), log_budget_(1, 10, clock) {}

absl::StatusOr<Principal> Authorizer::Authenticate(const Caller& caller) const {
  if (!caller.authorization.empty()) {
    absl::StatusOr<absl::string_view> token = BearerToken(caller.authorization);
    if (!token.ok()) {
      return absl::UnauthenticatedError(
          absl::StrCat("malformed credential: ", token.status().message()));
    }
    if (options_.tokens == nullptr) {
      return absl::UnauthenticatedError(
          "bearer token given, but no token authority is configured (--token-auth-file or "
          "--authn-tokenreview)");
    }
    absl::StatusOr<Principal> p = options_.tokens->Authenticate(*token);
    if (!p.ok() && !absl::IsUnauthenticated(p.status())) {
      return absl::UnauthenticatedError(p.status().message());
    }
    return p;
  }
  if (!caller.cert_common_name.empty()) {
    Principal p;
    p.name = caller.cert_common_name;
    p.groups = {std::string(kGroupAuthenticated)};
    p.method = AuthMethod::kClientCert;
    return p;
  }
  absl::StatusOr<PeerAddress> peer = ParsePeerAddress(caller.peer);
  return AnonymousPrincipal(peer.ok() && peer->loopback);
}

absl::Status Authorizer::Deny(absl::string_view method, absl::string_view reason,
                              const Caller& caller, absl::Status status) {
  MetricsRegistry::Default()
      .GetCounter("clusterd_authz_denied_total",
                  "Calls refused by authentication or authorisation, by method and reason.",
                  {{"method", std::string(method)}, {"reason", std::string(reason)}})
      .Increment();
  if (log_budget_.TryAcquire()) {
    LogWarn("auth", "call refused",
            {{"method", method}, {"reason", reason}, {"peer", caller.peer}, {"error", status}});
  }
  return status;
}

absl::Status Authorizer::ActForJob(absl::string_view method, const Caller& caller,
                                   absl::string_view job_id, Principal* who) {
  std::shared_ptr<const Policy> policy = options_.policy->Current();
  absl::StatusOr<Principal> principal = Authenticate(caller);
  if (!principal.ok()) {
    return Deny(
        method, "unauthenticated", caller,
        absl::UnauthenticatedError(absl::StrCat(method, " for job ", job_id, " from ", caller.peer,
                                                ": ", principal.status().message())));
  }
  if (who != nullptr) *who = *principal;
  if (policy->job_identity == JobIdentity::kAny ||
      policy->Allows(*principal, kPermJobAct, job_id)) {
    return absl::OkStatus();
  }
  absl::StatusOr<PeerAddress> peer = ParsePeerAddress(caller.peer);
  if (peer.ok()) {
    if (peer->loopback && policy->job_identity == JobIdentity::kLoopback) return absl::OkStatus();
    if (options_.pods != nullptr && !peer->ip.empty() &&
        options_.pods->IsPodOfJob(peer->ip, job_id)) {
      return absl::OkStatus();
    }
  }
  return Deny(
      method, "not_job_pod", caller,
      absl::PermissionDeniedError(absl::StrCat(
          method, " for job ", job_id, " refused: caller ", caller.peer,
          " is not a pod of the job (", principal->name, " has no job:act; policy jobIdentity ",
          JobIdentityName(policy->job_identity), ")")));
}

absl::Status Authorizer::Permit(absl::string_view method, const Caller& caller,
                                absl::string_view permission, absl::string_view resource,
                                Principal* who) {
  std::shared_ptr<const Policy> policy = options_.policy->Current();
  absl::StatusOr<Principal> principal = Authenticate(caller);
  if (!principal.ok()) {
    return Deny(method, "unauthenticated", caller,
                absl::UnauthenticatedError(absl::StrCat(method, " from ", caller.peer, ": ",
                                                        principal.status().message())));
  }
  if (who != nullptr) *who = *principal;
  if (policy->Allows(*principal, permission, resource)) return absl::OkStatus();
  const std::string what =
      resource.empty() ? std::string(permission) : absl::StrCat(permission, " on ", resource);
  if (principal->anonymous()) {
    return Deny(method, "no_credential", caller,
                absl::UnauthenticatedError(absl::StrCat(
                    method, " from ", caller.peer, " needs a credential with permission ", what,
                    " (authorization: Bearer <token>, or a client certificate)")));
  }
  return Deny(method, "no_permission", caller,
              absl::PermissionDeniedError(absl::StrCat(method, ": ", principal->name, " from ",
                                                       caller.peer, " lacks permission ", what)));
}

}  // namespace clusterd::auth
