#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "auth/authorizer.h"
#include "server/http_transport.h"

namespace clusterd::server {

// What the authorizer needs of an HTTP request: the peer in gRPC's form ("ipv4:1.2.3.4:80",
// "ipv6:[::1]:80", so that one policy reads both transports alike), the Authorization header,
// and the common name of a verified client certificate.
auth::Caller AuthCallerOf(const HttpCaller& caller);

// The CN attribute of an RFC 4514 subject ("CN=ops,O=example" -> "ops"); "" when it has none.
// Escaped characters (\, \+ \2C) are unescaped.
std::string CommonNameOf(absl::string_view subject_dn);

// The `method` label of clusterd_authz_denied_total for an HTTP path: the route, not the path,
// so that job ids and names do not become labels ("HTTP /api/clusterd/v1/jobs",
// "HTTP /api/v1", "HTTP /metrics", "HTTP /" for the dashboard).
std::string HttpRouteLabel(absl::string_view path);

// The HttpServer authorize hook: every path outside the open ones needs the `read` permission
// (every HTTP route only reads). `authorizer` outlives the server.
std::function<absl::Status(const HttpCaller&)> HttpReadAuthorizer(auth::Authorizer* authorizer);

}  // namespace clusterd::server
