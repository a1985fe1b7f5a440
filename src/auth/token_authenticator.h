#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/principal.h"

namespace clusterd::auth {

// Turns a bearer token into a principal. Errors: Unauthenticated with the reason ("unknown
// token", "token expired at ...", "TokenReview: ..."); Unavailable when the authority cannot
// be asked (the caller refuses the call but says why).
class TokenAuthenticator {
 public:
  virtual ~TokenAuthenticator() = default;
  virtual absl::StatusOr<Principal> Authenticate(absl::string_view token) = 0;
};

}  // namespace clusterd::auth
