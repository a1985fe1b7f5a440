#pragma once

#include "absl/status/status.h"

// What every clusterctl command shares: the global flags, exit codes, the HTTP and gRPC
// connections to clusterd, and printing in the chosen output format.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace httplib {
class Client;
}
namespace grpc {
class ClientContext;
}

namespace clusterctl {

// Exit codes (documented in --help).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // the server answered with an error (not found, refused, ...)
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

struct Globals {
  std::string grpc_addr;
  std::string http_addr;
  std::string output = "table";
  double timeout_s = 5;
  // Bearer token sent on every call (gRPC `authorization` metadata, HTTP Authorization header):
  // --token, or the first line of --token-file, or token/token-file of --config.
  std::string token;
};

// Fills g.token from --token, --token-file or the config file (`token: T` or `token-file: F`
// lines; default ~/.clusterd/config, which may be absent). Errors name the file.
absl::Status LoadCredentials(Globals& g, const std::string& token_file,
                             const std::string& config_file, bool config_given);

std::string EnvOr(const char* name, const char* fallback);
// Prints "error: <message>" and returns kExitUsage.
int Usage(const std::string& message);
std::unique_ptr<httplib::Client> HttpClient(const Globals& g);
// Sets the --timeout deadline on a gRPC call, and the bearer token when there is one.
void SetDeadline(const Globals& g, grpc::ClientContext& ctx);
// Prints `value` as JSON or YAML, or the table `headers` x `rows`.
int Print(const Globals& g, const nlohmann::ordered_json& value,
          const std::vector<std::string>& headers,
          const std::vector<std::vector<std::string>>& rows);
// GET `path` on clusterd's HTTP port; prints the error and returns its exit code on failure.
int FetchJson(const Globals& g, const std::string& path, nlohmann::ordered_json* body);
// Percent-encodes a query parameter or path segment.
std::string Escape(const std::string& text);

}  // namespace clusterctl
