#include "sim/scenario_runner.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/a5_network.h"
#include "sim/goodput_check.h"
#include "sim/scenario_run.h"
#include "sim/sim_objects.h"

namespace clusterd::sim {
namespace {

// Where each A5 probe address (the NPU's IP) sits, for the simulated pingmesh.
std::map<std::string, SimPingmesh::NetPath> A5ProbePaths(const ClusterSpec& cluster) {
  std::map<std::string, SimPingmesh::NetPath> paths;
  for (int node = 1; node <= cluster.nodes; ++node) {
    for (int npu = 0; npu < cluster.npus_per_node; ++npu) {
      const A5NetPath p = NetPathOf(cluster, node, npu);
      paths[DeviceIp(node, npu)] = {std::to_string(p.plane), std::to_string(p.rack),
                                    std::to_string(p.l1), std::to_string(p.l2)};
    }
  }
  return paths;
}

}  // namespace

absl::Status ScenarioRun::StartAll() {
  std::filesystem::create_directories(options_.state_dir);
  const std::string store_dir = options_.state_dir + "/store";
  // Every run starts from an empty cluster: the store and logs of a previous run go.
  std::error_code ec;
  std::filesystem::remove_all(store_dir, ec);
  std::filesystem::remove_all(options_.state_dir + "/run", ec);
  ClusterdProcess::Options copts;
  copts.binary = options_.clusterd_binary;
  copts.store = "dir:" + store_dir;
  copts.work_dir = options_.state_dir + "/run";
  const std::string profiling_root = options_.state_dir + "/profiling";
  const bool slow_nodes = std::any_of(scenario_.jobs.begin(), scenario_.jobs.end(),
                                      [](const JobSpec& j) { return j.slow_node_detection; });
  if (slow_nodes) {
    std::filesystem::remove_all(profiling_root, ec);
    std::filesystem::create_directories(profiling_root, ec);
    // The slow-node fault names the reporter (the original: ClusterD's own host), here a host
    // that runs no job, so that the report does not look like an NPU fault of a pod.
    copts.extra_args = {"--profiling-root", profiling_root, "--slownode-reporter-node", "clusterd"};
  }
  const std::string ras_root = options_.state_dir + "/ras-net";
  if (scenario_.cluster.pingmesh) {
    std::filesystem::remove_all(ras_root, ec);
    std::filesystem::create_directories(ras_root, ec);
    copts.extra_args.push_back("--ras-net-root");
    copts.extra_args.push_back(ras_root);
    pingmesh_ =
        std::make_unique<SimPingmesh>(ras_root, absl::Seconds(scenario_.cluster.pingmesh_warmup_s));
    if (IsA5(scenario_.cluster)) pingmesh_->SetNetPaths(A5ProbePaths(scenario_.cluster));
  }
  copts.extra_args.insert(copts.extra_args.end(), options_.clusterd_args.begin(),
                          options_.clusterd_args.end());
  auto proc = ClusterdProcess::Start(copts);
  if (!proc.ok()) return proc.status();
  clusterd_ = std::move(*proc);
  std::printf("clusterd serving gRPC on %s, HTTP on http://%s (dashboard), store %s\n",
              clusterd_->grpc_address().c_str(), clusterd_->http_address().c_str(),
              store_dir.c_str());
  auto store = store::OpenStore("dir:" + store_dir);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);

  if (scenario_.cluster.pingmesh) {
    if (absl::Status s = CreatePingmeshConfig(); !s.ok()) return s;
  }
  if (scenario_.goodput.has_value() && !scenario_.goodput->offender_policy.empty()) {
    if (absl::Status s = WriteOffenderPolicy(*store_, scenario_.goodput->offender_policy);
        !s.ok()) {
      return s;
    }
    std::printf("repeat-offender policy %s\n", scenario_.goodput->offender_policy.c_str());
  }
  nodes_ = std::make_unique<SimNodes>(*store_, scenario_.cluster, options_.data_dir);
  if (absl::Status s = nodes_->Start(); !s.ok()) return s;
  std::printf("%d nodes x %d NPUs (%s) reporting through their npu-agents\n",
              scenario_.cluster.nodes, scenario_.cluster.npus_per_node,
              scenario_.cluster.chip.c_str());
  scheduler_ =
      std::make_unique<MiniScheduler>(*store_, Clock::Real(), scenario_.cluster, scenario_.jobs,
                                      [this](const std::string& e) { Event(e); });
  if (absl::Status s = scheduler_->Start(); !s.ok()) return s;
  if (!WaitJobsKnown(absl::Seconds(30))) {
    return absl::DeadlineExceededError("clusterd did not see every job running within 30 s");
  }
  for (const JobSpec& spec : scenario_.jobs) {
    auto job = std::make_unique<SimTrainingJob>(spec, scheduler_->JobUid(spec.name),
                                                clusterd_->grpc_address(), *store_, *scheduler_,
                                                [this](const std::string& e) { Event(e); });
    if (spec.slow_node_detection) {
      if (absl::Status s = job->EnableProfiling(profiling_root); !s.ok()) return s;
      if (absl::Status s = CreateSlowNodeConfig(spec); !s.ok()) return s;
    }
    if (absl::Status s = job->Start(); !s.ok()) return s;
    std::string pods;
    for (const PodPlacement& p : scheduler_->Placements(spec.name)) {
      absl::StrAppend(&pods, pods.empty() ? "" : ", ", SimNodeName(p.node_index), "[",
                      absl::StrJoin(p.npus, ","), "]");
    }
    std::printf("job %-8s %d pods x %d NPUs on %s, strategies %s\n", spec.name.c_str(), spec.pods,
                spec.npus_per_pod, pods.c_str(), absl::StrJoin(spec.strategies, ",").c_str());
    jobs_[spec.name] = std::move(job);
  }
  return absl::OkStatus();
}

