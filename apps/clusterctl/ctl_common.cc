#include "ctl_common.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"
#include "output.h"

namespace clusterctl {

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return kExitUsage;
}

std::unique_ptr<httplib::Client> HttpClient(const Globals& g) {
  std::string base =
      g.http_addr.find("://") == std::string::npos ? "http://" + g.http_addr : g.http_addr;
  auto cli = std::make_unique<httplib::Client>(base);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000));
  cli->set_connection_timeout(timeout);
  cli->set_read_timeout(timeout);
  return cli;
}

void SetDeadline(const Globals& g, grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000)));
}

int Print(const Globals& g, const nlohmann::ordered_json& value,
          const std::vector<std::string>& headers,
          const std::vector<std::vector<std::string>>& rows) {
  absl::StatusOr<Format> format = ParseFormat(g.output);
  if (!format.ok()) return Usage(std::string(format.status().message()));
  switch (*format) {
    case Format::kJson:
      std::cout << value.dump(2) << "\n";
      break;
    case Format::kYaml:
      std::cout << ToYaml(value);
      break;
    case Format::kTable:
      std::cout << RenderTable(headers, rows);
      break;
  }
  return kExitOk;
}

int FetchJson(const Globals& g, const std::string& path, nlohmann::ordered_json* body) {
  auto http = HttpClient(g);
  auto res = http->Get(path);
  if (!res) {
    std::fprintf(stderr, "error: cannot reach clusterd at %s: %s\n", g.http_addr.c_str(),
                 httplib::to_string(res.error()).c_str());
    return kExitUnreachable;
  }
  *body = nlohmann::ordered_json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    std::string message = body->is_object() ? body->value("message", res->body) : res->body;
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return kExitError;
  }
  if (body->is_discarded()) {
    std::fprintf(stderr, "error: clusterd sent a malformed answer\n");
    return kExitError;
  }
  return kExitOk;
}

std::string Escape(const std::string& text) { return httplib::detail::encode_query_param(text); }

}  // namespace clusterctl
