#include "http_flags.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clusterd::app {

void HttpFlags::Register(CLI::App& app) {
  server::HttpTransport::Limits& l = options.limits;
  app.add_option("--http-max-connections", l.max_connections,
                 "HTTP: open connections in total; more are closed at accept (counted in "
                 "clusterd_http_refused_total{reason=\"connections_total\"})")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-max-connections-per-client", l.max_connections_per_client,
                 "HTTP: open connections per client IP address; more are closed at accept")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-idle-timeout", idle_timeout_s,
                 "HTTP: seconds a connection may pass without a byte in or out before it is "
                 "closed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-max-header-bytes", l.max_header_bytes,
                 "HTTP: request line and headers larger than this are refused with 431")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--http-max-body-bytes", l.max_body_bytes,
                 "HTTP: a request body larger than this is refused with 413 before it is read")
      ->check(CLI::Range(size_t{0}, size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--http-threads", l.threads,
                 "HTTP: event-loop threads (each serves many connections)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_flag("--http-store-mirror", options.store_mirror,
               "Serve the raw store mirror /api/v1/... (off by default; pod env is never "
               "served, ConfigMaps only from clusterd's own namespaces)");
  app.add_option("--http-configmap-namespaces", configmap_namespaces,
                 "With --http-store-mirror: more namespaces (comma-separated) whose ConfigMaps "
                 "the mirror serves, besides kube-system, mindx-dl and cluster-system");
  app.add_option("--http-open-paths", open_paths,
                 "HTTP: paths (comma-separated) served without a credential; every other path "
                 "needs the `read` permission of --auth-policy. /healthz and /readyz are always "
                 "open; drop /metrics to make Prometheus present a token")
      ->capture_default_str();
  app.add_flag("--http-open-root", open_root,
               "HTTP: GET / (the dashboard page, static: its data needs `read`) answers without a "
               "credential, as probes written for the original ClusterD's health endpoint expect");
  app.add_option("--http-tls-cert", options.tls.cert,
                 "HTTP: serve HTTPS with this PEM certificate (chain); re-read when it changes. "
                 "Without it the endpoint is plaintext (logged at start)");
  app.add_option("--http-tls-key", options.tls.key, "HTTP: the PEM private key of --http-tls-cert");
  app.add_option("--http-client-ca", options.tls.client_ca,
                 "HTTPS: ask clients for a certificate and accept those this PEM CA signed "
                 "(the subject is passed to authorisation); re-read when it changes");
}

absl::Status HttpFlags::Apply(const std::string& listen) {
  options.listen = listen;
  options.limits.idle_timeout = absl::Seconds(idle_timeout_s);
  for (absl::string_view ns : absl::StrSplit(configmap_namespaces, ',', absl::SkipWhitespace())) {
    options.configmap_namespaces.insert(std::string(ns));
  }
  options.open_paths = {"/healthz", "/readyz"};
  if (open_root) options.open_paths.insert("/");
  for (absl::string_view path : absl::StrSplit(open_paths, ',', absl::SkipWhitespace())) {
    path = absl::StripAsciiWhitespace(path);
    if (!absl::StartsWith(path, "/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-open-paths: \"", path, "\" is not a path (it starts with /)"));
    }
    options.open_paths.insert(std::string(path));
  }
  if (options.tls.cert.empty() != options.tls.key.empty()) {
    return absl::InvalidArgumentError("--http-tls-cert and --http-tls-key go together");
  }
  if (!options.tls.client_ca.empty() && options.tls.cert.empty()) {
    return absl::InvalidArgumentError("--http-client-ca needs --http-tls-cert and --http-tls-key");
  }
  return absl::OkStatus();
}

}  // namespace clusterd::app
