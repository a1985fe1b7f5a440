// clusterd: the cluster brain. Parses flags and assembles the rooms; no logic lives here.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator.h"
#include "common/cli_parse.h"
#include "common/clock.h"
#include "common/data_dir.h"
#include "common/lock_order_checks.h"
#include "common/log.h"
#include "common/log_file.h"
#include "common/metrics.h"
#include "http_flags.h"
#include "model/device_naming.h"
#include "server/auth_setup.h"
#include "server/cluster_brain.h"
#include "server/dashboard.h"
#include "server/grpc_server.h"
#include "server/http_authorization.h"
#include "server/http_server.h"
#include "server/original_flags.h"
#include "server/service_set.h"
#include "store/dir/dir_store.h"
#include "store/dir/instance_lock.h"
#include "store/lease_lock.h"
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

// Each gRPC connection holds two descriptors (gRPC's and the listener's watch, grpc_listener.h):
// the soft limit (often 1024) would run out before the 1024-connection limit does.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "clusterd: %s\n", std::string(status.message()).c_str());
  return 1;
}

// --leader-elect: blocks until this replica holds the lease, answering the probes meanwhile
// (live, not ready) so that the kubelet leaves a waiting replica alone. Returns the running
// elector, or null when a stop signal came first. Losing the lease later ends the process:
// the replica restarts as a follower and rebuilds from the store (docs/deploy.md).
absl::StatusOr<std::unique_ptr<clusterd::store::LeaderElector>> AwaitLeadership(
    clusterd::store::ObjectStore& store, const std::string& lease,
    const clusterd::server::HttpServer::Options& http_base, const sigset_t& stop_signals) {
  clusterd::store::LeaderElector::Options options;
  options.store = &store;
  if (size_t slash = lease.find('/'); slash != std::string::npos) {
    options.ns = lease.substr(0, slash);
    options.name = lease.substr(slash + 1);
  }
  const char* pod = std::getenv("POD_NAME");
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  options.identity =
      pod != nullptr && *pod != '\0' ? std::string(pod) : absl::StrCat(host, "-", getpid());
  options.on_stopped_leading = [] {
    clusterd::LogError("clusterd", "lost the leader lease; exiting to restart as a follower");
    _exit(1);
  };
  auto elector = std::make_unique<clusterd::store::LeaderElector>(options);
  elector->Start();
  clusterd::server::HttpServer::Options standby = http_base;  // listen, bars, TLS
  standby.readiness = [] { return absl::UnavailableError("standby: another replica leads"); };
  standby.version = CLUSTERD_VERSION;
  auto http = clusterd::server::HttpServer::Start(std::move(standby));
  if (!http.ok()) return http.status();
  clusterd::LogInfo("clusterd", "waiting for the leader lease",
                    {{"lease", lease}, {"identity", options.identity}});
  const timespec poll = {0, 0};
  while (!elector->WaitForLeadership(absl::Milliseconds(500))) {
    if (sigtimedwait(&stop_signals, nullptr, &poll) > 0) {
      (*http)->Stop();
      elector->Stop();
      return nullptr;
    }
  }
  (*http)->Stop();
  return elector;
}

// One brain per dir store. Without --leader-elect, clusterd claims the directory alone: a second
// one on it would act on the same objects beside the first. With --leader-elect the Lease
// decides who serves, and the replicas share the claim; that still keeps out a clusterd that
// would serve without asking the Lease. Other stores have no claim (kube: the Lease).
absl::StatusOr<std::unique_ptr<clusterd::store::InstanceLock>> ClaimStore(
    clusterd::store::ObjectStore& store, bool leader_elect) {
  auto* dir = dynamic_cast<clusterd::store::DirStore*>(&store);
  if (dir == nullptr) return nullptr;
  using clusterd::store::InstanceLock;
  absl::StatusOr<std::unique_ptr<InstanceLock>> lock = InstanceLock::Acquire(
      absl::StrCat(dir->root(), "/", std::string(clusterd::store::DirStore::kClusterdLockFile)),
      leader_elect ? InstanceLock::Mode::kShared : InstanceLock::Mode::kExclusive);
  if (lock.ok() || !absl::IsFailedPrecondition(lock.status())) return lock;
  return absl::FailedPreconditionError(absl::StrCat(
      "dir store ", dir->root(), " is in use by another clusterd: ", lock.status().message(),
      leader_elect ? "; it runs without --leader-elect, so no replica can join it"
                   : "; run one clusterd per store, or every replica with --leader-elect"));
}

}  // namespace

