// clusterctl: the operator's CLI for a running clusterd. kubectl-like: `get RESOURCE [NAME]`,
// -n/--namespace, -A, -l, -o table|json|yaml.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cli_parse.h"
#include "ctl_common.h"
#include "grpcpp/channel.h"
#include "httplib.h"
#include "ops.h"
#include "output.h"
#include "profiling.grpc.pb.h"
#include "recover.grpc.pb.h"
#include "store/object_store.h"

namespace {

using clusterctl::EnvOr;
using clusterctl::FetchJson;
using clusterctl::Globals;
using clusterctl::HttpClient;
using clusterctl::kExitError;
using clusterctl::kExitOk;
using clusterctl::kExitUnreachable;
using clusterctl::kExitUsage;
using clusterctl::Print;
using clusterctl::Usage;

// Resource aliases, as kubectl spells them.
const std::map<std::string, std::string>& ResourceAliases() {
  static const auto* aliases = new std::map<std::string, std::string>{{"cm", "configmaps"},
                                                                      {"configmap", "configmaps"},
                                                                      {"configmaps", "configmaps"},
                                                                      {"po", "pods"},
                                                                      {"pod", "pods"},
                                                                      {"pods", "pods"},
                                                                      {"no", "nodes"},
                                                                      {"node", "nodes"},
                                                                      {"nodes", "nodes"},
                                                                      {"pg", "podgroups"},
                                                                      {"podgroup", "podgroups"},
                                                                      {"podgroups", "podgroups"},
                                                                      {"ascendjob", "ascendjobs"},
                                                                      {"ascendjobs", "ascendjobs"},
                                                                      {"lease", "leases"},
                                                                      {"leases", "leases"},
                                                                      {"ev", "events"},
                                                                      {"event", "events"},
                                                                      {"events", "events"},
                                                                      {"vcjob", "jobs"},
                                                                      {"vcjobs", "jobs"}};
  return *aliases;
}

int Health(const Globals& g) {
  nlohmann::ordered_json report = nlohmann::ordered_json::object();
  bool healthy = true;

  auto stub = Recover::NewStub(GrpcChannel(g));
  grpc::ClientContext ctx;
  SetDeadline(g, ctx);
  ClientInfo req;
  req.set_role("clusterctl");
  Status resp;
  grpc::Status st = stub->HealthCheck(&ctx, req, &resp);
  std::string grpc_detail = st.ok() ? absl::StrCat("code=", resp.code(), " ", resp.info())
                                    : absl::StrCat("unreachable: ", st.error_message());
  healthy &= st.ok() && resp.code() == 0;
  report["grpc"] = {
      {"address", g.grpc_addr}, {"ok", st.ok() && resp.code() == 0}, {"detail", grpc_detail}};

  auto http = HttpClient(g);
  for (const char* path : {"/healthz", "/readyz"}) {
    auto res = http->Get(path);
    bool ok = res && res->status == 200;
    std::string detail = res ? absl::StrCat(res->status, " ", res->body)
                             : absl::StrCat("unreachable: ", httplib::to_string(res.error()));
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    healthy &= ok;
    report[path + 1] = {{"address", g.http_addr}, {"ok", ok}, {"detail", detail}};
  }

  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, item] : report.items()) {
    rows.push_back({name, item["address"].get<std::string>(),
                    item["ok"].get<bool>() ? "ok" : "FAIL", item["detail"].get<std::string>()});
  }
  int rc = Print(g, report, {"CHECK", "ADDRESS", "STATUS", "DETAIL"}, rows);
  if (rc != kExitOk) return rc;
  return healthy ? kExitOk : kExitUnreachable;
}

std::vector<std::string> RowFor(const std::string& resource, const nlohmann::ordered_json& o,
                                bool all_namespaces, absl::Time now) {
  const auto& md = o.value("metadata", nlohmann::ordered_json::object());
  std::vector<std::string> row;
  if (all_namespaces && !clusterd::store::IsClusterScoped(resource)) {
    row.push_back(md.value("namespace", ""));
  }
  row.push_back(md.value("name", ""));
  if (resource == "configmaps") {
    row.push_back(
        std::to_string(o.contains("data") && o["data"].is_object() ? o["data"].size() : 0));
  } else if (resource == "pods") {
    row.push_back(o.contains("spec") ? o["spec"].value("nodeName", "") : "");
    row.push_back(o.contains("status") ? o["status"].value("phase", "") : "");
  }
  row.push_back(clusterctl::Age(md.value("creationTimestamp", ""), now));
  return row;
}

int Get(const Globals& g, const std::string& kind, const std::string& name, const std::string& ns,
        bool all_namespaces, const std::string& selector) {
  auto alias = ResourceAliases().find(kind);
  if (alias == ResourceAliases().end()) {
    std::vector<std::string> known;
    for (const auto& [k, v] : ResourceAliases()) known.push_back(k);
    return Usage(
        absl::StrCat("unknown resource type \"", kind, "\"; known: ", absl::StrJoin(known, ", ")));
  }
  const std::string& resource = alias->second;
  if (all_namespaces && !name.empty()) {
    return Usage("a resource cannot be retrieved by name across all namespaces");
  }
  std::string path;
  if (clusterd::store::IsClusterScoped(resource) || all_namespaces) {
    path = absl::StrCat("/api/v1/", resource);
  } else {
    path = absl::StrCat("/api/v1/namespaces/", ns, "/", resource);
  }
  if (!name.empty()) absl::StrAppend(&path, "/", name);
  if (!selector.empty())
    absl::StrAppend(&path, "?labelSelector=", httplib::detail::encode_query_param(selector));

  nlohmann::ordered_json body;
  if (int rc = FetchJson(g, path, &body); rc != kExitOk) return rc;
  bool show_ns = all_namespaces && !clusterd::store::IsClusterScoped(resource);
  std::vector<std::string> headers;
  if (show_ns) headers.push_back("NAMESPACE");
  headers.push_back("NAME");
  if (resource == "configmaps") headers.push_back("DATA");
  if (resource == "pods") {
    headers.push_back("NODE");
    headers.push_back("STATUS");
  }
  headers.push_back("AGE");
  std::vector<std::vector<std::string>> rows;
  absl::Time now = absl::Now();
  if (!name.empty()) {
    rows.push_back(RowFor(resource, body, show_ns, now));
  } else {
    for (const auto& item : body["items"]) rows.push_back(RowFor(resource, item, show_ns, now));
    if (rows.empty() && g.table()) {
      std::fprintf(stderr, "No resources found%s.\n",
                   show_ns || clusterd::store::IsClusterScoped(resource)
                       ? ""
                       : absl::StrCat(" in ", ns, " namespace").c_str());
      return kExitOk;
    }
  }
  return Print(g, body, headers, rows);
}

