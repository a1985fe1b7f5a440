#include "ops.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"
#include "output.h"
#include "pubfault.grpc.pb.h"
#include "recover.grpc.pb.h"

namespace clusterctl {
namespace {

using Json = nlohmann::ordered_json;

// "Ascend910-3" -> "3".
std::string NpuId(const std::string& name) {
  const size_t dash = name.rfind('-');
  return dash == std::string::npos ? name : name.substr(dash + 1);
}

// node -> NPU name -> health ("healthy", "unhealthy", "network-unhealthy", "recovering"),
// from the nodes' device-info ConfigMaps (/api/clusterd/v1/deviceinfo: served with the store
// mirror off).
int ReadNpuHealth(const Globals& g,
                  std::map<std::string, std::map<std::string, std::string>>* out) {
  Json cms;
  if (int rc = FetchJson(g, "/api/clusterd/v1/deviceinfo", &cms); rc != kExitOk) {
    return rc;
  }
  const std::string prefix = "mindx-dl-deviceinfo-";
  for (const Json& cm : cms.value("items", Json::array())) {
    const std::string name = cm["metadata"].value("name", "");
    if (name.rfind(prefix, 0) != 0 || !cm.contains("data")) continue;
    Json cfg = Json::parse(cm["data"].value("DeviceInfoCfg", ""), nullptr, false);
    if (!cfg.is_object() || !cfg.contains("DeviceInfo")) continue;
    auto& node = (*out)[name.substr(prefix.size())];
    const Json list = cfg["DeviceInfo"].value("DeviceList", Json::object());
    // The plain key lists the available NPUs; suffixed keys say what is wrong with the others.
    for (const auto& [key, value] : list.items()) {
      if (!value.is_string() || key.ends_with("-Fault")) continue;
      std::string health = "healthy";
      if (key.ends_with("-NetworkUnhealthy"))
        health = "network-unhealthy";
      else if (key.ends_with("-Unhealthy"))
        health = "unhealthy";
      else if (key.ends_with("-Recovering"))
        health = "recovering";
      for (absl::string_view n : absl::StrSplit(value.get<std::string>(), ',', absl::SkipEmpty())) {
        std::string& slot = node[std::string(n)];
        if (slot.empty() || slot == "healthy") slot = health;
      }
    }
  }
  return kExitOk;
}

std::string ResolveJobId(const Globals& g, const std::string& job, const std::string& ns, int* rc) {
  Json body;
  std::string path = absl::StrCat("/api/clusterd/v1/jobs/", Escape(job));
  if (!ns.empty()) absl::StrAppend(&path, "?namespace=", Escape(ns));
  *rc = FetchJson(g, path, &body);
  return *rc == kExitOk ? body.value("jobId", job) : "";
}

int AnswerOf(const Globals& g, const grpc::Status& st, const ::Status& answer, const char* what) {
  if (!st.ok()) return GrpcFailure(g, st);
  if (answer.code() != 0) {
    std::fprintf(stderr, "error: %s refused (code %d): %s\n", what, answer.code(),
                 answer.info().c_str());
    return kExitError;
  }
  std::printf("%s accepted: %s\n", what, answer.info().c_str());
  return kExitOk;
}

// Reads an OM stream until it ends or `timeout` passes, printing each message.
template <typename Response>
int FollowOmStream(std::unique_ptr<grpc::ClientReader<Response>> reader, grpc::ClientContext& ctx,
                   double timeout_s) {
  std::thread cancel([&ctx, timeout_s] {
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    ctx.TryCancel();
  });
  cancel.detach();  // the process ends after the stream
  Response message;
  int count = 0;
  while (reader->Read(&message)) {
    std::printf("%s\n", message.msg().c_str());
    ++count;
  }
  grpc::Status st = reader->Finish();
  if (!st.ok() && st.error_code() != grpc::StatusCode::CANCELLED) {
    std::fprintf(stderr, "error: the result stream ended: %s\n", st.error_message().c_str());
    return kExitError;
  }
  return count > 0 ? kExitOk : kExitError;
}

}  // namespace

int GetNodes(const Globals& g, const std::string& name) {
  Json nodes;
  std::string path = name.empty() ? "/api/clusterd/v1/nodes"
                                  : absl::StrCat("/api/clusterd/v1/nodes/", Escape(name));
  if (int rc = FetchJson(g, path, &nodes); rc != kExitOk) return rc;
  std::map<std::string, std::map<std::string, std::string>> health;
  if (int rc = ReadNpuHealth(g, &health); rc != kExitOk) return rc;
  Json faults;
  if (int rc = FetchJson(g, "/api/clusterd/v1/faults", &faults); rc != kExitOk) return rc;
  std::map<std::string, int> fault_count;
  std::map<std::string, std::set<std::string>> jobs;
  for (const Json& f : faults.value("items", Json::array())) {
    ++fault_count[f.value("node", "")];
    for (const Json& j : f.value("jobs", Json::array())) jobs[f.value("node", "")].insert(j);
  }
  std::vector<Json> items;
  if (name.empty()) {
    for (const Json& n : nodes.value("items", Json::array())) items.push_back(n);
  } else {
    items.push_back(nodes);
  }
  Json out = {{"kind", "NodeList"}, {"items", Json::array()}};
  std::vector<std::vector<std::string>> rows;
  for (const Json& n : items) {
    const std::string node = n["metadata"].value("name", "");
    std::string ready = "Unknown";
    for (const Json& c : n.value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == "Ready")
        ready = c.value("status", "") == "True" ? "Ready" : "NotReady";
    }
    int total = 0, healthy = 0;
    for (const auto& [npu, h] : health[node]) {
      ++total;
      if (h == "healthy") ++healthy;
    }
    out["items"].push_back({{"name", node},
                            {"ready", ready},
                            {"npus", total},
                            {"healthyNpus", healthy},
                            {"faults", fault_count[node]},
                            {"jobs", jobs[node]}});
    rows.push_back({node, ready, std::to_string(total), std::to_string(healthy),
                    std::to_string(fault_count[node]),
                    jobs[node].empty() ? "<none>" : absl::StrJoin(jobs[node], ",")});
  }
  return Print(g, name.empty() ? out : out["items"][0],
               {"NAME", "STATUS", "NPUS", "HEALTHY", "FAULTS", "JOBS"}, rows);
}

