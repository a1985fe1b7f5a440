#include <algorithm>
#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/event_json.h"
#include "client/channel.h"
#include "httplib.h"
#include "model/fault_codes.h"
#include "nlohmann/json.hpp"
#include "pubfault.grpc.pb.h"
#include "sim/a5_network.h"
#include "sim/scenario_run.h"
#include "sim/sim_objects.h"

namespace clusterd::sim {

bool IsSlowNetLink(const FaultSpec& f) {
  return f.kind == "slow_l1_link" || f.kind == "slow_l2_link";
}

std::optional<nlohmann::json> ScenarioRun::NetFaultView() {
  httplib::Client http("http://" + clusterd_->http_address());
  auto res = http.Get("/api/clusterd/v1/netfault");
  if (!res || res->status != 200) return std::nullopt;
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("superPods") || !body["superPods"].is_array()) {
    return std::nullopt;
  }
  return body;
}

std::set<std::string> ScenarioRun::SuperPodsOf(const FaultSpec& f) const {
  const ClusterSpec& cluster = scenario_.cluster;
  std::vector<int> nodes;
  if (IsSlowNetLink(f)) {
    nodes = NodesUnderLink(cluster, f);
  } else {
    int node = 0;
    (void)absl::SimpleAtoi(absl::string_view(f.node).substr(5), &node);
    nodes.push_back(node);
  }
  std::set<std::string> pods;
  for (int node : nodes) {
    pods.insert(std::to_string((node - 1) / std::max(1, cluster.nodes_per_super_pod)));
  }
  return pods;
}

bool ScenarioRun::DetectionOldEnough(const FaultSpec& f) {
  const bool warmup = scenario_.cluster.pingmesh_warmup_s > 0;
  if (f.kind != "slow_link" && !IsSlowNetLink(f)) return true;
  if (f.after_detection_s <= 0 && !warmup) return true;
  std::optional<nlohmann::json> view = NetFaultView();
  if (!view.has_value()) return false;
  std::set<std::string> waiting = SuperPodsOf(f);
  for (const auto& pod : (*view)["superPods"]) {
    const std::string id = pod.value("superPodId", "");
    if (!waiting.count(id) || pod.value("detection", "") != "on") continue;
    absl::Time start;
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, pod.value("detectionStart", ""), &start, &err)) {
      return false;
    }
    if (absl::Now() - start < absl::Seconds(f.after_detection_s)) return false;
    if (warmup && pod.value("analysedRounds", int64_t{0}) < 1) return false;
    waiting.erase(id);
  }
  return waiting.empty();
}

void ScenarioRun::InjectAgentEvent(int node, int npu, const FaultSpec& f,
                                   const std::string& assertion) {
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

absl::Status ScenarioRun::SendPublicFault(const FaultRun& run, const std::string& assertion) {
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

void ScenarioRun::Inject(FaultRun& run) {
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
  if (IsSlowNetLink(f)) {
    const std::string link = LinkRootCause(scenario_.cluster, f);
    const bool rack = f.kind == "slow_l1_link";
    run.where = rack ? absl::StrCat("rack-", f.rack, " up p", f.plane)
                     : absl::StrCat("L1-", f.l1, " up p", f.plane);
    if (std::optional<nlohmann::json> view = NetFaultView()) {
      const std::set<std::string> pods = SuperPodsOf(f);
      for (const auto& pod : (*view)["superPods"]) {
        const std::string id = pod.value("superPodId", "");
        if (pods.count(id)) run.net_alarms_before[id] = pod.value("alarmsTotal", int64_t{0});
      }
    }
    pingmesh_->SetSlowLink(rack ? SimPingmesh::Link::kRackToL1 : SimPingmesh::Link::kL1ToL2,
                           std::to_string(f.plane), std::to_string(rack ? f.rack : f.l1),
                           1 + f.magnitude);
    Event(absl::StrCat("injected ", f.label.empty() ? f.kind : f.label, ": ", link.substr(5),
                       " (every path through it takes ", 1 + f.magnitude, " ms)"));
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

}  // namespace clusterd::sim
