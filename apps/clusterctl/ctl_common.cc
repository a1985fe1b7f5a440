#include "ctl_common.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

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
  if (!g.token.empty()) cli->set_bearer_token_auth(g.token);
  return cli;
}

void SetDeadline(const Globals& g, grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000)));
  if (!g.token.empty()) ctx.AddMetadata("authorization", "Bearer " + g.token);
}

namespace {

absl::StatusOr<std::string> FirstLine(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) return absl::InvalidArgumentError(path + " holds no token");
  return line;
}

}  // namespace

absl::Status LoadCredentials(Globals& g, const std::string& token_file,
                             const std::string& config_file, bool config_given) {
  if (!g.token.empty()) return absl::OkStatus();
  if (!token_file.empty()) {
    absl::StatusOr<std::string> t = FirstLine(token_file);
    if (!t.ok()) return t.status();
    g.token = *t;
    return absl::OkStatus();
  }
  std::ifstream in(config_file);
  if (!in) {
    return config_given ? absl::NotFoundError("cannot read --config " + config_file)
                        : absl::OkStatus();
  }
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&](const std::string& key) -> std::optional<std::string> {
      if (line.rfind(key + ":", 0) != 0) return std::nullopt;
      std::string v = line.substr(key.size() + 1);
      v.erase(0, v.find_first_not_of(" \t\"'"));
      while (!v.empty() &&
             (v.back() == ' ' || v.back() == '"' || v.back() == '\'' || v.back() == '\r')) {
        v.pop_back();
      }
      return v;
    };
    if (auto t = value("token"); t && !t->empty()) g.token = *t;
    if (auto f = value("token-file"); f && !f->empty() && g.token.empty()) {
      absl::StatusOr<std::string> t = FirstLine(*f);
      if (!t.ok()) return t.status();
      g.token = *t;
    }
  }
  return absl::OkStatus();
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
  if (res->status == 401 || res->status == 403) {
    std::string message = body->is_object() ? body->value("message", res->body) : res->body;
    std::fprintf(stderr,
                 "error: %s by clusterd (HTTP %d): %s; pass --token, --token-file or "
                 "a token in ~/.clusterd/config\n",
                 res->status == 401 ? "not authenticated" : "not permitted", res->status,
                 message.c_str());
    return kExitError;
  }
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
