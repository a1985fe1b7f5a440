#include "auth/principal.h"

namespace clusterd::auth {

absl::string_view AuthMethodName(AuthMethod method) {
  switch (method) {
    case AuthMethod::kAnonymous:
      return "anonymous";
    case AuthMethod::kAnonymousLoopback:
      return "anonymous-loopback";
    case AuthMethod::kToken:
      return "token";
    case AuthMethod::kClientCert:
      return "client-cert";
  }
  return "unknown";
}

Principal AnonymousPrincipal(bool loopback) {
  Principal p;
  p.name = std::string(loopback ? kAnonymousLoopbackUser : kAnonymousUser);
  p.groups = {std::string(kGroupUnauthenticated)};
  p.method = loopback ? AuthMethod::kAnonymousLoopback : AuthMethod::kAnonymous;
  return p;
}

}  // namespace clusterd::auth
