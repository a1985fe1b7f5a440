#include "fuzz_daemon.h"

#include <cstdlib>
#include <memory>

#include "common/clock.h"
#include "common/log.h"
#include "fuzz_util.h"
#include "server/cluster_brain.h"
#include "server/grpc_server.h"
#include "server/http_server.h"
#include "server/service_set.h"
#include "store/object_store.h"
#include "unit/cluster/job_test_objects.h"

namespace clusterd::fuzz {
namespace {

using cluster::testing::ExamplePod;
using cluster::testing::Json;
using cluster::testing::PodGroupObject;
using cluster::testing::PodGroupSpec;
using cluster::testing::PodObject;
using cluster::testing::PodSpec;

[[noreturn]] void Fail(const char* what, const absl::Status& status) {
  LogError("fuzz", what, {{"error", status}});
  std::abort();
}

void SeedJob(store::ObjectStore& store) {
  PodGroupSpec g;
  g.labels.emplace_back("process-recover-enable", "on");
  g.annotations.emplace_back("recover-strategy", "recover");
  Json pg = PodGroupObject(g);
  pg["status"] = {{"phase", "Running"}};
  std::vector<std::pair<std::string, Json>> objects = {{"podgroups", pg}};
  for (int rank = 0; rank < 2; ++rank) {
    PodSpec p = ExamplePod(rank);
    p.extra_annotations.emplace_back("scheduling.k8s.io/group-name", "pt-2x8-pg");
    objects.emplace_back("pods", PodObject(p));
  }
  objects.emplace_back(
      "configmaps",
      Json{{"apiVersion", "v1"},
           {"kind", "ConfigMap"},
           {"metadata", {{"name", "reset-config-pt-2x8"}, {"namespace", "default"}}},
           {"data", {{"reset.json", R"({"status":"initializing"})"}, {"checkCode", ""}}}});
  objects.emplace_back("nodes", cluster::testing::NodeObject("node-a", "192.168.0.11", "SN-A"));
  objects.emplace_back("nodes", cluster::testing::NodeObject("node-b", "192.168.0.12", "SN-B"));
  for (auto& [resource, object] : objects) {
    if (auto s = store.Create(resource, object); !s.ok()) Fail("cannot seed the store", s.status());
  }
}

struct Running {
  std::unique_ptr<store::ObjectStore> store;
  std::unique_ptr<server::ClusterBrain> brain;
  std::unique_ptr<server::ServiceSet> services;
  std::unique_ptr<server::GrpcServer> grpc;
  std::unique_ptr<server::HttpServer> http;
  DaemonAddresses addresses;
};

Running* Start() {
  QuietLogs();
  auto* r = new Running;
  absl::StatusOr<std::unique_ptr<store::ObjectStore>> store = store::OpenStore("memory");
  if (!store.ok()) Fail("cannot open the store", store.status());
  r->store = *std::move(store);
  SeedJob(*r->store);

  server::ClusterBrain::Options options;
  options.fault_config.data_dir = CLUSTERD_DATA_DIR;
  r->brain = std::make_unique<server::ClusterBrain>(*r->store, Clock::Real(), options);
  // The QPS gate far above what one fuzzer sends: inputs must reach the handlers, not the gate.
  server::UnaryGate::Limits limits;
  limits.health_rate = limits.shared_rate = 1e9;
  limits.health_burst = limits.shared_burst = 1000000000;
  r->services = std::make_unique<server::ServiceSet>(Clock::Real(), *r->brain, limits);
  if (absl::Status s = r->brain->Start(); !s.ok()) Fail("cannot start the brain", s);

  absl::StatusOr<std::unique_ptr<server::GrpcServer>> grpc =
      server::GrpcServer::Start("127.0.0.1:0", r->services->All());
  if (!grpc.ok()) Fail("cannot start gRPC", grpc.status());
  r->grpc = *std::move(grpc);
  r->addresses.grpc = r->grpc->address();

  server::HttpServer::Options http;
  http.listen = "127.0.0.1:0";
  http.store = r->store.get();
  http.readiness = [s = r->store.get()] { return s->Ready(); };
  http.jobs = &r->brain->jobs();
  http.faults = &r->brain->faults();
  http.recovery = &r->brain->recovery();
  http.slow_nodes = &r->brain->slow_nodes();
  http.net_faults = r->brain->net_faults();
  // No fault feed: /api/clusterd/v1/events would be an endless event stream (503 instead).
  http.version = "fuzz";
  absl::StatusOr<std::unique_ptr<server::HttpServer>> started =
      server::HttpServer::Start(std::move(http));
  if (!started.ok()) Fail("cannot start HTTP", started.status());
  r->http = *std::move(started);
  r->addresses.http_port = r->http->port();
  return r;
}

}  // namespace

const DaemonAddresses& Daemon() {
  static Running* running = Start();
  return running->addresses;
}

}  // namespace clusterd::fuzz