int GetNpus(const Globals& g, const std::string& node_filter) {
  std::map<std::string, std::map<std::string, std::string>> health;
  if (int rc = ReadNpuHealth(g, &health); rc != kExitOk) return rc;
  Json faults;
  std::string path = "/api/clusterd/v1/faults";
  if (!node_filter.empty()) absl::StrAppend(&path, "?node=", Escape(node_filter));
  if (int rc = FetchJson(g, path, &faults); rc != kExitOk) return rc;
  // Which job holds which NPU: the jobs' rank tables (every namespace).
  Json jobs;
  if (int rc = FetchJson(g, "/api/clusterd/v1/jobs", &jobs); rc != kExitOk) return rc;
  std::map<std::pair<std::string, std::string>, std::string> holder;
  for (const Json& j : jobs.value("items", Json::array())) {
    if (j.value("preDeleted", false)) continue;
    const std::string name = absl::StrCat(j.value("namespace", ""), "/", j.value("name", ""));
    for (const Json& p : j.value("placement", Json::array())) {
      for (const Json& npu : p.value("npus", Json::array())) {
        if (npu.is_string()) holder[{p.value("node", ""), npu.get<std::string>()}] = name;
      }
    }
  }
  struct Row {
    std::string level = "-";
    std::vector<std::string> codes;
    std::set<std::string> jobs;
  };
  std::map<std::pair<std::string, std::string>, Row> by_npu;
  for (const Json& f : faults.value("items", Json::array())) {
    Row& r = by_npu[{f.value("node", ""), NpuId(f.value("npu", ""))}];
    r.codes.push_back(f.value("code", ""));
    if (r.level == "-") r.level = f.value("level", "");
    for (const Json& j : f.value("jobs", Json::array())) r.jobs.insert(j);
  }
  // One verdict from both views: clusterd's fault level wins; the device plugin's health says
  // what clusterd's view does not (an NPU it marks unhealthy with no fault code clusterd sees).
  auto verdict = [](const Row& r, const std::string& health) -> std::string {
    if (r.level != "-" && !r.level.empty()) {
      const bool keeps_running =
          r.level == "NotHandleFault" || r.level == "SubHealthFault" || r.level == "PreSeparateNPU";
      return absl::StrCat(keeps_running ? "degraded" : "faulty", " (", r.level, ")");
    }
    if (health != "Healthy" && health != "healthy") return absl::StrCat("unhealthy (", health, ")");
    return "healthy";
  };
  Json out = {{"kind", "NpuList"}, {"items", Json::array()}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& [node, npus] : health) {
    if (!node_filter.empty() && node != node_filter) continue;
    std::vector<std::pair<int, std::string>> ordered;
    for (const auto& [npu, h] : npus) {
      int id = 0;
      if (!absl::SimpleAtoi(NpuId(npu), &id)) id = -1;  // unnumbered: first
      ordered.push_back({id, npu});
    }
    std::sort(ordered.begin(), ordered.end());
    for (const auto& [id, npu] : ordered) {
      const Row& r = by_npu[{node, std::to_string(id)}];
      const std::string& h = npus.at(npu);
      auto held = holder.find({node, std::to_string(id)});
      const std::string job = held == holder.end() ? "" : held->second;
      out["items"].push_back({{"node", node},
                              {"npu", npu},
                              {"verdict", verdict(r, h)},
                              {"health", h},
                              {"level", r.level},
                              {"codes", r.codes},
                              {"job", job},
                              {"faultJobs", r.jobs}});
      rows.push_back({node, npu, verdict(r, h), r.codes.empty() ? "-" : absl::StrJoin(r.codes, ","),
                      job.empty() ? "<none>" : job});
    }
  }
  if (rows.empty() && g.table()) {
    std::fprintf(stderr, "No NPUs found%s.\n",
                 node_filter.empty() ? "" : absl::StrCat(" on ", node_filter).c_str());
    return kExitOk;
  }
  return Print(g, out, {"NODE", "NPU", "VERDICT", "CODES", "JOB"}, rows);
}

