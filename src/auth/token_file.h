#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/file_change.h"
#include "auth/token_authenticator.h"
#include "common/clock.h"

namespace clusterd::auth {

// One line of a token file: the format of kube-apiserver's --token-auth-file,
//   token,user,uid,"group1,group2"
// plus an optional fifth column, the time the token stops working (RFC 3339,
// e.g. 2026-12-31T00:00:00Z). Lines that are empty or start with '#' are skipped.
struct TokenEntry {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  std::optional<absl::Time> expires;
};

using TokenTable = absl::flat_hash_map<std::string, TokenEntry>;

// Parses a whole token file; an error names the line and what is wrong with it.
absl::StatusOr<TokenTable> ParseTokenFile(absl::string_view text);

// Tokens from a file (clusterd --token-auth-file), re-read when the file changes. A file that
// no longer parses keeps the previous tokens (logged, clusterd_auth_reload_errors_total).
class TokenFileAuthenticator final : public TokenAuthenticator {
 public:
  static absl::StatusOr<std::unique_ptr<TokenFileAuthenticator>> Open(std::string path,
                                                                      const Clock& clock);

  absl::StatusOr<Principal> Authenticate(absl::string_view token) override;

 private:
  TokenFileAuthenticator(std::string path, const Clock& clock)
      : change_(path, clock), clock_(clock) {}
  absl::Status Reload();

  FileChange change_;
  const Clock& clock_;
  absl::Mutex mu_;
  TokenTable tokens_ ABSL_GUARDED_BY(mu_);
};

// The principal a token entry names (groups plus system:authenticated).
Principal PrincipalOf(const TokenEntry& entry);

}  // namespace clusterd::auth
