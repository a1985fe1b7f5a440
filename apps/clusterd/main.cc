// clusterd: the cluster brain. Parses flags and assembles the rooms; no logic lives here.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "server/grpc_server.h"
#include "server/http_server.h"
#include "server/service_set.h"
#include "store/object_store.h"

namespace {

std::string DefaultGrpcListen() {
  // In a pod the original binds POD_IP:8899.
  if (const char* pod_ip = std::getenv("POD_IP"); pod_ip != nullptr && *pod_ip != '\0') {
    std::string ip = pod_ip;
    return ip.find(':') != std::string::npos ? absl::StrCat("[", ip, "]:8899")
                                             : absl::StrCat(ip, ":8899");
  }
  return "127.0.0.1:8899";
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "clusterd: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "clusterd: the cluster brain. Serves the Recover, Config, Fault, Job, TrainingDataTrace and\n"
      "PubFault gRPC services on one port, and /healthz, /readyz, /metrics and a read-only\n"
      "/api/v1 view of the object store on an HTTP port."};
  app.set_version_flag("--version", absl::StrCat("clusterd ", CLUSTERD_VERSION));

  std::string store_spec = "dir:./state";
  std::string grpc_listen = DefaultGrpcListen();
  std::string http_listen = "127.0.0.1:11251";
  std::string log_level = "info";
  std::string log_format = "text";
  std::string listen_info_file;
  double shutdown_grace_s = 5;

  app.add_option("--store", store_spec,
                 "Object store: 'memory' (nothing kept), or 'dir:PATH' (embedded; objects are JSON "
                 "files under PATH, shared with npu-agent and other processes)")
      ->capture_default_str();
  app.add_option("--grpc-listen", grpc_listen,
                 "host:port for all six gRPC services (port 0 picks a free port; default "
                 "$POD_IP:8899 when POD_IP is set)")
      ->capture_default_str();
  app.add_option("--http-listen", http_listen,
                 "host:port for /healthz, /readyz, /metrics and /api/v1 (port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--listen-info-file", listen_info_file,
                 "Once serving, write {\"grpc\":\"host:port\",\"http\":\"host:port\"} to this file "
                 "(for scripts and tests that use port 0)");
  app.add_option("--shutdown-grace", shutdown_grace_s,
                 "Seconds to let calls in flight finish on SIGTERM/SIGINT")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  if (absl::Status s = clusterd::ConfigureLogging(
          log_level, log_format == "json" ? clusterd::LogFormat::kJson : clusterd::LogFormat::kText);
      !s.ok()) {
    return Fail(s);
  }

  // Block the stop signals before any thread starts, so only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<std::unique_ptr<clusterd::store::ObjectStore>> store =
      clusterd::store::OpenStore(store_spec);
  if (!store.ok()) return Fail(store.status());

  clusterd::server::ServiceSet services(clusterd::Clock::Real());
  absl::StatusOr<std::unique_ptr<clusterd::server::GrpcServer>> grpc =
      clusterd::server::GrpcServer::Start(grpc_listen, services.All());
  if (!grpc.ok()) return Fail(grpc.status());

  clusterd::server::HttpServer::Options http_options;
  http_options.listen = http_listen;
  http_options.store = store->get();
  http_options.version = CLUSTERD_VERSION;
  absl::StatusOr<std::unique_ptr<clusterd::server::HttpServer>> http =
      clusterd::server::HttpServer::Start(std::move(http_options));
  if (!http.ok()) return Fail(http.status());

  clusterd::MetricsRegistry::Default()
      .GetGauge("clusterd_build_info", "Always 1; labels carry the version.",
                {{"version", CLUSTERD_VERSION}})
      .Set(1);

  if (!listen_info_file.empty()) {
    nlohmann::ordered_json info = {{"grpc", (*grpc)->address()},
                                   {"http", (*http)->address()},
                                   {"pid", static_cast<int64_t>(getpid())}};
    std::string tmp = listen_info_file + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << info.dump() << "\n";
      if (!out) return Fail(absl::UnavailableError("cannot write " + listen_info_file));
    }
    if (std::rename(tmp.c_str(), listen_info_file.c_str()) != 0) {
      return Fail(absl::UnavailableError("cannot write " + listen_info_file));
    }
  }
  clusterd::LogInfo("clusterd", "ready",
                    {{"store", store_spec}, {"grpc", (*grpc)->address()}, {"http", (*http)->address()}});

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  clusterd::LogInfo("clusterd", "stopping", {{"signal", strsignal(signal_number)}});
  (*grpc)->Shutdown(absl::Seconds(shutdown_grace_s));
  (*http)->Stop();
  clusterd::LogInfo("clusterd", "stopped");
  return 0;
}