int DescribeNode(const Globals& g, const std::string& node) {
  Json n;
  if (int rc = FetchJson(g, absl::StrCat("/api/clusterd/v1/nodes/", Escape(node)), &n);
      rc != kExitOk) {
    return rc;
  }
  Json faults;
  if (int rc = FetchJson(g, absl::StrCat("/api/clusterd/v1/faults?node=", Escape(node)), &faults);
      rc != kExitOk) {
    return rc;
  }
  Json offenders;
  if (int rc = FetchJson(g, "/api/clusterd/v1/offenders", &offenders); rc != kExitOk) return rc;
  Json history = nullptr;
  for (const Json& o : offenders.value("items", Json::array())) {
    if (o.value("node", "") == node) history = o;
  }
  if (!g.table()) {
    return Print(
        g,
        {{"node", n}, {"faults", faults.value("items", Json::array())}, {"faultHistory", history}},
        {}, {});
  }
  const Json metadata = n.value("metadata", Json::object());
  const Json spec = n.value("spec", Json::object());
  std::string ready = "Unknown";
  for (const Json& c : n.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == "Ready")
      ready = c.value("status", "") == "True" ? "Ready" : "NotReady";
  }
  std::vector<std::string> labels, taints;
  const Json node_labels = metadata.value("labels", Json::object());
  for (const auto& [k, v] : node_labels.items()) {
    labels.push_back(absl::StrCat(k, "=", v.is_string() ? v.get<std::string>() : v.dump()));
  }
  for (const Json& t : spec.value("taints", Json::array())) {
    taints.push_back(absl::StrCat(t.value("key", ""), t.contains("value") ? "=" : "",
                                  t.value("value", ""), ":", t.value("effect", "")));
  }
  std::printf("Name:           %s\n", node.c_str());
  std::printf("Ready:          %s\n", ready.c_str());
  std::printf("Unschedulable:  %s\n", spec.value("unschedulable", false) ? "true" : "false");
  std::printf("Taints:         %s\n",
              taints.empty() ? "<none>" : absl::StrJoin(taints, ", ").c_str());
  std::printf("Labels:         %s\n",
              labels.empty() ? "<none>" : absl::StrJoin(labels, "\n                ").c_str());
  std::printf("\nNPUs:\n");
  std::fflush(stdout);
  if (int rc = GetNpus(g, node); rc != kExitOk) return rc;
  std::fflush(stdout);
  std::printf("\nFaults now:\n");
  std::vector<std::vector<std::string>> rows;
  for (const Json& f : faults.value("items", Json::array())) {
    std::vector<std::string> jobs;
    for (const Json& j : f.value("jobs", Json::array()))
      jobs.push_back(j.is_string() ? j.get<std::string>() : j.dump());
    rows.push_back({f.value("npu", ""), f.value("code", ""), f.value("level", ""),
                    f.value("source", ""), f.value("since", ""),
                    jobs.empty() ? "<none>" : absl::StrJoin(jobs, ",")});
  }
  if (rows.empty()) {
    std::printf("  <none>\n");
  } else {
    std::printf("%s",
                RenderTable({"NPU", "CODE", "LEVEL", "SOURCE", "SINCE", "JOBS"}, rows).c_str());
  }
  std::printf("\nFault history:  ");
  if (history.is_null()) {
    std::printf("no fault seen since %s\n", offenders.value("observingSince", "").c_str());
  } else {
    const Json mtbf = history.value("mtbfSeconds", Json());
    std::printf("%lld fault(s) since %s, MTBF %s\n",
                static_cast<long long>(history.value("faults", int64_t{0})),
                offenders.value("observingSince", "").c_str(),
                mtbf.is_number()
                    ? absl::StrCat(static_cast<int64_t>(mtbf.get<double>()), "s").c_str()
                    : "<none>");
    std::printf("Repeat offender: %s\n",
                history.value("offender", false)
                    ? absl::StrCat("yes: ", history.value("reason", "")).c_str()
                    : "no");
  }
  return kExitOk;
}

