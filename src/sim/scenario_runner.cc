#include "sim/scenario_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "agent/event_json.h"
#include "client/channel.h"
#include "httplib.h"
#include "model/fault_codes.h"
#include "nlohmann/json.hpp"
#include "pubfault.grpc.pb.h"
#include "sim/clusterd_process.h"
#include "sim/clusterd_waits.h"
#include "sim/goodput_check.h"
#include "sim/mini_scheduler.h"
#include "sim/signal_attribution.h"
#include "sim/sim_nodes.h"
#include "sim/sim_objects.h"
#include "sim/sim_pingmesh.h"
#include "sim/sim_training_job.h"
#include "store/object_store.h"

namespace clusterd::sim {
namespace {

// What happened to one injected fault.
struct FaultRun {
  const FaultSpec* spec = nullptr;
  std::string job;                        // the job it hit ("" when none)
  std::string where;                      // node/NPU or job/rank
  std::vector<std::pair<int, int>> npus;  // (node, npu) injected
  std::optional<absl::Time> injected, detected, notified, decided, resumed;
  std::string strategy;
  std::string error;
  int job_reschedules_before = 0;
  bool job_rescheduled = false;
  bool cleared = false;
  // The jobs it touched and when (sim/signal_attribution.h): the holders of its NPUs at
  // injection, then jobs placed on them while it lasts; until they leave them.
  std::map<std::string, Touch> touched;
  std::optional<absl::Time> cleared_at;  // its recover injected (a notice: at once)
};

std::string Millis(const std::optional<absl::Time>& t, absl::Time base) {
  if (!t.has_value()) return "-";
  return absl::StrFormat("%.1fs", absl::ToDoubleSeconds(*t - base));
}

std::string Delta(const std::optional<absl::Time>& from, const std::optional<absl::Time>& to) {
  if (!from.has_value() || !to.has_value()) return "-";
  return absl::StrFormat("%.2fs", absl::ToDoubleSeconds(*to - *from));
}

class Runner {
 public:
  Runner(const Scenario& scenario, const RunOptions& options)
      : scenario_(scenario), options_(options) {}

  absl::Status Run();

 private:
  void Event(const std::string& text) {
    absl::MutexLock lock(&print_mu_);
    if (options_.verbose) {
      ClearLine();
      std::printf("  %6.1fs  %s\n", Elapsed(), text.c_str());
      std::fflush(stdout);
    }
    last_event_ = text;
  }
  double Elapsed() const { return absl::ToDoubleSeconds(absl::Now() - t0_); }
  void ClearLine() {
    if (options_.live && line_drawn_) {
      std::printf("\r\033[K");
      line_drawn_ = false;
    }
  }
  absl::Status StartAll();
  void StopAll();
  bool WaitJobsKnown(absl::Duration timeout);
  void Inject(FaultRun& run);
  absl::Status CreateSlowNodeConfig(const JobSpec& spec);
  absl::Status CreatePingmeshConfig();
  // The public fault code clusterd's pingmesh analysis sent for an alarm on NPU `sdid` ("" when
  // none yet).
  std::string NetFaultSeen(uint32_t sdid);
  // False while a slow_link fault waits for its super pod's detection to be old enough.
  bool DetectionOldEnough(const FaultSpec& f);
  bool SlowRankConfirmed(const FaultRun& run);
  void InjectAgentEvent(int node, int npu, const FaultSpec& f, const std::string& assertion);
  absl::Status SendPublicFault(const FaultRun& run, const std::string& assertion);
  void Observe(FaultRun& run);
  bool Detected(const FaultRun& run);
  bool AllTraining() const;
  void Progress();
  void PrintReport();
  std::string JobAt(int node, int npu) const;
  using Placed = std::map<std::string, std::vector<PodPlacement>>;  // job -> its pods now
  Placed PlacedNow() const;
  // The jobs with a pod on `node` using `npu` (any NPU of the node when npu < 0).
  static std::set<std::string> JobsAt(const Placed& placed, int node, int npu);
  // Jobs now placed on the NPUs of faults that still last are touched by them from now on;
  // jobs that left them are touched no longer.
  void TrackTouched(const Placed& placed);
  // Every signal explained by a fault that touched its job (sim/signal_attribution.h).
  std::vector<std::string> CheckAttribution() const;

