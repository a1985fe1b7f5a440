#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace clusterd::auth {

// How a caller proved who it is.
enum class AuthMethod {
  kAnonymous,          // no credential, from a non-loopback address
  kAnonymousLoopback,  // no credential, from 127.0.0.0/8, ::1 or a unix socket
  kToken,              // a bearer token (token file or TokenReview)
  kClientCert,         // a TLS client certificate verified against --grpc-client-ca
};

absl::string_view AuthMethodName(AuthMethod method);

// Who is calling. Names follow Kubernetes: a token's user, a certificate's common name, or one
// of the two anonymous names below; authenticated principals also carry the group
// "system:authenticated", anonymous ones "system:unauthenticated".
struct Principal {
  std::string name;
  std::vector<std::string> groups;
  AuthMethod method = AuthMethod::kAnonymous;

  bool anonymous() const {
    return method == AuthMethod::kAnonymous || method == AuthMethod::kAnonymousLoopback;
  }
};

inline constexpr absl::string_view kAnonymousUser = "system:anonymous";
inline constexpr absl::string_view kAnonymousLoopbackUser = "system:anonymous-loopback";
inline constexpr absl::string_view kGroupAuthenticated = "system:authenticated";
inline constexpr absl::string_view kGroupUnauthenticated = "system:unauthenticated";

Principal AnonymousPrincipal(bool loopback);

}  // namespace clusterd::auth