int DescribeJob(const Globals& g, const std::string& job, const std::string& ns) {
  Json record;
  std::string q = ns.empty() ? "" : absl::StrCat("?namespace=", Escape(ns));
  if (int rc = FetchJson(g, absl::StrCat("/api/clusterd/v1/jobs/", Escape(job), q), &record);
      rc != kExitOk) {
    return rc;
  }
  Json recovery = Json::object();
  {
    auto http = HttpClient(g);
    auto res = http->Get(
        absl::StrCat("/api/clusterd/v1/recovery/", Escape(record.value("jobId", job)), q));
    if (res && res->status == 200) recovery = Json::parse(res->body, nullptr, false);
  }
  Json faults;
  if (int rc = FetchJson(
          g, absl::StrCat("/api/clusterd/v1/faults?job=", Escape(record.value("jobId", job))),
          &faults);
      rc != kExitOk) {
    return rc;
  }
  Json all = {
      {"job", record}, {"recovery", recovery}, {"faults", faults.value("items", Json::array())}};
  if (!g.table()) return Print(g, all, {}, {});
  std::printf("Name:         %s\n", record.value("name", "").c_str());
  std::printf("Namespace:    %s\n", record.value("namespace", "").c_str());
  std::printf("Job ID:       %s\n", record.value("jobId", "").c_str());
  std::printf("Kind:         %s\n", record.value("kind", "").c_str());
  std::printf("PodGroup:     %s\n", record.value("podGroup", "").c_str());
  std::printf("Framework:    %s\n", record.value("framework", "").c_str());
  std::printf("Status:       %s\n", record.value("status", "").c_str());
  std::printf("Pods:         %lld/%lld\n", static_cast<long long>(record.value("pods", 0)),
              static_cast<long long>(record.value("replicas", 0)));
  std::printf("NPUs:         %lld (rank table %s)\n",
              static_cast<long long>(record.value("npus", 0)),
              record.value("rankTableStatus", "").c_str());
  std::printf("Created:      %s\n", record.value("createTime", "").c_str());
  if (recovery.is_object() && !recovery.empty()) {
    std::printf(
        "Recovery:\n  State:      %s (%s)\n  Strategy:   %s\n  Configured: %s\n  Cycles:     "
        "%lld\n  Subscribed: %s\n",
        recovery.value("state", "").c_str(), recovery.value("phase", "").c_str(),
        recovery.value("strategy", "").empty() ? "<none>" : recovery.value("strategy", "").c_str(),
        absl::StrJoin(recovery.value("configuredStrategies", std::vector<std::string>{}), ",")
            .c_str(),
        static_cast<long long>(recovery.value("cycles", 0)),
        recovery.value("subscribed", false) ? "yes" : "no");
    // Not ready while its record cannot be written: its signals and answers are held.
    if (recovery.value("ready", true)) {
      std::printf("  Ready:      yes (record durable)\n");
    } else {
      std::printf(
          "  Ready:      NO: record not durable since %s (%lld failed writes: %s); signals and "
          "answers held\n",
          recovery.value("recordHeldSince", "").c_str(),
          static_cast<long long>(recovery.value("recordFailedWrites", 0)),
          recovery.value("recordError", "").c_str());
    }
  } else {
    std::printf("Recovery:     <no controller: no client has registered>\n");
  }
  std::vector<std::vector<std::string>> rows;
  for (const Json& f : faults.value("items", Json::array())) {
    rows.push_back({f.value("node", ""), f.value("npu", ""), f.value("code", ""),
                    f.value("level", ""), f.value("since", "")});
  }
  if (rows.empty()) {
    std::printf("Faults:       <none>\n");
  } else {
    std::printf("Faults:\n%s",
                RenderTable({"NODE", "NPU", "CODE", "LEVEL", "SINCE"}, rows).c_str());
  }
  if (recovery.is_object() && recovery.contains("history") && !recovery["history"].empty()) {
    std::vector<std::vector<std::string>> history;
    for (const Json& h : recovery["history"]) {
      history.push_back(
          {h.value("at", ""), h.value("from", ""), h.value("event", ""), h.value("to", "")});
    }
    std::printf("Events (current cycle):\n%s",
                RenderTable({"TIME", "FROM", "EVENT", "TO"}, history).c_str());
  }
  return kExitOk;
}