// ---- the job registry (clusterd's /api/clusterd/v1 endpoints) ----

std::string JobPath(const std::string& job, const std::string& ns, const std::string& suffix) {
  std::string path =
      absl::StrCat("/api/clusterd/v1/jobs/", httplib::detail::encode_query_param(job), suffix);
  if (!ns.empty()) absl::StrAppend(&path, "?namespace=", httplib::detail::encode_query_param(ns));
  return path;
}

// One per-job endpoint of clusterd, listed (`<base>`, in `ns` unless every namespace) or for one
// job (`<base>/<name>?namespace=<ns>`): `body` is what the server sent, `items` the jobs in it.
struct JobListing {
  nlohmann::ordered_json body;
  std::vector<nlohmann::ordered_json> items;
};

// Fetches the listing; an empty list in table mode is reported as "No <what> found ..." on
// stderr and leaves `items` empty, which the caller takes as done.
int FetchJobListing(const Globals& g, const std::string& base, const std::string& name,
                    const std::string& ns, bool all_namespaces, const char* what, JobListing* out) {
  std::string path =
      name.empty() ? base : absl::StrCat(base, "/", httplib::detail::encode_query_param(name));
  if (!name.empty() || !all_namespaces) {
    absl::StrAppend(&path, "?namespace=", httplib::detail::encode_query_param(ns));
  }
  if (int rc = FetchJson(g, path, &out->body); rc != kExitOk) return rc;
  if (!name.empty()) {
    out->items.push_back(out->body);
  } else if (out->body.contains("items") && out->body["items"].is_array()) {
    for (const auto& item : out->body["items"]) out->items.push_back(item);
  }
  if (out->items.empty() && g.table()) {
    std::fprintf(stderr, "No %s found%s.\n", what,
                 all_namespaces ? "" : absl::StrCat(" in ", ns, " namespace").c_str());
  }
  return kExitOk;
}

// The column headers, with NAMESPACE first when every namespace is listed.
std::vector<std::string> Headers(bool all_namespaces, std::initializer_list<const char*> names) {
  std::vector<std::string> headers;
  if (all_namespaces) headers.push_back("NAMESPACE");
  headers.insert(headers.end(), names.begin(), names.end());
  return headers;
}

// A listing printed as -o json/yaml, or as a table of `rows` when it is a list.
int PrintListing(const Globals& g, const std::string& name, const JobListing& listing,
                 const std::vector<std::string>& headers,
                 const std::vector<std::vector<std::string>>& rows) {
  return Print(g, name.empty() ? listing.body : listing.items.front(), headers, rows);
}

int GetJobs(const Globals& g, const std::string& name, const std::string& ns, bool all_namespaces) {
  JobListing listing;
  if (int rc =
          FetchJobListing(g, "/api/clusterd/v1/jobs", name, ns, all_namespaces, "jobs", &listing);
      rc != kExitOk || (listing.items.empty() && g.table())) {
    return rc;
  }
  const std::vector<nlohmann::ordered_json>& jobs = listing.items;
  std::vector<std::string> headers = Headers(
      all_namespaces, {"NAME", "JOB ID", "STATUS", "FRAMEWORK", "REPLICAS", "PODS", "NPUS", "AGE"});
  if (g.wide()) {
    for (const char* h : {"PODGROUP", "KIND", "RANK TABLE", "NODES"}) headers.push_back(h);
  }
  std::vector<std::vector<std::string>> rows;
  const absl::Time now = absl::Now();
  for (const auto& j : jobs) {
    std::vector<std::string> row;
    if (all_namespaces) row.push_back(j.value("namespace", ""));
    std::string status = j.value("status", "");
    if (j.value("preDeleted", false)) status += " (deleted)";
    row.push_back(j.value("name", ""));
    row.push_back(j.value("jobId", ""));
    row.push_back(status);
    row.push_back(j.value("framework", ""));
    row.push_back(std::to_string(j.value("replicas", 0)));
    row.push_back(std::to_string(j.value("pods", 0)));
    row.push_back(std::to_string(j.value("npus", 0)));
    row.push_back(clusterctl::Age(j.value("createTime", ""), now));
    if (g.wide()) {
      row.push_back(j.value("podGroup", ""));
      row.push_back(j.value("kind", ""));
      row.push_back(j.value("rankTableStatus", "").empty() ? "-" : j.value("rankTableStatus", ""));
      std::vector<std::string> nodes;
      for (const auto& p : j.value("placement", nlohmann::ordered_json::array())) {
        nodes.push_back(p.value("node", ""));
      }
      row.push_back(nodes.empty() ? "<none>" : absl::StrJoin(nodes, ","));
    }
    rows.push_back(std::move(row));
  }
  return PrintListing(g, name, listing, headers, rows);
}

// ---- the fault centre (clusterctl get faults [--node N] [--job J]) ----