  const Scenario& scenario_;
  const RunOptions& options_;
  absl::Time t0_ = absl::Now();

  std::unique_ptr<ClusterdProcess> clusterd_;
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<SimNodes> nodes_;
  std::unique_ptr<SimPingmesh> pingmesh_;  // with cluster pingmesh: true
  std::unique_ptr<MiniScheduler> scheduler_;
  std::map<std::string, std::unique_ptr<SimTrainingJob>> jobs_;
  std::vector<FaultRun> runs_;

  absl::Mutex print_mu_;
  bool line_drawn_ = false;
  std::string last_event_;
};

absl::Status Runner::StartAll() {
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
    pingmesh_ = std::make_unique<SimPingmesh>(ras_root);
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

absl::Status Runner::CreateSlowNodeConfig(const JobSpec& spec) {
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

absl::Status Runner::CreatePingmeshConfig() {
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

bool Runner::DetectionOldEnough(const FaultSpec& f) {
  if (f.kind != "slow_link" || f.after_detection_s <= 0) return true;
  int node = 0;
  (void)absl::SimpleAtoi(absl::string_view(f.node).substr(5), &node);
  const std::string super_pod =
      std::to_string((node - 1) / std::max(1, scenario_.cluster.nodes_per_super_pod));
  httplib::Client http("http://" + clusterd_->http_address());
  auto res = http.Get("/api/clusterd/v1/netfault");
  if (!res || res->status != 200) return false;
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("superPods") || !body["superPods"].is_array())
    return false;
  for (const auto& pod : body["superPods"]) {
    if (pod.value("superPodId", "") != super_pod || pod.value("detection", "") != "on") continue;
    absl::Time start;
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, pod.value("detectionStart", ""), &start, &err)) {
      return false;
    }
    return absl::Now() - start >= absl::Seconds(f.after_detection_s);
  }
  return false;
}

std::string Runner::NetFaultSeen(uint32_t sdid) {
  // The alarm's public fault names its source SDID as the node (§7.5), which is no Node of the
  // fault view: the slow-network view says what was reported.
  httplib::Client http("http://" + clusterd_->http_address());
  auto res = http.Get("/api/clusterd/v1/netfault");
  if (!res || res->status != 200) return "";
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("superPods") || !body["superPods"].is_array()) return "";
  const std::string id = std::to_string(sdid);
  for (const auto& pod : body["superPods"]) {
    if (pod.value("faultsSent", int64_t{0}) == 0 || !pod.contains("lastAlarms")) continue;
    for (const auto& a : pod["lastAlarms"]) {
      const std::string src = a.value("srcId", ""), dst = a.value("dstId", "");
      if (src != id && dst != id) continue;
      uint64_t s = 0, d = 0;
      const bool npus = absl::SimpleAtoi(src, &s) && absl::SimpleAtoi(dst, &d);
      if (!npus || a.value("srcType", 0) != 0 || a.value("dstType", 0) != 0) return "200001012";
      return (s >> 22) == (d >> 22) ? "200001010" : "200001011";
    }
  }
  return "";
}

bool Runner::SlowRankConfirmed(const FaultRun& run) {
  httplib::Client http("http://" + clusterd_->http_address());
  const JobSpec& spec = jobs_[run.job]->spec();
  auto res =
      http.Get(absl::StrCat("/api/clusterd/v1/slownode/", spec.name, "?namespace=", spec.ns));
  if (!res || res->status != 200) return false;
  auto view = nlohmann::json::parse(res->body, nullptr, false);
  if (!view.is_object() || view.value("state", "") != "degraded") return false;
  if (!view.contains("lastResult") || !view["lastResult"].is_object()) return false;
  const auto& ranks = view["lastResult"].value("slowCalculateRanks", nlohmann::json::array());
  for (const auto& r : ranks) {
    if (r.is_number_integer() && r.get<int>() == run.spec->rank) return true;
  }
  return false;
}

void Runner::StopAll() {
  for (auto& [name, job] : jobs_) job->Stop();
  if (scheduler_) scheduler_->Stop();
  if (nodes_) nodes_->Stop();
  if (clusterd_) (void)clusterd_->Stop();
}

bool Runner::WaitJobsKnown(absl::Duration timeout) {
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

std::string Runner::JobAt(int node, int npu) const {
  for (const JobSpec& spec : scenario_.jobs) {
    for (const PodPlacement& p : scheduler_->Placements(spec.name)) {
      if (p.node_index != node) continue;
      if (npu < 0 || std::find(p.npus.begin(), p.npus.end(), npu) != p.npus.end()) {
        return spec.name;
      }
    }
  }
  return "";
}

Runner::Placed Runner::PlacedNow() const {
  Placed placed;
  for (const JobSpec& spec : scenario_.jobs) placed[spec.name] = scheduler_->Placements(spec.name);
  return placed;
}

std::set<std::string> Runner::JobsAt(const Placed& placed, int node, int npu) {
  std::set<std::string> jobs;
  for (const auto& [job, pods] : placed) {
    for (const PodPlacement& p : pods) {
      if (p.node_index != node) continue;
      if (npu < 0 || std::find(p.npus.begin(), p.npus.end(), npu) != p.npus.end()) {
        jobs.insert(job);
      }
    }
  }
  return jobs;
}

void Runner::TrackTouched(const Placed& placed) {
  const absl::Time now = absl::Now();
  for (FaultRun& r : runs_) {
    if (!r.injected.has_value() || r.npus.empty()) continue;
    std::set<std::string> holders;
    for (auto [node, npu] : r.npus) holders.merge(JobsAt(placed, node, npu));
    for (auto& [job, touch] : r.touched) {
      if (holders.count(job) == 0 && !touch.until.has_value()) touch.until = now;
      if (holders.count(job) > 0) touch.until.reset();  // back on them
    }
    if (r.cleared_at.has_value()) continue;  // a fault that is gone touches no newcomer
    for (const std::string& job : holders) r.touched.try_emplace(job, Touch{now, std::nullopt});
  }
}

std::vector<std::string> Runner::CheckAttribution() const {
  std::vector<AttributedFault> faults;
  for (const FaultRun& r : runs_) {
    if (!r.injected.has_value()) continue;
    AttributedFault f;
    f.label = r.spec->label.empty() ? r.spec->kind : r.spec->label;
    f.injected = *r.injected;
    f.touched = r.touched;
    f.cleared = r.cleared_at;
    // A fault that hit no job has no cycle of its own: a job placed on its NPUs later is
    // explained by it only while it is there.
    f.handled = r.job.empty() ? r.injected : r.resumed;
    f.must_signal = !r.spec->expect.empty() && r.spec->kind != "slow" &&
                    r.spec->kind != "slow_link" && r.error.empty();
    faults.push_back(std::move(f));
  }
  std::map<std::string, std::vector<ReceivedSignal>> signals;
  for (const auto& [name, job] : jobs_) {
    std::vector<ReceivedSignal>& out = signals[name];
    std::optional<absl::Time> previous;
    for (const SimTrainingJob::SignalRecord& s : job->signals()) {
      // A new cycle when the job trained since its previous signal.
      std::optional<absl::Time> trained;
      if (previous.has_value()) trained = job->ResumedAfter(*previous);
      const bool starts = !previous.has_value() || (trained.has_value() && *trained < s.at);
      out.push_back(ReceivedSignal{s.at, s.type, s.actions, starts});
      previous = s.at;
    }
  }
  return CheckSignalAttribution(faults, signals, t0_);
}

void Runner::InjectAgentEvent(int node, int npu, const FaultSpec& f, const std::string& assertion) {
  agent::EventFields fields;
  fields.kind = f.kind == "storm" ? "chip" : f.kind;
  fields.npu = npu;
  fields.code = f.code;
  fields.assertion = assertion;
  fields.chip_id = f.chip_id;
  fields.port_id = f.port_id;
  auto event = agent::MakeEvent(fields, scenario_.cluster.npus_per_node);
  if (!event.ok()) {
    Event(absl::StrCat("cannot inject: ", event.status().ToString()));
    return;
  }
  nodes_->Inject(node, *std::move(event));
}

absl::Status Runner::SendPublicFault(const FaultRun& run, const std::string& assertion) {
  const FaultSpec& f = *run.spec;
  if (run.npus.empty()) return absl::InvalidArgumentError("no NPU to report");
  auto stub = ::PubFault::NewStub(client::MakeChannel(clusterd_->grpc_address()));
  ::PublicFaultRequest request;
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  request.set_id(absl::StrCat("clustersim-", now_ms));
  request.set_timestamp(now_ms);
  request.set_version("1.0");
  request.set_resource("CCAE");
  ::Fault* fault = request.add_faults();
  fault->set_faultid(absl::StrCat("sim-", f.line));
  fault->set_faulttype("NPU");
  fault->set_faultcode(f.code);
  fault->set_faulttime(now_ms);
  fault->set_assertion(assertion);
  ::PubFaultInfo* influence = fault->add_influence();
  influence->set_nodename(SimNodeName(run.npus.front().first));
  for (auto [node, npu] : run.npus) influence->add_deviceids(npu);
  fault->set_description("injected by clustersim");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  ::RespStatus response;
  grpc::Status st = stub->SendPublicFault(&ctx, request, &response);
  if (!st.ok()) return absl::UnavailableError(st.error_message());
  if (response.code() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("SendPublicFault answered ", response.code(), ": ", response.info()));
  }
  return absl::OkStatus();
}

void Runner::Inject(FaultRun& run) {
  const FaultSpec& f = *run.spec;
  run.injected = absl::Now();
  int node = 0;
  if (f.node.rfind("node-", 0) == 0) {
    (void)absl::SimpleAtoi(absl::string_view(f.node).substr(5), &node);
  }
  if (f.kind == "software" || f.kind == "slow")
    run.touched[f.job] = Touch{*run.injected, std::nullopt};
  if (f.kind == "software") {
    run.job = f.job;
    run.where = absl::StrCat(f.job, " rank ", f.rank);
    run.job_reschedules_before = scheduler_->job_reschedules();
    absl::Status s = jobs_[f.job]->ReportProcessFault({f.rank}, 1);
    if (!s.ok()) run.error = std::string(s.message());
    run.detected = run.injected;  // the report itself is the detection
    return;
  }
  if (f.kind == "slow") {
    run.job = f.job;
    run.where = absl::StrCat(f.job, " rank ", f.rank);
    jobs_[f.job]->SetSlowRank(f.rank, f.magnitude);
    Event(absl::StrCat("injected ", f.label.empty() ? f.kind : f.label, " at ", run.where,
                       " (computes ", 1 + f.magnitude, "x slower)"));
    return;
  }
  if (f.kind == "slow_link") {
    run.where = absl::StrCat(f.node, "/npu", f.npu);
    for (const std::string& job : JobsAt(PlacedNow(), node, f.npu))
      run.touched[job] = Touch{*run.injected, std::nullopt};
    pingmesh_->SetSlowNpu(SuperDeviceId(scenario_.cluster, node, f.npu), 1 + f.magnitude);
    Event(absl::StrCat("injected ", f.label.empty() ? f.kind : f.label, " at ", run.where,
                       " (every path from or to it takes ", 1 + f.magnitude, " ms)"));
    return;
  }
  if (f.kind == "storm") {
    if (!f.job.empty()) {
      for (const PodPlacement& p : scheduler_->Placements(f.job)) {
        for (int npu : p.npus) run.npus.push_back({p.node_index, npu});
      }
      run.job = f.job;
    } else {
      for (int npu : f.npus) run.npus.push_back({node, npu});
      run.job = JobAt(node, f.npus.front());
    }
    run.where = absl::StrCat(run.npus.size(), " NPUs");
    if (!run.job.empty()) jobs_[run.job]->FailProcessRecovery();
  } else if (f.kind == "node" || f.kind == "switch") {
    run.npus.push_back({node, -1});
    run.job = JobAt(node, -1);
    run.where = f.node;
  } else if (!f.job.empty()) {
    // The pod's NPU number `npu`, wherever the pod runs now.
    for (const PodPlacement& p : scheduler_->Placements(f.job)) {
      if (p.rank != f.pod || f.npu >= static_cast<int>(p.npus.size())) continue;
      node = p.node_index;
      run.npus.push_back({node, p.npus[f.npu]});
      run.where = absl::StrCat(SimNodeName(node), "/npu", p.npus[f.npu]);
    }
    run.job = f.job;
    if (run.npus.empty()) {
      run.error = absl::StrCat("pod ", f.pod, " of job ", f.job, " is not bound");
      return;
    }
  } else {
    run.npus.push_back({node, f.npu});
    run.job = JobAt(node, f.npu);
    run.where = absl::StrCat(f.node, "/npu", f.npu);
  }
  run.job_reschedules_before = scheduler_->job_reschedules();
  if (f.assertion != "occur") run.cleared_at = run.injected;  // a notice or a recovery
  const Placed placed = PlacedNow();
  for (auto [n, npu] : run.npus) {
    for (const std::string& job : JobsAt(placed, n, npu)) {
      run.touched[job] = Touch{*run.injected, std::nullopt};
    }
  }
  if (f.kind == "public") {
    absl::Status s = SendPublicFault(run, f.assertion);
    if (!s.ok()) run.error = std::string(s.message());
  } else {
    for (auto [n, npu] : run.npus) InjectAgentEvent(n, npu, f, f.assertion);
  }
  // A UCE memory error is also caught by the training framework on that NPU, which reports its
  // rank with faultType 0 (recovery-protocol.md §15, the online-recovery variant).
  if (f.kind == "chip" && absl::AsciiStrToUpper(f.code) == model::kFaultCodeUce &&
      !run.job.empty() && f.assertion == "occur") {
    std::vector<int> ranks;
    for (const PodPlacement& p : scheduler_->Placements(run.job)) {
      for (size_t i = 0; i < p.npus.size(); ++i) {
        for (auto [n, npu] : run.npus) {
          if (n == p.node_index && npu == p.npus[i]) {
            ranks.push_back(p.rank * jobs_[run.job]->spec().npus_per_pod + static_cast<int>(i));
          }
        }
      }
    }
    if (!ranks.empty()) {
      absl::Status s = jobs_[run.job]->ReportProcessFault(ranks, 0);
      if (!s.ok()) run.error = std::string(s.message());
    }
  }
  Event(absl::StrCat("injected ", f.label.empty() ? f.kind : f.label, " (", f.code, ") at ",
                     run.where, run.job.empty() ? "" : ", job " + run.job));
}

bool Runner::Detected(const FaultRun& run) {
  if (run.npus.empty()) return false;
  httplib::Client http("http://" + clusterd_->http_address());
  const int node = run.npus.front().first;
  auto res = http.Get(absl::StrCat("/api/clusterd/v1/faults?node=", SimNodeName(node)));
  if (!res || res->status != 200) return false;
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("items")) return false;
  const std::string code = absl::AsciiStrToLower(run.spec->code);
  for (const auto& item : body["items"]) {
    std::string seen = absl::AsciiStrToLower(item.value("code", ""));
    if (seen.find(code) != std::string::npos || code.find(seen) != std::string::npos) {
      if (!seen.empty()) return true;
    }
  }
  return false;
}

