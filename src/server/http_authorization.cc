#include "server/http_authorization.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/permissions.h"

namespace clusterd::server {
namespace {

// The port of "ip:port" / "[ip]:port" ("" when there is none).
absl::string_view PortOf(absl::string_view peer) {
  const size_t colon = peer.rfind(':');
  if (colon == absl::string_view::npos || absl::EndsWith(peer, "]")) return "";
  absl::string_view port = peer.substr(colon + 1);
  return port.find(']') == absl::string_view::npos ? port : "";
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The RDNs of a subject, split at commas (and '+') that are not escaped.
std::vector<std::string> Attributes(absl::string_view dn) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < dn.size(); ++i) {
    const char c = dn[i];
    if (c == '\\' && i + 1 < dn.size()) {
      out.back().push_back(c);
      out.back().push_back(dn[++i]);
    } else if (c == ',' || c == '+') {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

std::string Unescape(absl::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\' || i + 1 >= value.size()) {
      out.push_back(value[i]);
      continue;
    }
    const int hi = HexDigit(value[i + 1]);
    const int lo = i + 2 < value.size() ? HexDigit(value[i + 2]) : -1;
    if (hi >= 0 && lo >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(value[++i]);
    }
  }
  return out;
}

}  // namespace

std::string CommonNameOf(absl::string_view subject_dn) {
  for (const std::string& attribute : Attributes(subject_dn)) {
    absl::string_view a = absl::StripAsciiWhitespace(attribute);
    const size_t eq = a.find('=');
    if (eq == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(a.substr(0, eq)), "CN")) {
      return Unescape(absl::StripAsciiWhitespace(a.substr(eq + 1)));
    }
  }
  return "";
}

auth::Caller AuthCallerOf(const HttpCaller& caller) {
  auth::Caller out;
  absl::string_view port = PortOf(caller.peer);
  if (caller.peer_ip.empty()) {
    out.peer = caller.peer;
  } else if (absl::StrContains(caller.peer_ip, ':')) {
    out.peer = absl::StrCat("ipv6:[", caller.peer_ip, "]:", port);
  } else {
    out.peer = absl::StrCat("ipv4:", caller.peer_ip, ":", port);
  }
  out.authorization = caller.authorization;
  out.cert_common_name = CommonNameOf(caller.client_cert_subject);
  return out;
}

std::string HttpRouteLabel(absl::string_view path) {
  // The routes HttpServer serves; anything else (a scan of random paths) is one label.
  static constexpr absl::string_view kApiResources[] = {
      "jobs", "faults", "recovery", "slownode", "netfault", "nodes", "events", "policy",
      "configuration", "goodput", "offenders", "episodes"};
  static constexpr absl::string_view kTopLevel[] = {"metrics", "version", "dashboard"};
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  if (parts.empty()) return "HTTP /";
  if (parts.size() >= 4 && parts[0] == "api" && parts[1] == "clusterd" && parts[2] == "v1") {
    for (absl::string_view r : kApiResources) {
      if (parts[3] == r) return absl::StrCat("HTTP /api/clusterd/v1/", r);
    }
  }
  if (parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1") return "HTTP /api/v1";
  if (parts.size() == 1) {
    for (absl::string_view t : kTopLevel) {
      if (parts[0] == t) return absl::StrCat("HTTP /", t);
    }
  }
  return "HTTP other";
}

std::function<absl::Status(const HttpCaller&)> HttpReadAuthorizer(auth::Authorizer* authorizer) {
  return [authorizer](const HttpCaller& caller) {
    return authorizer->Permit(HttpRouteLabel(caller.path), AuthCallerOf(caller), auth::kPermRead);
  };
}

}  // namespace clusterd::server