int GetFaults(const Globals& g, const std::string& node, const std::string& job) {
  std::string path = "/api/clusterd/v1/faults";
  std::string sep = "?";
  if (!node.empty()) {
    absl::StrAppend(&path, sep, "node=", httplib::detail::encode_query_param(node));
    sep = "&";
  }
  if (!job.empty()) absl::StrAppend(&path, sep, "job=", httplib::detail::encode_query_param(job));
  nlohmann::ordered_json body;
  if (int rc = FetchJson(g, path, &body); rc != kExitOk) return rc;
  std::vector<std::vector<std::string>> rows;
  const absl::Time now = absl::Now();
  for (const auto& f : body["items"]) {
    std::string jobs;
    if (f.contains("jobs") && f["jobs"].is_array()) {
      for (const auto& j : f["jobs"]) jobs += (jobs.empty() ? "" : ",") + j.get<std::string>();
    }
    const std::string since = f.value("since", "");
    rows.push_back({f.value("node", ""), f.value("npu", ""), f.value("code", ""),
                    f.value("level", ""), f.value("source", ""),
                    since.empty() ? "" : since + " (" + clusterctl::Age(since, now) + ")",
                    jobs.empty() ? "<none>" : jobs});
  }
  if (rows.empty() && g.table()) {
    std::fprintf(stderr, "No faults%s.\n",
                 node.empty() && job.empty() ? "" : " matching the filter");
    return kExitOk;
  }
  return Print(g, body, {"NODE", "NPU", "CODE", "LEVEL", "SOURCE", "SINCE", "JOBS"}, rows);
}

// ---- the fault centre's configuration (clusterctl get configuration) ----

// One row per part: what is in force and where it came from, so an operator sees an edit of
// clusterd-config-cm or publicCustomization.json take effect.
int GetConfiguration(const Globals& g) {
  nlohmann::ordered_json body;
  if (int rc = FetchJson(g, "/api/clusterd/v1/configuration", &body); rc != kExitOk) return rc;
  const auto& m = body["manualSeparation"];
  const auto& p = body["publicFaults"];
  const auto& r = body["relationFaults"];
  std::string resources;
  for (const auto& name : p["resources"]) {
    absl::StrAppend(&resources, resources.empty() ? "" : ",", name.get<std::string>());
  }
  std::vector<std::vector<std::string>> rows = {
      {"manual-separation",
       absl::StrCat(m.value("enabled", false) ? "enabled" : "disabled",
                    " window=", m.value("faultWindowHours", int64_t{0}),
                    "h threshold=", m.value("faultThreshold", int64_t{0}),
                    " release=", m.value("faultFreeHours", int64_t{0}), "h"),
       m.value("source", ""), m.value("appliedAt", "")},
      {"public-faults",
       absl::StrCat(p.value("codes", int64_t{0}), " codes, senders ",
                    resources.empty() ? "<none>" : resources),
       p.value("source", ""), ""},
      {"relation-faults",
       absl::StrCat(r.value("rules", int64_t{0}), " rules, ", r.value("durations", int64_t{0}),
                    " durations"),
       r.value("dataDir", ""), ""}};
  const int rc = Print(g, body, {"PART", "IN FORCE", "SOURCE", "APPLIED"}, rows);
  if (g.table()) {
    for (const auto& note : body["notes"])
      std::printf("note: %s\n", note.get<std::string>().c_str());
  }
  return rc;
}

// ---- the recovery controllers (clusterctl get recovery [JOB]) ----

std::string FaultRanksText(const nlohmann::ordered_json& j) {
  std::string out;
  if (j.contains("faultRanks") && j["faultRanks"].is_array()) {
    for (const auto& f : j["faultRanks"]) {
      absl::StrAppend(&out, out.empty() ? "" : ",", f.value("rank", int64_t{0}), ":",
                      f.value("type", 0));
    }
  }
  return out.empty() ? "<none>" : out;
}

int GetRecovery(const Globals& g, const std::string& name, const std::string& ns,
                bool all_namespaces) {
  JobListing listing;
  if (int rc = FetchJobListing(g, "/api/clusterd/v1/recovery", name, ns, all_namespaces,
                               "recovery controllers", &listing);
      rc != kExitOk || (listing.items.empty() && g.table())) {
    return rc;
  }
  const std::vector<nlohmann::ordered_json>& jobs = listing.items;
  const std::vector<std::string> headers = Headers(
      all_namespaces,
      {"NAME", "JOB ID", "STATE", "STRATEGY", "FAULT RANKS", "UUID", "SUBSCRIBED", "STEPS"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : jobs) {
    std::vector<std::string> row;
    if (all_namespaces) row.push_back(j.value("namespace", ""));
    const std::string strategy = j.value("strategy", "");
    const std::string uuid = j.value("uuid", "");
    row.push_back(j.value("name", ""));
    row.push_back(j.value("jobId", ""));
    row.push_back(j.value("state", ""));
    row.push_back(strategy.empty() ? "<none>" : strategy);
    row.push_back(FaultRanksText(j));
    row.push_back(uuid.empty() ? "<none>" : uuid);
    row.push_back(j.value("subscribed", false) ? "yes" : "no");
    row.push_back(std::to_string(j.contains("history") ? j["history"].size() : 0));
    rows.push_back(std::move(row));
  }
  if (name.empty() || !g.table()) return PrintListing(g, name, listing, headers, rows);
  // One job as a table: the summary, then the history of the current cycle.
  std::cout << clusterctl::RenderTable(headers, rows);
  std::vector<std::vector<std::string>> history;
  if (jobs.front().contains("history")) {
    for (const auto& h : jobs.front()["history"]) {
      history.push_back(
          {h.value("at", ""), h.value("from", ""), h.value("event", ""), h.value("to", "")});
    }
  }
  if (history.empty()) {
    std::cout << "\nNo recovery cycle yet.\n";
  } else {
    std::cout << "\n" << clusterctl::RenderTable({"TIME", "FROM", "EVENT", "TO"}, history);
  }
  return kExitOk;
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// ---- goodput and repeat offenders (clusterctl get goodput [JOB], get offenders) ----

// Seconds as a person reads them: 42s, 12m05s, 3h20m, 2d04h.
std::string SpanText(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds < 0 ? 0 : seconds + 0.5);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>(s % 86400 / 3600));
  }
  return buf;
}