#ifndef CLUSTERD_DEFAULT_DATA_DIR
#define CLUSTERD_DEFAULT_DATA_DIR "/usr/share/clusterd"
#endif

int main(int argc, char** argv) {
  // Block the stop signals before any thread starts (the run log's flusher is the first, in
  // ConfigureLogging), so that only the sigwait below sees them: a stop signal that reached a
  // thread without the block ended the process at once, without its stop and with the last
  // second of the run log unwritten.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  clusterd::SkipRuntimeLockOrderChecks();
  CLI::App app{
      "clusterd: the cluster brain. Serves the Recover, Config, Fault, Job, TrainingDataTrace and\n"
      "PubFault gRPC services on one port, and /healthz, /readyz, /metrics and a read-only\n"
      "/api/v1 view of the object store on an HTTP port."};
  app.set_version_flag("--version", absl::StrCat("clusterd ", CLUSTERD_VERSION));

  std::string store_spec = "dir:./state";
  clusterd::store::StoreOptions store_options;
  bool leader_elect = false;
  std::string leader_lease = "mindx-dl/clusterd";
  std::string grpc_listen = DefaultGrpcListen();
  std::string http_listen = "127.0.0.1:11251";
  clusterd::LogOptions log_options;
  std::string log_format = "text";
  size_t log_max_size_mib = 20;
  std::string listen_info_file;
  double shutdown_grace_s = 5;
  clusterd::server::ClusterBrain::Options brain_options;
  brain_options.fault_config.data_dir = clusterd::DefaultDataDir();

  app.add_option("--store", store_spec,
                 "Object store: 'memory' (nothing kept), 'dir:PATH' (embedded; objects are JSON "
                 "files under PATH, shared with npu-agent and other processes), or 'kube' (the "
                 "Kubernetes API server; in-cluster credentials unless --kubeconfig)")
      ->capture_default_str();
  app.add_option("--kubeconfig", store_options.kubeconfig,
                 "With --store kube: a kubeconfig file (token or client certificate, CA, "
                 "current-context) instead of the pod's service account");
  app.add_flag("--leader-elect", leader_elect,
               "Run as one of several replicas: serve only while holding the Lease "
               "--leader-elect-lease (coordination.k8s.io/v1, in the store)");
  app.add_option("--leader-elect-lease", leader_lease, "NAMESPACE/NAME of the leader Lease")
      ->capture_default_str();
  app.add_option("--grpc-listen", grpc_listen,
                 "host:port for all six gRPC services (port 0 picks a free port; default "
                 "$POD_IP:8899 when POD_IP is set)")
      ->capture_default_str();
  // The gRPC transport (issue 17): plaintext for the original clients, TLS beside it or
  // instead of it, and the original's connection limits (docs/security.md "gRPC transport").
  clusterd::server::GrpcServerOptions grpc_options;
  bool grpc_plaintext = true;
  clusterd::server::GrpcServerOptions::Tls grpc_tls;
  app.add_option("--grpc-plaintext", grpc_plaintext,
                 "Serve plaintext gRPC on --grpc-listen (the original TaskD/MindIO clients speak "
                 "only plaintext); false serves TLS only and needs --grpc-tls-listen")
      ->capture_default_str();
  app.add_option("--grpc-tls-listen", grpc_tls.listen,
                 "host:port of a TLS gRPC port (same services) beside the plaintext one; needs "
                 "--grpc-tls-cert and --grpc-tls-key");
  app.add_option("--grpc-tls-cert", grpc_tls.cert_file,
                 "PEM certificate chain of the TLS port; re-read when the file changes");
  app.add_option("--grpc-tls-key", grpc_tls.key_file,
                 "PEM private key of the TLS port; re-read when the file changes");
  app.add_option("--grpc-client-ca", grpc_tls.client_ca_file,
                 "PEM CA bundle: the TLS port then requires a client certificate it signed (mTLS)");
  app.add_option("--grpc-tls-refresh", grpc_tls.refresh_interval_s,
                 "Seconds between checks of the TLS files for a rotated certificate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--grpc-max-connections", grpc_options.max_connections,
                 "Concurrent gRPC connections in total; more are closed at once (the original: "
                 "1024)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--grpc-max-connections-per-client", grpc_options.max_connections_per_client,
                 "Concurrent gRPC connections per client IP; more are closed at once (the "
                 "original: 512)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  clusterd::server::UnaryGate::Limits gate_limits;
  app.add_option("--grpc-qps", gate_limits.shared_rate,
                 "Unary calls a second, every method but HealthCheck together (the original: "
                 "1000); more are refused with UNKNOWN \"qps exceeded\"")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--grpc-qps-burst", gate_limits.shared_burst,
                 "Unary calls --grpc-qps admits at once after a quiet spell (the original: 1000)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-listen", http_listen,
                 "host:port for /healthz, /readyz, /metrics, /api/clusterd/v1 and the dashboard "
                 "(port 0 picks a free port)")
      ->capture_default_str();
  clusterd::app::HttpFlags http_flags;
  http_flags.Register(app);
  app.add_option("--log-level", log_options.level,
                 "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--log-file", log_options.file,
                 "Write the log to this file instead of stderr, rotated by size (the original's "
                 "-logFile; it used /var/log/mindx-dl/clusterd/clusterd.log)");
  app.add_option("--log-max-size", log_max_size_mib,
                 "With --log-file: MiB per file before rotating")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--log-max-backups", log_options.max_backups,
                 "With --log-file: rotated files kept (the original's -maxBackups)")
      ->check(CLI::Range(1, 180))
      ->capture_default_str();
  app.add_option(
         "--log-max-age", log_options.max_age_days,
         "With --log-file: days a rotated file is kept, 0 = no limit (the original's -maxAge)")
      ->check(CLI::Range(0, 700))
      ->capture_default_str();
  app.add_option("--listen-info-file", listen_info_file,
                 "Once serving, write {\"grpc\":\"host:port\",\"http\":\"host:port\"} to this file "
                 "(for scripts and tests that use port 0)");
  app.add_option("--shutdown-grace", shutdown_grace_s,
                 "Seconds to let calls in flight finish on SIGTERM/SIGINT")
      ->capture_default_str();

  app.add_option(
         "--data-dir", brain_options.fault_config.data_dir,
         "Directory of the fault centre's shipped configuration: "
         "relationFaultCustomization.json, faultDuration.json, publicFaultConfiguration.json "
         "(each must exist and parse, or clusterd does not start; re-read when one changes)")
      ->capture_default_str();
  std::string device_name_file;
  app.add_option("--device-name-file", device_name_file,
                 "deviceNameCustomization.json: the public resource and NPU names of customised "
                 "nodes (the npu-agents' --device-name-file); default: that file in --data-dir "
                 "when it exists, else the fixed names. A broken file stops clusterd");
  app.add_option("--public-fault-config", brain_options.fault_config.public_fault_config_path,
                 "A user public-fault configuration (publicCustomization.json) replacing the "
                 "shipped senders and levels; optional (while it is missing or invalid the "
                 "shipped defaults apply and /readyz says so); re-read within 2 s of a change");

  app.add_option("--max-nodes", brain_options.faults.max_device_records,
                 "Fault centre: nodes whose device-info it holds at most (a memory bound, about "
                 "25 KiB per node); device-info of further nodes is refused, counted and named "
                 "on /readyz (the original: about 16000)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-recovery-jobs", brain_options.recovery.max_jobs,
                 "Recover service: jobs served at once (Register answers 500 beyond it, as the "
                 "original does at 10000); each subscribed job holds one stream and about 33 KiB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--job-reconcile-rate", brain_options.registry.reconcile_rate,
                 "Job registry: reconciles that write job summaries, per second (the "
                 "original: 5); faults map onto a waiting job at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--job-reconcile-burst", brain_options.registry.reconcile_burst,
                 "Job registry: reconcile burst (the original: 20)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  app.add_option("--profiling-root", brain_options.slow_node.profiling_root,
                 "Slow-node diagnosis: root of the ranks' profiling data, "
                 "<root>/<jobId>/<rank>/{steptime.csv,comm.csv,parallel_group.json}")
      ->capture_default_str();
  std::string slow_node_reporter;
  app.add_option("--slownode-reporter-node", slow_node_reporter,
                 "Slow-node diagnosis: nodeName of its public faults (110001010/100001011); "
                 "default: this host's name, as the original (the ClusterD pod)");

  if (const char* net_root = std::getenv("RAS_NET_ROOT_PATH"); net_root != nullptr) {
    brain_options.net_fault.root = net_root;
  }
  app.add_option("--ras-net-root", brain_options.net_fault.root,
                 "Slow-network diagnosis: the pingmesh storage root shared with NodeD (files under "
                 "<root>/cluster/); default: env RAS_NET_ROOT_PATH; empty: off");

  clusterd::server::AuthFlags auth_flags;
  app.add_option("--auth-policy", auth_flags.policy_file,
                 "Who may call what (YAML or JSON, re-read when it changes; docs/security.md). "
                 "Default: built in per store - embedded: loopback callers may do everything and "
                 "act for every job; kube: only a job's own pods (by pod IP) act for it, and "
                 "operator calls need a credential of the groups clusterd:operators or "
                 "system:masters");
  app.add_option("--token-auth-file", auth_flags.token_file,
                 "Bearer tokens (token,user,uid,\"group1,group2\"[,expires RFC 3339]; the "
                 "format of kube-apiserver's --token-auth-file), re-read when it changes");
  app.add_flag("--authn-tokenreview", auth_flags.token_review,
               "With --store kube: check bearer tokens with the API server's TokenReview "
               "(the clusterd ServiceAccount needs create on tokenreviews)");

  // The original ClusterD's flags (-logLevel=0, --enable-healthz, ...) in clusterd's words.
  absl::StatusOr<clusterd::server::OriginalFlagTranslation> translated =
      clusterd::server::TranslateOriginalFlags(std::vector<std::string>(argv, argv + argc));
  if (!translated.ok()) return Fail(translated.status());
  std::vector<const char*> args;
  for (const std::string& a : translated->args) args.push_back(a.c_str());
  if (std::optional<int> rc =
          clusterd::ParseFlags(app, static_cast<int>(args.size()), args.data())) {
    return *rc;
  }
  if (absl::Status s = http_flags.Apply(http_listen); !s.ok()) return Fail(s);

  if (slow_node_reporter.empty()) {
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') slow_node_reporter = host;
  }
  if (!slow_node_reporter.empty()) brain_options.slow_node.reporter_node = slow_node_reporter;
  if (const char* pod_ip = std::getenv("POD_IP"); pod_ip != nullptr && *pod_ip != '\0') {
    brain_options.slow_node.reporter_ip = pod_ip;
  }

  log_options.format =
      log_format == "json" ? clusterd::LogFormat::kJson : clusterd::LogFormat::kText;
  log_options.max_file_bytes = log_max_size_mib << 20;
  if (absl::Status s = clusterd::ConfigureLogging(log_options); !s.ok()) return Fail(s);
  for (const std::string& note : translated->notes) clusterd::LogInfo("clusterd", note);

  {
    absl::StatusOr<clusterd::model::DeviceNaming> naming = clusterd::model::DeviceNaming::Load(
        device_name_file, brain_options.fault_config.data_dir, &device_name_file);
    if (!naming.ok()) {
      clusterd::LogError("clusterd", "device-name customisation file refused",
                         {{"error", naming.status()}});
      return Fail(naming.status());
    }
    if (!device_name_file.empty()) {
      clusterd::LogInfo(
          "clusterd", "device names customised",
          {{"file", device_name_file}, {"types", static_cast<int64_t>(naming->entries().size())}});
    }
    brain_options.registry.naming = *naming;
    brain_options.faults.naming = *naming;
    brain_options.recovery.naming = *naming;
  }

  // Exported by a waiting replica too, so that a dashboard sees every replica and which leads.
  clusterd::MetricsRegistry::Default()
      .GetGauge("clusterd_build_info", "Always 1; labels carry the version and the allocator.",
                {{"version", CLUSTERD_VERSION}, {"allocator", clusterd::AllocatorName()}})
      .Set(1);

  absl::StatusOr<std::unique_ptr<clusterd::store::ObjectStore>> store =
      clusterd::store::OpenStore(store_spec, store_options);
  if (!store.ok()) return Fail(store.status());
  absl::StatusOr<std::unique_ptr<clusterd::store::InstanceLock>> store_claim =
      ClaimStore(**store, leader_elect);
  if (!store_claim.ok()) return Fail(store_claim.status());
  std::unique_ptr<clusterd::store::LeaderElector> elector;
  if (leader_elect) {
    auto led = AwaitLeadership(**store, leader_lease, http_flags.options, stop_signals);
    if (!led.ok()) return Fail(led.status());
    if (*led == nullptr) return 0;  // stopped while waiting
    elector = *std::move(led);
  }

  // The rooms first, then the services (they attach to the rooms), then the rebuild from the
  // store and the workers.
  clusterd::server::ClusterBrain brain(**store, clusterd::Clock::Real(), brain_options);
  absl::StatusOr<std::unique_ptr<clusterd::server::AuthSetup>> auth =
      clusterd::server::AuthSetup::Create(auth_flags, store_spec == "kube", store_options,
                                          brain.pod_identities(), clusterd::Clock::Real());
  if (!auth.ok()) return Fail(auth.status());
  clusterd::LogInfo("clusterd", "authorisation", {{"auth", (*auth)->Describe()}});
  clusterd::server::ServiceSet services(clusterd::Clock::Real(), brain, gate_limits,
                                        &(*auth)->authorizer());
  if (absl::Status s = brain.Start(); !s.ok()) return Fail(s);
  grpc_options.plaintext = grpc_plaintext;
  if (!grpc_tls.listen.empty()) {
    grpc_options.tls = grpc_tls;
  } else if (!grpc_tls.cert_file.empty() || !grpc_tls.key_file.empty() ||
             !grpc_tls.client_ca_file.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--grpc-tls-cert/--grpc-tls-key/--grpc-client-ca need --grpc-tls-listen"));
  }
  if (!grpc_plaintext && !grpc_options.tls.has_value()) {
    return Fail(absl::InvalidArgumentError("--grpc-plaintext=false needs --grpc-tls-listen"));
  }
  RaiseFileLimit();
  absl::StatusOr<std::unique_ptr<clusterd::server::GrpcServer>> grpc =
      clusterd::server::GrpcServer::Start(grpc_listen, services.All(), grpc_options);
  if (!grpc.ok()) return Fail(grpc.status());

  clusterd::server::HttpServer::Options http_options = http_flags.options;
  http_options.store = store->get();
  http_options.readiness = [s = store->get()] { return s->Ready(); };
  // Ready does not wait for the job registry to write every job's summary (faults reach a job
  // from its pods at once; the summaries go at --job-reconcile-rate): the body says what is
  // still being taken in.
  http_options.readiness_notes = [&brain] {
    std::vector<std::string> notes = brain.faults().ConfigurationNotes();
    if (size_t pending = brain.jobs().PendingOperations(); pending > 0) {
      notes.push_back(absl::StrCat("job registry: ", pending,
                                   " jobs wait to be reconciled (their summaries are written at "
                                   "--job-reconcile-rate; faults reach them meanwhile)"));
    }
    return notes;
  };
  http_options.jobs = &brain.jobs();
  http_options.faults = &brain.faults();
  http_options.recovery = &brain.recovery();
  http_options.slow_nodes = &brain.slow_nodes();
  http_options.net_faults = brain.net_faults();
  // The dashboard's live fault feed follows the cluster-info ConfigMaps the fault centre writes.
  // It starts once clusterd is ready: reading every cluster-info shard takes about a second at
  // 50,000 nodes, and neither readiness nor any decision waits for the dashboard (its feed is
  // empty until then).
  clusterd::server::FaultFeed fault_feed(**store, brain.faults(), /*capacity=*/1000,
                                         &brain.informers());
  http_options.fault_feed = &fault_feed;
  http_options.goodput = &brain.goodput();
  http_options.version = CLUSTERD_VERSION;
  http_options.authorize = clusterd::server::HttpReadAuthorizer(&(*auth)->authorizer());
  absl::StatusOr<std::unique_ptr<clusterd::server::HttpServer>> http =
      clusterd::server::HttpServer::Start(std::move(http_options));
  if (!http.ok()) return Fail(http.status());

  if (!listen_info_file.empty()) {
    nlohmann::ordered_json info = {{"grpc", (*grpc)->address()},
                                   {"http", (*http)->address()},
                                   {"pid", static_cast<int64_t>(getpid())}};
    if (!(*grpc)->tls_address().empty()) info["grpc_tls"] = (*grpc)->tls_address();
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
  if (elector == nullptr) {
    // Without --leader-elect this process is the only brain: it leads (lease "none").
    clusterd::MetricsRegistry::Default()
        .GetGauge("clusterd_leader",
                  "1 while this process holds the leader-election lease, else 0.",
                  {{"lease", "none"}})
        .Set(1);
  }
  clusterd::LogInfo(
      "clusterd", "ready",
      {{"store", store_spec}, {"grpc", (*grpc)->address()}, {"http", (*http)->address()}});
  if (absl::Status s = fault_feed.Start(); !s.ok()) return Fail(s);
  brain.StartGoodput(&fault_feed);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  clusterd::LogInfo("clusterd", "stopping", {{"signal", strsignal(signal_number)}});
  services.CloseStreams();
  (*grpc)->Shutdown(absl::Seconds(shutdown_grace_s));
  fault_feed.Stop();  // ends the dashboards' event streams, so the HTTP server stops at once
  (*http)->Stop();
  brain.Stop();
  if (elector != nullptr) elector->Stop();  // releases the lease: the follower takes over now
  clusterd::LogInfo("clusterd", "stopped");
  return 0;
}