int InjectFault(const Globals& g, const InjectFaultArgs& args) {
  if (args.node.empty()) return Usage("inject fault needs --node");
  if (args.npus.empty()) return Usage("inject fault needs --npu (one or more NPU ids)");
  if (args.code.empty())
    return Usage("inject fault needs --code (a 9-character public fault code)");
  // A node clusterd does not know is accepted (it may join later) but hits no job now: say so.
  {
    auto http = HttpClient(g);
    auto res = http->Get(absl::StrCat("/api/clusterd/v1/nodes/", Escape(args.node)));
    if (res && res->status == 404) {
      std::fprintf(stderr,
                   "warning: clusterd knows no node \"%s\" (clusterctl get nodes); the fault is "
                   "sent, but it touches no job until such a node exists\n",
                   args.node.c_str());
    }
  }
  auto stub = ::PubFault::NewStub(GrpcChannel(g));
  ::PublicFaultRequest request;
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  request.set_id(args.id.empty() ? absl::StrCat("clusterctl-", now_ms) : args.id);
  request.set_timestamp(now_ms);
  request.set_version("1.0");
  request.set_resource(args.resource);
  ::Fault* fault = request.add_faults();
  fault->set_faultid(args.id.empty() ? absl::StrCat("clusterctl-", args.node, "-", args.code)
                                     : args.id);
  fault->set_faulttype(args.fault_type);
  fault->set_faultcode(args.code);
  fault->set_faulttime(now_ms);
  fault->set_assertion(args.assertion);
  fault->set_description(args.description);
  ::PubFaultInfo* influence = fault->add_influence();
  influence->set_nodename(args.node);
  for (int npu : args.npus) influence->add_deviceids(npu);
  grpc::ClientContext ctx;
  SetDeadline(g, ctx);
  ::RespStatus response;
  grpc::Status st = stub->SendPublicFault(&ctx, request, &response);
  if (!st.ok()) return GrpcFailure(g, st);
  if (response.code() != 0) {
    std::fprintf(stderr, "error: the public fault was refused (code %d): %s\n", response.code(),
                 response.info().c_str());
    return kExitError;
  }
  std::printf("public fault %s %s on %s NPU %s accepted\n", args.code.c_str(),
              args.assertion.c_str(), args.node.c_str(), absl::StrJoin(args.npus, ",").c_str());
  return kExitOk;
}