void Runner::Observe(FaultRun& run) {
  if (!run.injected.has_value() || run.resumed.has_value()) return;
  if (run.spec->kind == "slow_link") {
    // Handled once clusterd's pingmesh analysis reports the link (§7.5).
    int node = 0;
    (void)absl::SimpleAtoi(absl::string_view(run.spec->node).substr(5), &node);
    if (const std::string code =
            NetFaultSeen(SuperDeviceId(scenario_.cluster, node, run.spec->npu));
        !code.empty()) {
      run.detected = run.decided = run.resumed = absl::Now();
      run.strategy = absl::StrCat(code, " slow link");
      Event(absl::StrCat("clusterd reports ", run.where, "'s link (public fault ", code, ")"));
    }
    return;
  }
  if (run.spec->kind == "slow") {
    // Training never stops for a slow rank: it is handled once clusterd confirms it (public
    // fault 110001010 with the rank).
    if (SlowRankConfirmed(run)) {
      run.detected = run.decided = run.resumed = absl::Now();
      run.strategy = "110001010 slow rank";
      Event(absl::StrCat("clusterd confirms ", run.where, " slow (public fault 110001010)"));
    }
    return;
  }
  if (!run.detected.has_value() && Detected(run)) {
    run.detected = absl::Now();
    Event(absl::StrCat("clusterd sees ", run.spec->code, " at ", run.where));
  }
  if (run.job.empty()) return;
  SimTrainingJob& job = *jobs_[run.job];
  // Every decision of the cycle, in order: the strategy and what it fell back to.
  std::vector<std::string> chain;
  for (const SimTrainingJob::SignalRecord& s : job.signals()) {
    if (s.at < *run.injected) continue;
    if (!run.notified.has_value()) run.notified = s.at;
    const bool decision = !s.strategy.empty() || s.type == "killMaster" || s.type == "saveAndExit";
    if (!decision) continue;
    if (!run.decided.has_value()) run.decided = s.at;
    const std::string what = !s.strategy.empty() ? s.strategy : s.type;
    if (chain.empty() || chain.back() != what) chain.push_back(what);
  }
  if (scheduler_->job_reschedules() > run.job_reschedules_before) {
    if (!run.job_rescheduled) Event(absl::StrCat("job ", run.job, " rescheduled as a whole"));
    run.job_rescheduled = true;
    chain.push_back("job-reschedule");
    if (!run.decided.has_value()) run.decided = absl::Now();
  }
  if (!chain.empty()) run.strategy = absl::StrJoin(chain, ">");
  // A fault the job's client was told about was detected, even if the fault view shows it
  // later (or not at all, like a UCE fault the job retries).
  if (run.notified.has_value() && (!run.detected.has_value() || *run.notified < *run.detected)) {
    run.detected = run.notified;
  }
  // Training counts as resumed once a decision was made (a hot switch first prepares the
  // backup pod while the job still trains, then decides).
  if (run.decided.has_value()) {
    run.resumed = job.ResumedAfter(*run.decided);
    if (run.resumed.has_value()) {
      Event(absl::StrCat("job ", run.job, " trains again after ", run.spec->label, " (",
                         run.strategy, ")"));
      if (run.spec->kind == "storm") job.RestoreBehaviour();
    }
  }
}

