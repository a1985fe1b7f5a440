#include "auth/token_file.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/log.h"
#include "common/metrics.h"

namespace clusterd::auth {

namespace {

// CSV fields of one line: commas separate, double quotes group ("" inside quotes is a quote).
absl::StatusOr<std::vector<std::string>> CsvFields(absl::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) return absl::InvalidArgumentError("unterminated quote");
  return fields;
}

}  // namespace

Principal PrincipalOf(const TokenEntry& entry) {
  Principal p;
  p.name = entry.user;
  p.groups = entry.groups;
  p.groups.push_back(std::string(kGroupAuthenticated));
  p.method = AuthMethod::kToken;
  return p;
}

absl::StatusOr<TokenTable> ParseTokenFile(absl::string_view text) {
  TokenTable table;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    absl::StatusOr<std::vector<std::string>> fields = CsvFields(line);
    if (!fields.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", fields.status().message()));
    }
    if (fields->size() < 3 || fields->size() > 5) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": want token,user,uid[,\"groups\"[,expires]], got ",
                       fields->size(), " fields"));
    }
    const std::string token(absl::StripAsciiWhitespace((*fields)[0]));
    TokenEntry entry;
    entry.user = std::string(absl::StripAsciiWhitespace((*fields)[1]));
    entry.uid = std::string(absl::StripAsciiWhitespace((*fields)[2]));
    if (token.empty())
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": empty token"));
    if (entry.user.empty())
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": empty user"));
    if (fields->size() >= 4) {
      for (absl::string_view g : absl::StrSplit((*fields)[3], ',', absl::SkipWhitespace())) {
        entry.groups.emplace_back(absl::StripAsciiWhitespace(g));
      }
    }
    if (fields->size() == 5 && !absl::StripAsciiWhitespace((*fields)[4]).empty()) {
      absl::Time t;
      std::string err;
      if (!absl::ParseTime(absl::RFC3339_full, absl::StripAsciiWhitespace((*fields)[4]), &t,
                           &err)) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", number, ": expiry is not RFC 3339: ", err));
      }
      entry.expires = t;
    }
    if (!table.emplace(token, std::move(entry)).second) {
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": duplicate token"));
    }
  }
  return table;
}

absl::StatusOr<std::unique_ptr<TokenFileAuthenticator>> TokenFileAuthenticator::Open(
    std::string path, const Clock& clock) {
  std::unique_ptr<TokenFileAuthenticator> a(new TokenFileAuthenticator(std::move(path), clock));
  (void)a->change_.Changed();
  if (absl::Status s = a->Reload(); !s.ok()) return s;
  return a;
}

absl::Status TokenFileAuthenticator::Reload() {
  absl::StatusOr<std::string> text = ReadWholeFile(change_.path());
  if (!text.ok()) return text.status();
  absl::StatusOr<TokenTable> table = ParseTokenFile(*text);
  if (!table.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", change_.path(), ": ", table.status().message()));
  }
  absl::MutexLock lock(&mu_);
  tokens_ = *std::move(table);
  return absl::OkStatus();
}

absl::StatusOr<Principal> TokenFileAuthenticator::Authenticate(absl::string_view token) {
  if (change_.Changed()) {
    if (absl::Status s = Reload(); !s.ok()) {
      LogError("auth", "token file not reloaded; the previous tokens stay", {{"error", s}});
      MetricsRegistry::Default()
          .GetCounter("clusterd_auth_reload_errors_total",
                      "Token-file or policy reloads that failed (the previous content stays).",
                      {{"file", "token"}})
          .Increment();
    } else {
      LogInfo("auth", "token file reloaded", {{"path", change_.path()}});
    }
  }
  absl::MutexLock lock(&mu_);
  auto it = tokens_.find(token);
  if (it == tokens_.end()) return absl::UnauthenticatedError("unknown bearer token");
  if (it->second.expires.has_value() && clock_.Now() >= *it->second.expires) {
    return absl::UnauthenticatedError(absl::StrCat(
        "bearer token of ", it->second.user, " expired at ",
        absl::FormatTime(absl::RFC3339_sec, *it->second.expires, absl::UTCTimeZone())));
  }
  return PrincipalOf(it->second);
}

}  // namespace clusterd::auth