std::string RatioText(const nlohmann::ordered_json& v) {
  if (!v.is_number()) return "<none>";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.1f%%", v.get<double>() * 100.0);
  return buf;
}

// The largest cause of lost time: "rescheduling 3m10s", or "<none>".
std::string TopLossText(const nlohmann::ordered_json& lost) {
  std::string top;
  double most = 0;
  if (lost.is_object()) {
    for (const auto& [cause, seconds] : lost.items()) {
      if (seconds.is_number() && seconds.get<double>() > most) {
        most = seconds.get<double>();
        top = cause;
      }
    }
  }
  return top.empty() ? "<none>" : absl::StrCat(top, " ", SpanText(most));
}

int GetGoodput(const Globals& g, const std::string& name, const std::string& ns,
               bool all_namespaces) {
  JobListing listing;
  if (int rc = FetchJobListing(g, "/api/clusterd/v1/goodput", name, ns, all_namespaces,
                               "goodput records", &listing);
      rc != kExitOk || (listing.items.empty() && g.table())) {
    return rc;
  }
  const std::vector<std::string> headers =
      Headers(all_namespaces, {"JOB", "STATUS", "NOW", "ETTR", "WINDOW ETTR", "TRAINING", "LOST",
                               "MOST LOST TO", "FAULTS", "CYCLES"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : listing.items) {
    std::vector<std::string> row;
    if (all_namespaces) row.push_back(j.value("namespace", ""));
    row.push_back(j.value("name", ""));
    row.push_back(j.value("status", ""));
    row.push_back(j.value("now", ""));
    row.push_back(RatioText(j.value("ettr", nlohmann::ordered_json())));
    row.push_back(RatioText(j.value("windowEttr", nlohmann::ordered_json())));
    const double training = j.value("trainingSeconds", 0.0);
    row.push_back(SpanText(training));
    row.push_back(SpanText(j.value("countedSeconds", 0.0) - training));
    row.push_back(TopLossText(j.value("lostSeconds", nlohmann::ordered_json::object())));
    row.push_back(std::to_string(j.value("faults", 0)));
    row.push_back(std::to_string(j.value("recoveryCycles", 0)));
    rows.push_back(std::move(row));
  }
  if (name.empty() || !g.table()) return PrintListing(g, name, listing, headers, rows);
  // One job: the table, then its timeline.
  if (int rc = PrintListing(g, name, listing, headers, rows); rc != kExitOk) return rc;
  std::vector<std::vector<std::string>> timeline;
  for (const auto& i : listing.items.front().value("timeline", nlohmann::ordered_json::array())) {
    timeline.push_back({i.value("start", ""), i["end"].is_string() ? i.value("end", "") : "(now)",
                        i.value("use", ""), SpanText(i.value("seconds", 0.0)),
                        i.value("strategy", "")});
  }
  std::printf("\n%s",
              clusterctl::RenderTable({"FROM", "TO", "USE", "FOR", "STRATEGY"}, timeline).c_str());
  return kExitOk;
}

int GetOffenders(const Globals& g, const std::string& node) {
  nlohmann::ordered_json body;
  if (int rc = FetchJson(g, "/api/clusterd/v1/offenders", &body); rc != kExitOk) return rc;
  std::vector<std::vector<std::string>> rows;
  nlohmann::ordered_json shown = body;
  shown["items"] = nlohmann::ordered_json::array();
  for (const auto& n : body.value("items", nlohmann::ordered_json::array())) {
    if (!node.empty() && n.value("node", "") != node) continue;
    shown["items"].push_back(n);
    std::string levels;
    const nlohmann::ordered_json by_level = n.value("byLevel", nlohmann::ordered_json::object());
    for (const auto& [level, count] : by_level.items()) {
      absl::StrAppend(&levels, levels.empty() ? "" : ",", level, "=", count.dump());
    }
    const auto mtbf = n.value("mtbfSeconds", nlohmann::ordered_json());
    rows.push_back({n.value("node", ""), std::to_string(n.value("faults", 0)),
                    levels.empty() ? "<none>" : levels,
                    mtbf.is_number() ? SpanText(mtbf.get<double>()) : "<none>",
                    n.value("offender", false) ? "yes" : "no",
                    n.value("reason", "").empty() ? "<none>" : n.value("reason", "")});
  }
  if (g.table()) {
    const auto policy = body.value("policy", nlohmann::ordered_json::object());
    std::fprintf(stderr, "Repeat-offender policy: %s\n",
                 policy.value("enabled", false)
                     ? absl::StrCat(policy.value("faults", 0), " faults within ",
                                    FormatNumber(policy.value("windowHours", 0.0)), "h, action ",
                                    policy.value("action", "none"))
                           .c_str()
                     : "off (cluster-system/clusterd-config-cm, key repeat-offender-policy.json)");
    if (rows.empty()) {
      std::fprintf(stderr, "No faults seen%s.\n",
                   node.empty() ? "" : absl::StrCat(" on node ", node).c_str());
      return kExitOk;
    }
  }
  return Print(g, shown, {"NODE", "FAULTS", "BY LEVEL", "MTBF", "OFFENDER", "REASON"}, rows);
}

// ---- the slow-node detections (clusterctl get slownode [JOB]) ----

// The stepTime baselines μ (ns in the JSON) as milliseconds: one value, or the range over ranks.
std::string BaselineText(const nlohmann::ordered_json& ranks) {
  double lo = 0, hi = 0;
  int64_t learned = 0;
  for (const auto& r : ranks) {
    if (r.value("baselineSamples", int64_t{0}) <= 0) continue;
    const double ms = r.value("baselineMean", 0.0) / 1e6;
    lo = learned == 0 ? ms : std::min(lo, ms);
    hi = learned == 0 ? ms : std::max(hi, ms);
    ++learned;
  }
  if (learned == 0) return "<none>";
  char buf[64];
  if (static_cast<int64_t>(lo) == static_cast<int64_t>(hi)) {
    std::snprintf(buf, sizeof(buf), "%.0fms", lo);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f-%.0fms", lo, hi);
  }
  return buf;
}

bool IsSlowResult(const nlohmann::ordered_json& result) {
  const auto slow = result.find("isSlow");  // 0/1 in the result JSON
  return slow != result.end() &&
         (slow->is_boolean() ? slow->get<bool>() : slow->is_number() && slow->get<double>() != 0);
}

// The ranks the last cluster result localized: slow computing cards, else slow communication
// domains.
std::string SlowRanksText(const nlohmann::ordered_json& j) {
  if (!j.contains("lastResult") || !j["lastResult"].is_object()) return "<none>";
  const auto& r = j["lastResult"];
  std::string out;
  for (const char* key : {"slowCalculateRanks", "slowCommunicationDomains"}) {
    if (!r.contains(key) || !r[key].is_array()) continue;
    for (const auto& v : r[key]) absl::StrAppend(&out, out.empty() ? "" : ",", v.dump());
    if (!out.empty()) break;
  }
  return out.empty() ? "<none>" : out;
}

std::string LatestResultText(const nlohmann::ordered_json& j) {
  if (!j.contains("lastResult") || !j["lastResult"].is_object()) {
    const std::string reason = j.value("reason", "");
    return reason.empty() ? "<none>" : reason;
  }
  const auto& r = j["lastResult"];
  if (!IsSlowResult(r)) return "normal";
  const auto level = r.find("degradationLevel");
  return level != r.end() && level->is_string()
             ? absl::StrCat("slow (", level->get<std::string>(), ")")
             : "slow";
}

int GetSlowNode(const Globals& g, const std::string& name, const std::string& ns,
                bool all_namespaces) {
  JobListing listing;
  if (int rc = FetchJobListing(g, "/api/clusterd/v1/slownode", name, ns, all_namespaces,
                               "slow-node detections", &listing);
      rc != kExitOk || (listing.items.empty() && g.table())) {
    return rc;
  }
  const std::vector<nlohmann::ordered_json>& jobs = listing.items;
  const std::vector<std::string> headers =
      Headers(all_namespaces, {"JOB", "STATE", "STEP", "BASELINE", "SLOW RANKS", "LATEST RESULT"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : jobs) {
    std::vector<std::string> row;
    if (all_namespaces) row.push_back(j.value("namespace", ""));
    const std::string job = j.value("jobName", "");
    const nlohmann::ordered_json ranks =
        j.contains("ranks") && j["ranks"].is_array() ? j["ranks"] : nlohmann::ordered_json::array();
    row.push_back(job.empty() ? absl::StrCat("<", j.value("configMap", ""), ">") : job);
    row.push_back(j.value("state", ""));
    row.push_back(std::to_string(j.value("step", 0)));
    row.push_back(BaselineText(ranks));
    row.push_back(SlowRanksText(j));
    row.push_back(LatestResultText(j));
    rows.push_back(std::move(row));
  }
  if (name.empty() || !g.table()) return PrintListing(g, name, listing, headers, rows);
  // One job as a table: the summary, then one line per rank.
  std::cout << clusterctl::RenderTable(headers, rows);
  std::vector<std::vector<std::string>> per_rank;
  if (jobs.front().contains("ranks") && jobs.front()["ranks"].is_array()) {
    for (const auto& r : jobs.front()["ranks"]) {
      per_rank.push_back({std::to_string(r.value("rank", int64_t{0})), r.value("node", ""),
                          FormatNumber(r.value("baselineMean", 0.0) / 1e6),
                          FormatNumber(r.value("baselineSigma", 0.0) / 1e6),
                          std::to_string(r.value("baselineSamples", int64_t{0})),
                          std::to_string(r.value("lastStep", int64_t{0})), r.value("result", "")});
    }
  }
  if (!per_rank.empty()) {
    std::cout << "\n"
              << clusterctl::RenderTable(
                     {"RANK", "NODE", "BASELINE MS", "SIGMA MS", "SAMPLES", "LAST STEP", "RESULT"},
                     per_rank);
  }
  return kExitOk;
}

// ---- the slow-network detection (clusterctl get netfault [SUPERPOD]) ----

// One row per super pod of the pingmesh analysis (jobs-ranktable-diagnosis.md §7), or one super
// pod; the last alarms as "src->dst type" (fault type 0 delay, 1 loss, 2 disconnect).
int GetNetFault(const Globals& g, const std::string& super_pod) {
  nlohmann::ordered_json body;
  if (int rc = FetchJson(g, "/api/clusterd/v1/netfault", &body); rc != kExitOk) return rc;
  std::vector<std::vector<std::string>> rows;
  nlohmann::ordered_json selected = nlohmann::ordered_json::array();
  const auto pods = body.contains("superPods") && body["superPods"].is_array()
                        ? body["superPods"]
                        : nlohmann::ordered_json::array();
  for (const auto& p : pods) {
    const std::string id = p.value("superPodId", "");
    if (!super_pod.empty() && id != super_pod) continue;
    selected.push_back(p);
    std::string alarms;
    if (p.contains("lastAlarms") && p["lastAlarms"].is_array()) {
      for (const auto& a : p["lastAlarms"]) {
        static constexpr const char* kTypes[] = {"delay", "loss", "disconnect"};
        const int64_t type = a.value("faultType", int64_t{0});
        absl::StrAppend(&alarms, alarms.empty() ? "" : ",", a.value("srcId", ""), "->",
                        a.value("dstId", ""), " ", type >= 0 && type <= 2 ? kTypes[type] : "?");
      }
    }
    const std::string error = p.value("lastError", "");
    rows.push_back({id, std::to_string(p.value("nodes", int64_t{0})),
                    std::to_string(p.value("npus", int64_t{0})), p.value("detection", ""),
                    absl::StrCat(p.value("period", int64_t{0}), "s"),
                    std::to_string(p.value("rounds", int64_t{0})),
                    std::to_string(p.value("faultsSent", int64_t{0})),
                    alarms.empty() ? "<none>" : alarms, error.empty() ? "<none>" : error});
  }
  if (!super_pod.empty() && selected.empty()) {
    std::fprintf(stderr, "error: super pod %s is not known to the slow-network detection\n",
                 super_pod.c_str());
    return kExitError;
  }
  if (rows.empty() && g.table()) {
    std::fprintf(stderr, "No super pods (detection %s%s).\n", body.value("detection", "").c_str(),
                 body.value("rootReady", false) ? "" : ", root not ready");
    return kExitOk;
  }
  return Print(g, super_pod.empty() ? body : selected.front(),
               {"SUPER POD", "NODES", "NPUS", "DETECTION", "PERIOD", "ROUNDS", "FAULTS SENT",
                "LAST ALARMS", "LAST ERROR"},
               rows);
}

int GetRankTable(const Globals& g, const std::string& job, const std::string& ns) {
  if (job.empty()) return Usage("get ranktable needs a job (name or id)");
  nlohmann::ordered_json table;
  if (int rc = FetchJson(g, JobPath(job, ns, "/ranktable"), &table); rc != kExitOk) return rc;
  std::vector<std::vector<std::string>> rows;
  if (table.contains("server_list") && table["server_list"].is_array()) {
    for (const auto& s : table["server_list"]) {
      std::string first, last;
      if (s.contains("device") && !s["device"].empty()) {
        first = s["device"].front().value("rank_id", "");
        last = s["device"].back().value("rank_id", "");
      }
      rows.push_back({s.value("pod_name", ""), s.value("server_name", ""), s.value("server_id", ""),
                      s.value("host_ip", ""), first == last ? first : first + "-" + last,
                      std::to_string(s.contains("device") ? s["device"].size() : 0)});
    }
  }
  if (g.table()) {
    std::printf("status: %s, servers: %s\n", table.value("status", "").c_str(),
                table.value("server_count", "").c_str());
  }
  return Print(g, table, {"POD", "NODE", "SERVER ID", "HOST IP", "RANKS", "NPUS"}, rows);
}

// datatrace on|off|get JOB: the job's profiling switches (TrainingDataTrace service).
int DataTrace(const Globals& g, const std::string& action, const std::string& job,
              const std::string& ns, bool communication) {
  if (action != "on" && action != "off" && action != "get") {
    return Usage(absl::StrCat("datatrace wants on, off or get, not \"", action, "\""));
  }
  auto stub = TrainingDataTrace::NewStub(GrpcChannel(g));
  grpc::ClientContext ctx;
  SetDeadline(g, ctx);
  const std::string ns_name = absl::StrCat(ns, "/", job);
  nlohmann::ordered_json report;
  int code = 0;
  std::string message;
  grpc::Status st;
  ::ProfilingSwitch sw;
  if (action == "get") {
    DataStatusReq req;
    req.set_jobnsname(ns_name);
    DataStatusRes res;
    st = stub->GetTrainingDataTraceSwitch(&ctx, req, &res);
    code = res.code();
    message = res.message();
    sw = res.profilingswitch();
  } else {
    const std::string v = action;
    DataTypeReq req;
    req.set_jobnsname(ns_name);
    req.mutable_profilingswitch()->set_communicationoperator(communication ? v : "off");
    req.mutable_profilingswitch()->set_step(v);
    req.mutable_profilingswitch()->set_savecheckpoint(v);
    req.mutable_profilingswitch()->set_fp(v);
    req.mutable_profilingswitch()->set_dataloader(v);
    sw = req.profilingswitch();
    DataTypeRes res;
    st = stub->ModifyTrainingDataTraceSwitch(&ctx, req, &res);
    code = res.code();
    message = res.message();
  }
  if (!st.ok()) return GrpcFailure(g, st);
  report = {{"job", ns_name},
            {"code", code},
            {"message", message},
            {"profilingSwitch",
             {{"CommunicationOperator", sw.communicationoperator()},
              {"Step", sw.step()},
              {"SaveCheckpoint", sw.savecheckpoint()},
              {"FP", sw.fp()},
              {"DataLoader", sw.dataloader()}}}};
  int rc =
      Print(g, report,
            {"JOB", "CODE", "COMMUNICATION", "STEP", "CHECKPOINT", "FP", "DATALOADER", "MESSAGE"},
            {{ns_name, std::to_string(code), sw.communicationoperator(), sw.step(),
              sw.savecheckpoint(), sw.fp(), sw.dataloader(), message}});
  if (rc != kExitOk) return rc;
  return code == 200 ? kExitOk : kExitError;
}

// One `get`: the resource named by `kind` (clusterd's views, else the store's objects).
int GetOnce(const Globals& g, const std::string& kind, const std::string& name,
            const std::string& ns, bool all_namespaces, const std::string& selector,
            const std::string& fault_node, const std::string& fault_job) {
  if (kind == "jobs" || kind == "job") return GetJobs(g, name, ns, all_namespaces);
  if (kind == "ranktable" || kind == "ranktables" || kind == "rt") return GetRankTable(g, name, ns);
  if (kind == "faults" || kind == "fault") return GetFaults(g, fault_node, fault_job);
  if (kind == "configuration" || kind == "config") return GetConfiguration(g);
  if (kind == "recovery" || kind == "recoveries") return GetRecovery(g, name, ns, all_namespaces);
  if (kind == "slownode" || kind == "slownodes") return GetSlowNode(g, name, ns, all_namespaces);
  if (kind == "netfault" || kind == "netfaults") return GetNetFault(g, name);
  if (kind == "goodput") return GetGoodput(g, name, ns, all_namespaces);
  if (kind == "episodes" || kind == "episode") return clusterctl::GetEpisodes(g, name);
  if (kind == "offenders" || kind == "offender")
    return GetOffenders(g, fault_node.empty() ? name : fault_node);
  if (kind == "nodes" || kind == "node" || kind == "no") return clusterctl::GetNodes(g, name);
  if (kind == "npus" || kind == "npu")
    return clusterctl::GetNpus(g, fault_node.empty() ? name : fault_node);
  return Get(g, kind, name, ns, all_namespaces, selector);
}

// Runs `fn` with stdout and stderr going to a temporary file; returns what it printed.
std::string CaptureOutput(const std::function<int()>& fn, int* rc) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  FILE* tmp = std::tmpfile();
  const int saved_out = dup(STDOUT_FILENO);
  const int saved_err = dup(STDERR_FILENO);
  if (tmp == nullptr || saved_out < 0 || saved_err < 0) {
    if (tmp != nullptr) std::fclose(tmp);
    if (saved_out >= 0) close(saved_out);
    if (saved_err >= 0) close(saved_err);
    *rc = fn();
    return "";
  }
  dup2(fileno(tmp), STDOUT_FILENO);
  dup2(fileno(tmp), STDERR_FILENO);
  *rc = fn();
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  dup2(saved_out, STDOUT_FILENO);
  dup2(saved_err, STDERR_FILENO);
  close(saved_out);
  close(saved_err);
  std::string text;
  std::rewind(tmp);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), tmp)) > 0;) text.append(buf, n);
  std::fclose(tmp);
  return text;
}