bool Runner::AllTraining() const {
  for (const auto& [name, job] : jobs_) {
    if (!job->training()) return false;
  }
  return true;
}

void Runner::Progress() {
  std::string line = absl::StrFormat("[%5.1fs]", Elapsed());
  for (const auto& [name, job] : jobs_) {
    const bool training = job->training();
    absl::StrAppend(&line, " ", name, ": step ", job->step(), " ",
                    training ? "training" : job->phase());
    // Not training: say what clusterd waits for (a protocol timer) and how long is left.
    if (!training) {
      if (std::string wait = ClusterdWaitText(clusterd_->http_address(), job->uid());
          !wait.empty()) {
        absl::StrAppend(&line, " (clusterd ", wait, ")");
      }
    }
  }
  int handled = 0, injected = 0;
  for (const FaultRun& r : runs_) {
    if (r.injected.has_value()) ++injected;
    if (r.resumed.has_value() || (r.injected.has_value() && r.job.empty() && r.detected)) {
      ++handled;
    }
  }
  absl::StrAppend(&line, " | faults ", handled, "/", injected, " handled");
  absl::MutexLock lock(&print_mu_);
  if (options_.live) {
    std::printf("\r\033[K%s", line.c_str());
    line_drawn_ = true;
  } else {
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

void Runner::PrintReport() {
  ClearLine();
  const char* kRow = "%-24s %-12s %-6s %8s %8s %8s %8s %8s %8s  %s\n";
  std::printf("\n");
  std::printf(kRow, "FAULT", "WHERE", "JOB", "INJECTED", "DETECTED", "NOTIFIED", "DECIDED",
              "RESUMED", "TOTAL", "STRATEGY");
  int unexpected = 0;
  for (const FaultRun& r : runs_) {
    const std::string label = r.spec->label.empty() ? r.spec->kind : r.spec->label;
    std::string strategy = r.strategy.empty() ? "-" : r.strategy;
    if (!r.spec->expect.empty() && r.strategy.find(r.spec->expect) == std::string::npos) {
      absl::StrAppend(&strategy, " (expected ", r.spec->expect, ")");
      ++unexpected;
    }
    std::printf(kRow, label.substr(0, 24).c_str(), r.where.substr(0, 12).c_str(),
                r.job.empty() ? "-" : r.job.c_str(), Millis(r.injected, t0_).c_str(),
                Delta(r.injected, r.detected).c_str(), Delta(r.injected, r.notified).c_str(),
                Delta(r.injected, r.decided).c_str(), Delta(r.decided, r.resumed).c_str(),
                Delta(r.injected, r.resumed).c_str(), strategy.c_str());
    if (!r.error.empty()) std::printf("    error: %s\n", r.error.c_str());
  }
  std::printf(
      "\nINJECTED: time into the run. DETECTED (in clusterd's fault view, or the first "
      "signal if earlier), NOTIFIED (first signal on the job's stream, which its TaskD "
      "manager relays to every rank) and DECIDED (first strategy signal) from injection; "
      "RESUMED: from the decision to training again; TOTAL: injection to training again. "
      "STRATEGY: the decisions in order, fallbacks included.\n");
  if (unexpected > 0) std::printf("%d fault(s) took another path than expected\n", unexpected);
  std::printf("pods rescheduled: %d, jobs rescheduled: %d\n", scheduler_->reschedules(),
              scheduler_->job_reschedules());
  for (const auto& [name, job] : jobs_) {
    std::printf("job %-8s step %-6lld %s, recovered %d time(s)\n", name.c_str(),
                static_cast<long long>(job->step()),
                job->training() ? "training" : job->phase().c_str(), job->resumed_count());
  }
}

absl::Status Runner::Run() {
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
      const bool must_resolve =
          !r.job.empty() || r.spec->kind == "slow" || r.spec->kind == "slow_link";
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
  return absl::OkStatus();
}

}  // namespace

absl::Status RunScenario(const Scenario& scenario, const RunOptions& options) {
  Runner runner(scenario, options);
  return runner.Run();
}

}  // namespace clusterd::sim
