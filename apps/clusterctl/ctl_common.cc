#include "ctl_common.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <tuple>

#include "absl/status/statusor.h"
#include "client/channel.h"
#include "client/json_path.h"
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
  std::string base = g.http_addr.find("://") == std::string::npos
                         ? (g.tls() ? "https://" : "http://") + g.http_addr
                         : g.http_addr;
  auto cli = g.cert.empty() ? std::make_unique<httplib::Client>(base)
                            : std::make_unique<httplib::Client>(base, g.cert, g.key);
  if (!g.cacert.empty()) cli->set_ca_cert_path(g.cacert);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000));
  cli->set_connection_timeout(timeout);
  cli->set_read_timeout(timeout);
  if (!g.token.empty()) cli->set_bearer_token_auth(g.token);
  return cli;
}

std::shared_ptr<grpc::Channel> GrpcChannel(const Globals& g) {
  if (!g.tls()) return clusterd::client::MakeChannel(g.grpc_addr);
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = g.cacert_pem;  // "": the system's roots
  tls.pem_cert_chain = g.cert_pem;
  tls.pem_private_key = g.key_pem;
  return clusterd::client::MakeChannel(g.grpc_addr, grpc::SslCredentials(tls));
}

int GrpcFailure(const Globals& g, const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::fprintf(stderr, "error: cannot reach clusterd at %s: %s\n", g.grpc_addr.c_str(),
                   status.error_message().c_str());
      return kExitUnreachable;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      std::fprintf(stderr,
                   "error: %s by clusterd: %s; pass --token, --token-file, --cert/--key or "
                   "a credential in ~/.clusterd/config\n",
                   status.error_code() == grpc::StatusCode::UNAUTHENTICATED ? "not authenticated"
                                                                            : "not permitted",
                   status.error_message().c_str());
      return kExitError;
    default:
      std::fprintf(stderr, "error: %s\n", status.error_message().c_str());
      return kExitError;
  }
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

absl::StatusOr<std::string> WholeFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(flag + ": cannot read " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(flag + ": " + path + " is not a PEM file");
  }
  return text;
}

// Reads the TLS files named in `g` into it.
absl::Status LoadTlsFiles(Globals& g) {
  if (g.cert.empty() != g.key.empty()) {
    return absl::InvalidArgumentError("--cert and --key go together");
  }
  for (auto [flag, path, pem] :
       {std::tuple{"--cacert", &g.cacert, &g.cacert_pem},
        std::tuple{"--cert", &g.cert, &g.cert_pem}, std::tuple{"--key", &g.key, &g.key_pem}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> text = WholeFile(flag, *path);
    if (!text.ok()) return text.status();
    *pem = *std::move(text);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadCredentials(Globals& g, const std::string& token_file,
                             const std::string& config_file, bool config_given) {
  if (g.token.empty() && !token_file.empty()) {
    absl::StatusOr<std::string> t = FirstLine(token_file);
    if (!t.ok()) return t.status();
    g.token = *t;
  }
  std::ifstream in(config_file);
  if (!in && config_given) return absl::NotFoundError("cannot read --config " + config_file);
  // The config fills only what the flags left empty.
  const bool token_given = !g.token.empty();
  const bool tls_given = g.tls() || !g.key.empty();
  std::string line;
  while (in && std::getline(in, line)) {
    auto value = [&](const std::string& key) -> std::optional<std::string> {
      if (line.rfind(key + ":", 0) != 0) return std::nullopt;
      std::string v = line.substr(key.size() + 1);
      v.erase(0, v.find_first_not_of(" \t\"'"));
      while (!v.empty() &&
             (v.back() == ' ' || v.back() == '"' || v.back() == '\'' || v.back() == '\r')) {
        v.pop_back();
      }
      if (v.empty()) return std::nullopt;
      return v;
    };
    if (!token_given) {
      if (auto t = value("token")) g.token = *t;
      if (auto f = value("token-file"); f && g.token.empty()) {
        absl::StatusOr<std::string> t = FirstLine(*f);
        if (!t.ok()) return t.status();
        g.token = *t;
      }
    }
    if (!tls_given) {
      if (auto f = value("certificate-authority")) g.cacert = *f;
      if (auto f = value("client-certificate")) g.cert = *f;
      if (auto f = value("client-key")) g.key = *f;
    }
  }
  return LoadTlsFiles(g);
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
    case Format::kName:
      std::cout << RenderNames(value);
      break;
    case Format::kJsonPath: {
      absl::StatusOr<std::string> text =
          clusterd::client::RenderJsonPath(JsonPathTemplate(g.output), value);
      if (!text.ok()) return Usage(std::string(text.status().message()));
      std::cout << *text;
      break;
    }
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
                 "error: %s by clusterd (HTTP %d): %s; pass --token, --token-file, "
                 "--cert/--key or a credential in ~/.clusterd/config\n",
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
