#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace clusterd::store::kube {

// Where the API server is and how to authenticate to it: what client-go calls a rest.Config,
// reduced to what clusterd supports (bearer tokens and client certificates over HTTPS).
struct KubeConfig {
  std::string server;  // https://host:port, no trailing slash
  // Trust: a CA file or the PEM itself (kubeconfig certificate-authority-data).
  std::string ca_file;
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  // Bearer token, given directly or read from a file (re-read periodically, since projected
  // service-account tokens rotate).
  std::string token;
  std::string token_file;
  // Client certificate and key, as files or PEM.
  std::string client_cert_file;
  std::string client_cert_pem;
  std::string client_key_file;
  std::string client_key_pem;
  // The default namespace (in-cluster: the pod's; kubeconfig: the context's).
  std::string ns;
  // Where this came from, for messages: "in-cluster" or "kubeconfig PATH (context NAME)".
  std::string source;
};

// In-cluster credentials: KUBERNETES_SERVICE_HOST/PORT and the service-account files under
// `root` (token, ca.crt, namespace). `getenv` is injectable for tests.
inline constexpr std::string_view kServiceAccountRoot =
    "/var/run/secrets/kubernetes.io/serviceaccount";
absl::StatusOr<KubeConfig> LoadInClusterConfig(
    std::string_view root = kServiceAccountRoot,
    const std::function<const char*(const char*)>& getenv = nullptr);

// A kubeconfig file: the named context, or current-context when `context` is empty. Relative
// file paths are relative to the kubeconfig's directory, as kubectl reads them. Supports
// token, tokenFile, client-certificate(-data), client-key(-data), certificate-authority(-data)
// and insecure-skip-tls-verify; exec and auth-provider plugins are rejected with a message.
absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, std::string_view context = "");

}  // namespace clusterd::store::kube
