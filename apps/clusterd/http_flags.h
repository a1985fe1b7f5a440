#pragma once

// clusterd's --http-* flags: the HTTP endpoint's transport bars, TLS and the store mirror
// (server/http_server.h). Shared by the serving endpoint and the standby one of
// --leader-elect, so a waiting replica is as hard to starve as a leading one.
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "server/http_server.h"

namespace clusterd::app {

struct HttpFlags {
  double idle_timeout_s = 15;
  std::string configmap_namespaces;  // comma-separated, added to the defaults
  // Paths answered without a credential (the probes always are); the rest need `read`.
  std::string open_paths = "/healthz,/readyz,/metrics";
  bool open_root = false;  // --http-open-root: "/" joins the open paths
  server::HttpServer::Options options;

  void Register(CLI::App& app);
  // The options with the flags applied (validated); `listen` filled in.
  absl::Status Apply(const std::string& listen);
};

}  // namespace clusterd::app
