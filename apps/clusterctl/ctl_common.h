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
class Channel;
class ClientContext;
class Status;
}  // namespace grpc

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
  // TLS (docs/security.md): the CA that signed clusterd's certificate, and this client's
  // certificate and key for mTLS. Any of them makes gRPC use TLS and HTTP default to https.
  std::string cacert, cert, key;              // file paths
  std::string cacert_pem, cert_pem, key_pem;  // their contents (read by LoadCredentials)
  bool tls() const { return !cacert.empty() || !cert.empty(); }
  // -o table or -o wide: a table for people (wide adds columns where a command has more).
  bool table() const { return output == "table" || output == "wide"; }
  bool wide() const { return output == "wide"; }
};

// Fills g.token from --token, --token-file or the config file (`token: T` or `token-file: F`
// lines; default ~/.clusterd/config, which may be absent), and the TLS files from --cacert,
// --cert, --key or the config's `certificate-authority:`, `client-certificate:`, `client-key:`
// (kubeconfig's names), then reads them. Errors name the file.
absl::Status LoadCredentials(Globals& g, const std::string& token_file,
                             const std::string& config_file, bool config_given);

std::string EnvOr(const char* name, const char* fallback);
// Prints "error: <message>" and returns kExitUsage.
int Usage(const std::string& message);
std::unique_ptr<httplib::Client> HttpClient(const Globals& g);
// The gRPC channel to g.grpc_addr: TLS when g.tls(), else plaintext.
std::shared_ptr<grpc::Channel> GrpcChannel(const Globals& g);
// Prints why a gRPC call failed and returns its exit code: unreachable (3) for UNAVAILABLE and
// DEADLINE_EXCEEDED; for UNAUTHENTICATED / PERMISSION_DENIED "not authenticated / not
// permitted by clusterd" with the server's reason and how to pass a credential (1); else the
// server's message (1).
int GrpcFailure(const Globals& g, const grpc::Status& status);
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