// get -w: prints the view, then again each time it changes (polled every 2 s), until
// interrupted or `for_s` seconds (0: no end). A failed poll is reported and retried.
int WatchGet(const std::function<int()>& get, double for_s) {
  const absl::Time end = for_s > 0 ? absl::Now() + absl::Seconds(for_s) : absl::InfiniteFuture();
  std::string last;
  bool first = true;
  while (true) {
    int rc = kExitOk;
    std::string text = CaptureOutput(get, &rc);
    if (rc == kExitUsage) {
      std::fwrite(text.data(), 1, text.size(), stderr);
      return rc;
    }
    if (text != last) {
      if (!first) {
        std::printf("\n# %s\n",
                    absl::FormatTime("%H:%M:%S", absl::Now(), absl::LocalTimeZone()).c_str());
      }
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      last = std::move(text);
      first = false;
    }
    if (absl::Now() + absl::Seconds(2) > end) return kExitOk;
    absl::SleepFor(absl::Seconds(2));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"clusterctl: inspect and drive a running clusterd."};
  app.footer(
      "Addresses default to $CLUSTERD_ADDR (gRPC) and $CLUSTERD_HTTP (HTTP).\n"
      "Exit codes: 0 success, 1 the server answered with an error, 2 usage error,\n"
      "3 clusterd unreachable or unhealthy.");
  app.set_version_flag("--version", std::string("clusterctl ") + CLUSTERD_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global flags (-o, --addr, ...) may follow the subcommand, as in kubectl

  Globals g;
  g.grpc_addr = EnvOr("CLUSTERD_ADDR", "127.0.0.1:8899");
  g.http_addr = EnvOr("CLUSTERD_HTTP", "127.0.0.1:11251");
  app.add_option("--addr", g.grpc_addr, "clusterd gRPC address")->capture_default_str();
  app.add_option("--http", g.http_addr, "clusterd HTTP address")->capture_default_str();
  app.add_option("-o,--output", g.output,
                 "Output format: table, wide, json, yaml, name, or jsonpath=TEMPLATE (kubectl's)")
      ->capture_default_str();
  app.add_option("--timeout", g.timeout_s, "Seconds to wait for clusterd")->capture_default_str();
  std::string token_file;
  std::string config_file = EnvOr("HOME", ".") + "/.clusterd/config";
  app.add_option("--token", g.token, "Bearer token for clusterd (docs/security.md)");
  app.add_option("--token-file", token_file, "File whose first line is the bearer token");
  app.add_option("--cacert", g.cacert,
                 "PEM CA that signed clusterd's certificate: gRPC uses TLS, HTTP https");
  app.add_option("--cert", g.cert, "PEM client certificate for mTLS (with --key)");
  app.add_option("--key", g.key, "PEM private key of --cert");
  CLI::Option* config_option = app.add_option(
      "--config", config_file,
      "Credentials file: lines 'token: T', 'token-file: F', 'certificate-authority: F', "
      "'client-certificate: F', 'client-key: F' (default ~/.clusterd/config)");
  app.parse_complete_callback([&] {
    if (absl::Status s = LoadCredentials(g, token_file, config_file, config_option->count() > 0);
        !s.ok()) {
      throw CLI::ValidationError("credentials", std::string(s.message()));
    }
  });

  CLI::App* health = app.add_subcommand(
      "health", "Check that clusterd serves (gRPC HealthCheck, /healthz, /readyz)");

  CLI::App* get = app.add_subcommand("get", "List objects, or show one by name");
  std::string kind, name, ns = "default", selector;
  bool all_namespaces = false;
  get->add_option("resource", kind,
                  "configmaps (cm), pods (po), nodes (no), podgroups (pg), ascendjobs, vcjobs, "
                  "leases, events; and from clusterd: nodes (with NPU health), npus [--node N], "
                  "jobs, ranktable JOB, faults [--node N] [--job J], recovery [JOB], slownode "
                  "[JOB], netfault [SUPERPOD], configuration, goodput [JOB], episodes [JOB], "
                  "offenders [NODE]")
      ->required();
  get->add_option("name", name, "Object name (optional)");
  get->add_option("-n,--namespace", ns, "Namespace")->capture_default_str();
  get->add_flag("-A,--all-namespaces", all_namespaces, "List across all namespaces");
  bool watch_get = false;
  double watch_get_for = 0;
  get->add_flag("-w,--watch", watch_get,
                "Print again whenever the view changes (polled every 2 s)");
  get->add_option("--watch-for", watch_get_for, "With -w: stop after this many seconds");
  get->add_option("-l,--selector", selector, "Label selector, e.g. a=b,c!=d");
  std::string fault_node, fault_job;
  get->add_option("--node", fault_node, "get faults: only this node");
  get->add_option("--job", fault_job, "get faults: only NPUs and nodes of this job (id or name)");

  CLI::App* datatrace = app.add_subcommand(
      "datatrace",
      "Switch a job's profiling markers: datatrace on|off|get JOB [-n NS] [--communication]");
  std::string dt_action, dt_job, dt_ns = "default";
  bool dt_communication = false;
  datatrace->add_option("action", dt_action, "on, off or get")->required();
  datatrace->add_option("job", dt_job, "Job name")->required();
  datatrace->add_option("-n,--namespace", dt_ns, "Namespace")->capture_default_str();
  datatrace->add_flag("--communication", dt_communication,
                      "With on: also the communication-operator markers");

  CLI::App* describe = app.add_subcommand(
      "describe",
      "Show everything clusterd knows of an object: describe job JOB | describe node NODE");
  std::string describe_kind, describe_name, describe_ns = "default";
  describe->add_option("kind", describe_kind, "job or node")->required();
  describe->add_option("name", describe_name, "Job name or id, or node name")->required();
  describe->add_option("-n,--namespace", describe_ns, "Namespace")->capture_default_str();

  CLI::App* inject = app.add_subcommand(
      "inject",
      "Inject a public fault (PubFault.SendPublicFault): inject fault --node N --npu I --code C");
  std::string inject_what;
  clusterctl::InjectFaultArgs inject_args;
  inject->add_option("what", inject_what, "fault")->required();
  inject->add_option("--node", inject_args.node, "Node name")->required();
  inject->add_option("--npu", inject_args.npus, "NPU id(s), 0-31")->required()->delimiter(',');
  inject
      ->add_option("--code", inject_args.code,
                   "9-character public fault code (publicFaultConfiguration.json)")
      ->required();
  inject->add_option("--assertion", inject_args.assertion, "occur, recover or once")
      ->capture_default_str();
  inject->add_option("--type", inject_args.fault_type, "NPU, Node, Network or Storage")
      ->capture_default_str();
  inject->add_option("--resource", inject_args.resource, "Sender (a configured resource)")
      ->capture_default_str();
  inject->add_option("--id", inject_args.id, "Fault id (default: derived from node and code)");
  inject->add_option("--description", inject_args.description, "Description")
      ->capture_default_str();

  CLI::App* switchnic = app.add_subcommand(
      "switchnic", "Switch NICs of a running job: switchnic JOB NODE:DEV=on|off[,DEV=on|off] ...");
  std::string om_job, om_ns = "default";
  std::vector<std::string> om_specs;
  bool om_wait = false;
  switchnic->add_option("job", om_job, "Job name or id")->required();
  switchnic->add_option("specs", om_specs, "NODE:DEV=on|off[,DEV=on|off]")->required();
  switchnic->add_option("-n,--namespace", om_ns, "Namespace")->capture_default_str();
  switchnic->add_flag("--wait", om_wait, "Follow the result stream until it ends");

  CLI::App* stresstest = app.add_subcommand(
      "stresstest",
      "Run the online stress test on a job's nodes: stresstest JOB [NODE:OP[,OP]] ... [--all OPS]");
  std::vector<int64_t> stress_all;
  stresstest->add_option("job", om_job, "Job name or id")->required();
  stresstest->add_option("specs", om_specs, "NODE:OP[,OP]");
  stresstest->add_option("--all", stress_all, "Operations for every node of the job")
      ->delimiter(',');
  stresstest->add_option("-n,--namespace", om_ns, "Namespace")->capture_default_str();
  stresstest->add_flag("--wait", om_wait, "Follow the result stream until it ends");

  CLI::App* watch = app.add_subcommand(
      "watch", "Follow a job's recovery as it happens: watch signals --job JOB [--for SECONDS]");
  std::string watch_what, watch_job, watch_ns = "default";
  double watch_for = 0;
  watch->add_option("what", watch_what, "signals")->required();
  watch->add_option("--job", watch_job, "Job name or id")->required();
  watch->add_option("-n,--namespace", watch_ns, "Namespace")->capture_default_str();
  watch->add_option("--for", watch_for,
                    "Stop after this many seconds (default: until interrupted)");

  if (std::optional<int> rc = clusterd::ParseFlags(app, argc, argv)) return *rc;
  if (!clusterctl::ParseFormat(g.output).ok()) {
    return Usage(absl::StrCat("unknown output format \"", g.output,
                              "\" (want table, wide, json, yaml, name or jsonpath=TEMPLATE)"));
  }
  if (health->parsed()) return Health(g);
  if (get->parsed()) {
    auto run_get = [&]() -> int {
      return GetOnce(g, kind, name, ns, all_namespaces, selector, fault_node, fault_job);
    };
    if (watch_get) return WatchGet(run_get, watch_get_for);
    return run_get();
  }
  if (datatrace->parsed()) return DataTrace(g, dt_action, dt_job, dt_ns, dt_communication);
  if (describe->parsed()) {
    if (describe_kind == "node" || describe_kind == "nodes" || describe_kind == "no") {
      return clusterctl::DescribeNode(g, describe_name);
    }
    if (describe_kind != "job" && describe_kind != "jobs") {
      return Usage(absl::StrCat("cannot describe \"", describe_kind, "\" (known: job, node)"));
    }
    return clusterctl::DescribeJob(g, describe_name, describe_ns);
  }
  if (inject->parsed()) {
    if (inject_what != "fault")
      return Usage(absl::StrCat("cannot inject \"", inject_what, "\" (known: fault)"));
    return clusterctl::InjectFault(g, inject_args);
  }
  if (switchnic->parsed()) return clusterctl::SwitchNic(g, om_job, om_ns, om_specs, om_wait);
  if (stresstest->parsed())
    return clusterctl::StressTest(g, om_job, om_ns, om_specs, stress_all, om_wait);
  if (watch->parsed()) {
    if (watch_what != "signals")
      return Usage(absl::StrCat("cannot watch \"", watch_what, "\" (known: signals)"));
    return clusterctl::WatchSignals(g, watch_job, watch_ns, watch_for);
  }
  return kExitUsage;
}