// "NODE:REST" of a switchnic / stresstest argument; false when either side is empty.
static bool SplitNodeSpec(const std::string& spec, std::string* node, std::string* rest) {
  std::vector<std::string> parts = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) return false;
  *node = std::move(parts[0]);
  *rest = std::move(parts[1]);
  return true;
}

int SwitchNic(const Globals& g, const std::string& job, const std::string& ns,
              const std::vector<std::string>& specs, bool wait) {
  if (specs.empty()) return Usage("switchnic needs at least one NODE:DEV=on|off[,DEV=on|off]");
  ::SwitchNics request;
  int rc = kExitOk;
  request.set_jobid(ResolveJobId(g, job, ns, &rc));
  if (rc != kExitOk) return rc;
  for (const std::string& spec : specs) {
    std::string node, devices;
    if (!SplitNodeSpec(spec, &node, &devices)) {
      return Usage(absl::StrCat("\"", spec, "\" is not NODE:DEV=on|off[,DEV=on|off]"));
    }
    ::DeviceList& list = (*request.mutable_nicops())[node];
    for (absl::string_view item : absl::StrSplit(devices, ',', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
      int dev = 0;
      if (kv.size() != 2 || !absl::SimpleAtoi(kv[0], &dev) || (kv[1] != "on" && kv[1] != "off")) {
        return Usage(absl::StrCat("\"", std::string(item), "\" is not DEV=on|off"));
      }
      list.add_dev(kv[0]);
      list.add_op(kv[1] == "on");
    }
  }
  auto stub = ::Recover::NewStub(GrpcChannel(g));
  grpc::ClientContext ctx;
  SetDeadline(g, ctx);
  ::Status answer;
  grpc::Status st = stub->SwitchNicTrack(&ctx, request, &answer);
  if (int rc2 = AnswerOf(g, st, answer, "switchnic"); rc2 != kExitOk || !wait) return rc2;
  grpc::ClientContext stream_ctx;
  ::SwitchNicRequest follow;
  follow.set_jobid(request.jobid());
  return FollowOmStream(stub->SubscribeSwitchNicSignal(&stream_ctx, follow), stream_ctx,
                        std::max(g.timeout_s, 60.0));
}

int StressTest(const Globals& g, const std::string& job, const std::string& ns,
               const std::vector<std::string>& specs, const std::vector<int64_t>& all_nodes_ops,
               bool wait) {
  if (specs.empty() && all_nodes_ops.empty()) {
    return Usage("stresstest needs NODE:OP[,OP] arguments or --all OPS");
  }
  ::StressTestParam request;
  int rc = kExitOk;
  request.set_jobid(ResolveJobId(g, job, ns, &rc));
  if (rc != kExitOk) return rc;
  for (const std::string& spec : specs) {
    std::string node, ops;
    if (!SplitNodeSpec(spec, &node, &ops)) {
      return Usage(absl::StrCat("\"", spec, "\" is not NODE:OP[,OP]"));
    }
    ::StressOpList& list = (*request.mutable_stressparam())[node];
    for (absl::string_view op : absl::StrSplit(ops, ',', absl::SkipEmpty())) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(op, &v))
        return Usage(absl::StrCat("\"", std::string(op), "\" is not an operation number"));
      list.add_ops(v);
    }
  }
  for (int64_t op : all_nodes_ops) request.add_allnodesops(op);
  auto stub = ::Recover::NewStub(GrpcChannel(g));
  grpc::ClientContext ctx;
  SetDeadline(g, ctx);
  ::Status answer;
  grpc::Status st = stub->StressTest(&ctx, request, &answer);
  if (int rc2 = AnswerOf(g, st, answer, "stresstest"); rc2 != kExitOk || !wait) return rc2;
  grpc::ClientContext stream_ctx;
  ::StressTestRequest follow;
  follow.set_jobid(request.jobid());
  return FollowOmStream(stub->SubscribeStressTestResponse(&stream_ctx, follow), stream_ctx,
                        std::max(g.timeout_s, 900.0));
}