absl::Status ScenarioRun::CreateSlowNodeConfig(const JobSpec& spec) {
  // jobs-ranktable-diagnosis.md §6.1 with a detection round every second, so that a slow rank
  // is confirmed within a demo's time.
  nlohmann::ordered_json conf = {{"jobName", spec.name},
                                 {"jobNamespace", spec.ns},
                                 {"normalNumber", 20},
                                 {"nSigma", 3},
                                 {"degradationPercentage", 0.3},
                                 {"nConsecAnomaliesSignifySlow", 3},
                                 {"nSecondsDoOneDetection", 1},
                                 {"clusterMeanDistance", 1.3},
                                 {"cardOneNode", spec.npus_per_pod},
                                 {"slowNode", 1}};
  nlohmann::ordered_json cm = {{"apiVersion", "v1"},
                               {"kind", "ConfigMap"},
                               {"metadata",
                                {{"name", absl::StrCat("ras-feature-slownode-", spec.name)},
                                 {"namespace", spec.ns},
                                 {"labels", {{"fd-ol-slow-node", "true"}}}}},
                               {"data", {{"FeatConf", conf.dump()}}}};
  absl::StatusOr<store::Object> created = store_->Create(store::kConfigMaps, cm);
  if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  Event(absl::StrCat("slow-node detection on for job ", spec.name));
  return absl::OkStatus();
}

absl::Status ScenarioRun::CreatePingmeshConfig() {
  // jobs-ranktable-diagnosis.md §7.1: detection on for every super pod, the shortest interval.
  nlohmann::ordered_json cm = {{"apiVersion", "v1"},
                               {"kind", "ConfigMap"},
                               {"metadata",
                                {{"name", "pingmesh-config"},
                                 {"namespace", "cluster-system"},
                                 {"labels", {{"app", "pingmesh"}, {"mx-consumer-cim", "true"}}}}},
                               {"data", {{"global", R"({"activate":"on","task_interval":1})"}}}};
  absl::StatusOr<store::Object> created = store_->Create(store::kConfigMaps, cm);
  if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  Event("pingmesh on: clusterd publishes the super-pod topology, the nodes probe every 5 s");
  return absl::OkStatus();
}

void ScenarioRun::StopAll() {
  for (auto& [name, job] : jobs_) job->Stop();
  if (scheduler_) scheduler_->Stop();
  if (nodes_) nodes_->Stop();
  if (clusterd_) (void)clusterd_->Stop();
}