int WatchSignals(const Globals& g, const std::string& job, const std::string& ns, double for_s) {
  const absl::Time end = for_s > 0 ? absl::Now() + absl::Seconds(for_s) : absl::InfiniteFuture();
  std::string q = ns.empty() ? "" : absl::StrCat("?namespace=", Escape(ns));
  // What was printed: each transition and each signal once (keyed by time and content), so a
  // new cycle's history and signals simply follow.
  std::set<std::string> printed;
  bool first = true;
  std::printf("%-24s  %-34s  %-26s  %s\n", "TIME", "FROM", "EVENT / SIGNAL", "TO / DETAIL");
  while (absl::Now() < end) {
    auto http = HttpClient(g);
    auto res = http->Get(absl::StrCat("/api/clusterd/v1/recovery/", Escape(job), q));
    if (!res) {
      std::fprintf(stderr, "error: cannot reach clusterd at %s\n", g.http_addr.c_str());
      return kExitUnreachable;
    }
    if (res->status == 200) {
      Json r = Json::parse(res->body, nullptr, false);
      // (time, kind order, columns): transitions and signals in one timeline.
      std::vector<std::tuple<std::string, int, std::string, std::string, std::string>> lines;
      for (const Json& h : r.is_object() ? r.value("history", Json::array()) : Json::array()) {
        lines.emplace_back(h.value("at", ""), 0, h.value("from", ""), h.value("event", ""),
                           h.value("to", ""));
      }
      for (const Json& sig : r.is_object() ? r.value("signals", Json::array()) : Json::array()) {
        std::vector<std::string> detail;
        if (sig.contains("changeStrategy")) {
          detail.push_back(absl::StrCat("strategy=", sig.value("changeStrategy", "")));
        }
        if (sig.contains("actions")) {
          std::vector<std::string> actions;
          for (const Json& a : sig["actions"])
            actions.push_back(a.is_string() ? a.get<std::string>() : a.dump());
          detail.push_back(absl::StrCat("actions=", absl::StrJoin(actions, ",")));
        }
        if (sig.contains("faultRanks")) {
          detail.push_back(absl::StrCat("faultRanks=", sig["faultRanks"].dump()));
        }
        if (!sig.value("queued", true)) detail.push_back("NOT SENT (no stream)");
        lines.emplace_back(sig.value("at", ""), 1, "  -> signal", sig.value("signalType", ""),
                           absl::StrJoin(detail, " "));
      }
      std::sort(lines.begin(), lines.end());
      for (const auto& [at, kind, from, what, to] : lines) {
        if (!printed.insert(absl::StrCat(at, "|", kind, "|", from, "|", what, "|", to)).second) {
          continue;
        }
        std::printf("%-24s  %-34s  %-26s  %s\n", at.c_str(), from.c_str(), what.c_str(),
                    to.c_str());
      }
      std::fflush(stdout);
    } else if (first) {
      std::fprintf(stderr, "waiting: job %s has no recovery controller yet (%d)\n", job.c_str(),
                   res->status);
    }
    first = false;
    absl::SleepFor(absl::Milliseconds(250));
  }
  return kExitOk;
}

}  // namespace clusterctl