bool ScenarioRun::WaitJobsKnown(absl::Duration timeout) {
  httplib::Client http("http://" + clusterd_->http_address());
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    auto res = http.Get("/api/clusterd/v1/jobs");
    if (res && res->status == 200) {
      auto body = nlohmann::json::parse(res->body, nullptr, false);
      size_t running = 0;
      if (body.is_object() && body.contains("items")) {
        for (const auto& item : body["items"]) {
          if (item.value("status", "") == "running") ++running;
        }
      }
      if (running >= scenario_.jobs.size()) return true;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  return false;
}

absl::Status ScenarioRun::Run() {
  t0_ = absl::Now();
  absl::Status started = StartAll();
  if (!started.ok()) {
    StopAll();
    return started;
  }
  for (const FaultSpec& f : scenario_.faults) {
    FaultRun run;
    run.spec = &f;
    runs_.push_back(run);
  }
  std::sort(runs_.begin(), runs_.end(),
            [](const FaultRun& a, const FaultRun& b) { return a.spec->at_s < b.spec->at_s; });
  const absl::Time timeline = absl::Now();
  std::printf("timeline starts; %zu faults scheduled over %.0f s\n", runs_.size(),
              scenario_.duration_s);
  const absl::Time end = timeline + absl::Seconds(scenario_.duration_s);
  absl::Time next_progress = absl::Now();
  absl::Time next_probe = absl::Now();
  while (absl::Now() < end) {
    const double t = absl::ToDoubleSeconds(absl::Now() - timeline);
    bool all_injected = true;
    for (FaultRun& r : runs_) {
      if (!r.injected.has_value()) {
        all_injected = false;
        if (t >= r.spec->at_s && DetectionOldEnough(*r.spec)) Inject(r);
      } else if (r.spec->clear_after_s > 0 && !r.cleared &&
                 absl::Now() - *r.injected >= absl::Seconds(r.spec->clear_after_s)) {
        r.cleared = true;
        r.cleared_at = absl::Now();
        if (r.spec->kind == "slow") {
          jobs_[r.job]->SetSlowRank(-1, 0);
        } else if (r.spec->kind == "slow_link") {
          int node = 0;
          (void)absl::SimpleAtoi(absl::string_view(r.spec->node).substr(5), &node);
          pingmesh_->SetSlowNpu(SuperDeviceId(scenario_.cluster, node, r.spec->npu), 0);
        } else if (IsSlowNetLink(*r.spec)) {
          const bool rack = r.spec->kind == "slow_l1_link";
          pingmesh_->SetSlowLink(rack ? SimPingmesh::Link::kRackToL1 : SimPingmesh::Link::kL1ToL2,
                                 std::to_string(r.spec->plane),
                                 std::to_string(rack ? r.spec->rack : r.spec->l1), 0);
        } else if (r.spec->kind == "public") {
          (void)SendPublicFault(r, "recover");
        } else {
          for (auto [n, npu] : r.npus) InjectAgentEvent(n, npu, *r.spec, "recover");
        }
      }
      Observe(r);
    }
    TrackTouched(PlacedNow());
    if (pingmesh_ != nullptr && absl::Now() >= next_probe) {
      if (absl::Status s = pingmesh_->Probe(absl::Now()); !s.ok()) Event(std::string(s.message()));
      // Two probe rounds per 10 s analysis period are enough, and keep the files clusterd reads
      // every period small (a 64-NPU super pod lists about 4,000 paths).
      next_probe = absl::Now() + SimPingmesh::kProbeInterval;
    }
    if (absl::Now() >= next_progress) {
      Progress();
      next_progress = absl::Now() + (options_.live ? absl::Milliseconds(250) : absl::Seconds(5));
    }
    bool settled = all_injected && AllTraining();
    for (const FaultRun& r : runs_) {
      // A fault that hit a job is settled when the job trains again; a slow rank or link when
      // clusterd has found it.
      const bool must_resolve = !r.job.empty() || r.spec->kind == "slow" ||
                                r.spec->kind == "slow_link" || IsSlowNetLink(*r.spec);
      if (must_resolve && !r.resumed.has_value()) settled = false;
    }
    if (settled) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  Progress();
  PrintReport();
  const std::vector<std::string> misattributed = CheckAttribution();
  for (const std::string& line : misattributed) std::printf("WRONG JOB: %s\n", line.c_str());
  if (misattributed.empty()) {
    std::printf("every signal was explained by a fault on the job's NPUs\n");
  }
  std::vector<std::string> stuck;
  for (const auto& [name, job] : jobs_) {
    if (!job->training()) stuck.push_back(name);
  }
  std::vector<std::string> goodput_failures;
  if (scenario_.goodput.has_value()) {
    std::vector<SimJobTraining> watched;
    for (const auto& [name, job] : jobs_) {
      if (auto t = job->Training()) {
        watched.push_back({job->spec().ns, name, t->from, t->to, t->share});
      }
    }
    goodput_failures = CheckGoodput(*scenario_.goodput, clusterd_->http_address(), watched);
    for (const std::string& line : goodput_failures) std::printf("GOODPUT: %s\n", line.c_str());
  }
  // The kinds whose `expect` binds: a missed or wrong detection fails the run.
  const std::vector<std::string> expect_failures = ExpectationFailures(runs_);
  for (const std::string& line : expect_failures) std::printf("%s\n", line.c_str());
  std::printf("clusterd log: %s\n", clusterd_->log_path().c_str());
  StopAll();
  if (!stuck.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("not training at the end: ", absl::StrJoin(stuck, ", ")));
  }
  if (!misattributed.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(misattributed.size(),
                                                      " signal(s) not explained by a fault on "
                                                      "the job's NPUs: ",
                                                      misattributed.front()));
  }
  if (!goodput_failures.empty()) {
    return absl::FailedPreconditionError(goodput_failures.front());
  }
  if (!expect_failures.empty()) return absl::FailedPreconditionError(expect_failures.front());
  return absl::OkStatus();
}

absl::Status RunScenario(const Scenario& scenario, const RunOptions& options) {
  ScenarioRun run(scenario, options);
  return run.Run();
}

}  // namespace clusterd::sim
