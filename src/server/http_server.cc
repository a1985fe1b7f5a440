#include "server/http_server.h"

#include <exception>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cluster/fault_centre.h"
#include "cluster/job_registry.h"
#include "common/log.h"
#include "common/process_metrics.h"
#include "diagnosis/net_diagnosis_controller.h"
#include "diagnosis/slow_node_controller.h"
#include "model/config_map_names.h"
#include "server/dashboard.h"
#include "server/goodput_bridge.h"
#include "server/grpc_server.h"
#include "server/recovery_bridge.h"

namespace clusterd::server {
namespace {

constexpr char kJson[] = "application/json";

absl::string_view ReasonFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kNotFound:
      return "NotFound";
    case absl::StatusCode::kInvalidArgument:
      return "BadRequest";
    case absl::StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case absl::StatusCode::kAborted:
      return "Conflict";
    case absl::StatusCode::kOutOfRange:
      return "Expired";
    case absl::StatusCode::kUnavailable:
      return "ServiceUnavailable";
    case absl::StatusCode::kUnimplemented:
      return "NotImplemented";
    default:
      return "InternalError";
  }
}

// Errors use the Kubernetes Status shape so kubectl-minded tools can read them. A message may
// quote what the client sent, which need not be UTF-8: such bytes come out as U+FFFD (a strict
// dump would throw, and the client get an empty 500).
void ReplyError(HttpResponse& res, const absl::Status& status) {
  int code = HttpCodeFor(status.code());
  nlohmann::ordered_json body = {{"kind", "Status"},
                                 {"apiVersion", "v1"},
                                 {"status", "Failure"},
                                 {"message", std::string(status.message())},
                                 {"reason", ReasonFor(status.code())},
                                 {"code", code}};
  res.status = code;
  res.set_content(body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
                  kJson);
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// `s` with every byte outside printable ASCII as \xHH: safe in a log line and a JSON message.
std::string Escaped(absl::string_view s) {
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += ch;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xF]};
    }
  }
  return out;
}

// Path segments arrive percent-decoded; what is not UTF-8 names nothing and is refused before
// it reaches the store (or a JSON body).
absl::Status CheckPathSegment(absl::string_view what, absl::string_view segment) {
  if (IsUtf8(segment)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " \"", Escaped(segment), "\" in the path is not valid UTF-8"));
}

void CountRequest(absl::string_view route, int code) {
  MetricsRegistry::Default()
      .GetCounter("clusterd_http_requests_total", "HTTP requests by route and status code.",
                  {{"route", std::string(route)}, {"code", std::to_string(code)}})
      .Increment();
}

std::string Rfc3339(absl::Time t) {
  return t == absl::UnixEpoch() ? "" : absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone());
}

// Which NPUs of which node the job's rank table holds: [{"node":..., "npus":["0","1"]}].
nlohmann::ordered_json PlacementJson(const model::RankTable& table) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (!table.server_list.has_value()) return out;
  for (const auto& server : *table.server_list) {
    nlohmann::ordered_json npus = nlohmann::ordered_json::array();
    for (const auto& d : server.devices) npus.push_back(d.device_id);
    out.push_back({{"node", server.server_name}, {"npus", std::move(npus)}});
  }
  return out;
}

// The operator's view of a job record (clusterctl get jobs -o json).
nlohmann::ordered_json JobJson(const cluster::JobRecord& r) {
  return nlohmann::ordered_json{{"jobId", r.job_id},
                                {"namespace", r.ns},
                                {"name", r.name},
                                {"kind", r.kind},
                                {"podGroup", r.pod_group_name},
                                {"framework", r.framework},
                                {"status", std::string(model::ToString(r.status))},
                                {"preDeleted", r.pre_deleted},
                                {"replicas", r.replicas},
                                {"pods", r.pod_count},
                                {"npus", r.rank_table.DeviceCount()},
                                {"placement", PlacementJson(r.rank_table)},
                                {"rankTableStatus", r.rank_table.status},
                                {"summaryConfigMaps", r.total_cm_num},
                                {"resourceType", r.resource_type},
                                {"sid", r.sid},
                                {"multiInstanceJobId", r.multi_instance_job_id},
                                {"appType", r.app_type},
                                {"createTime", Rfc3339(r.create_time)},
                                {"deleteTime", r.pre_deleted ? Rfc3339(r.delete_time) : ""}};
}

// <job> is a job id, or a job name (in `ns` when given; it must then be unique).
absl::StatusOr<cluster::JobRecord> ResolveJob(const cluster::JobRegistry& jobs,
                                              const std::string& job, const std::string& ns) {
  if (auto r = jobs.FindJob(job); r.has_value() && (ns.empty() || r->ns == ns)) return *r;
  if (!ns.empty()) {
    if (auto r = jobs.FindJobByName(ns, job); r.has_value()) return *r;
    return absl::NotFoundError(absl::StrCat("job \"", job, "\" not found in namespace ", ns));
  }
  std::vector<cluster::JobRecord> matches;
  for (auto& r : jobs.Jobs()) {
    if (r.name == job) matches.push_back(std::move(r));
  }
  if (matches.empty()) return absl::NotFoundError(absl::StrCat("job \"", job, "\" not found"));
  std::string first_ns = matches.front().ns;
  for (const auto& r : matches) {
    if (r.ns != first_ns) {
      return absl::InvalidArgumentError(absl::StrCat(
          "job name \"", job, "\" exists in several namespaces; give the namespace or the job id"));
    }
  }
  if (auto r = jobs.FindJobByName(first_ns, job); r.has_value()) return *r;
  return matches.front();
}

// A slow-node view belongs to namespace `ns` by its job, or (invalid FeatConf, no job yet) by
// its ConfigMap.
bool SlowNodeInNamespace(const diagnosis::SlowNodeJobView& v, const std::string& ns) {
  if (ns.empty()) return true;
  if (!v.ns.empty()) return v.ns == ns;
  return v.config_map.rfind(ns + "/", 0) == 0;
}

// <job> is a job name or id (in `ns` when given; a name must then be unique).
absl::StatusOr<diagnosis::SlowNodeJobView> ResolveSlowNode(
    const diagnosis::SlowNodeController& slow, const std::string& job, const std::string& ns) {
  std::vector<diagnosis::SlowNodeJobView> matches;
  for (auto& v : slow.Views()) {
    if (!SlowNodeInNamespace(v, ns)) continue;
    if (!v.job_id.empty() && v.job_id == job) return v;
    if (v.job_name == job) matches.push_back(std::move(v));
  }
  if (matches.empty()) {
    return absl::NotFoundError(absl::StrCat("no slow-node detection for job \"", job, "\"",
                                            ns.empty() ? "" : absl::StrCat(" in namespace ", ns)));
  }
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job name \"", job, "\" exists in several namespaces; give the namespace or the job id"));
  }
  return matches.front();
}

// Container env and envFrom carry credentials in practice: the mirror never serves them, in
// pods and in every workload template (AscendJob replica specs, Jobs). The last-applied
// annotation repeats the whole spec, env included, so it goes too.
void StripSecrets(store::Object& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if ((key == "containers" || key == "initContainers" || key == "ephemeralContainers") &&
          it->is_array()) {
        for (auto& c : *it) {
          if (c.is_object()) {
            c.erase("env");
            c.erase("envFrom");
          }
        }
      }
      StripSecrets(*it);
    }
    if (auto md = j.find("metadata"); md != j.end() && md->is_object()) {
      if (auto an = md->find("annotations"); an != md->end() && an->is_object()) {
        an->erase("kubectl.kubernetes.io/last-applied-configuration");
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) StripSecrets(e);
  }
}

// ConfigMaps clusterd writes or reads in the jobs' own namespaces (reset-config-<job>,
// job-summary-<job>, data-trace-<job>, rings-config-<job>, clusterd-recovery-<job>,
// ras-feature-slownode-<job>): served wherever they are.
bool IsClusterdJobConfigMap(absl::string_view name) {
  for (absl::string_view prefix : {"reset-config-", "job-summary-", "data-trace-", "rings-config-",
                                   "clusterd-recovery-", "ras-feature-slownode"}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return false;
}

}  // namespace

int HttpCodeFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kOutOfRange:
      return 410;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    default:
      return 500;
  }
}

HttpServer::HttpServer(Options options) : options_(std::move(options)) {
  if (options_.metrics == nullptr) options_.metrics = &MetricsRegistry::Default();
}

std::set<std::string> HttpServer::DefaultConfigMapNamespaces() {
  return {"kube-system", "mindx-dl", "cluster-system"};
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(Options options) {
  absl::StatusOr<HostPort> hp = ParseHostPort(options.listen);
  if (!hp.ok()) return hp.status();
  std::unique_ptr<HttpServer> http(new HttpServer(std::move(options)));
  http->RegisterRoutes();
  HttpTransport::Options t;
  t.host = hp->host;
  t.port = hp->port;
  t.limits = http->options_.limits;
  t.tls = http->options_.tls;
  t.authorize = http->options_.authorize;
  t.open_paths = http->options_.open_paths;
  t.reply_error = [](HttpResponse& res, const absl::Status& status) { ReplyError(res, status); };
  // A handler that throws would otherwise be an empty 500: say so in a Status body, log it and
  // count it.
  t.on_exception = [](const HttpRequest& req, HttpResponse& res, const std::string& what) {
    LogError("http", "request handler failed", {{"path", Escaped(req.path)}, {"error", what}});
    MetricsRegistry::Default()
        .GetCounter("clusterd_http_handler_errors_total",
                    "HTTP requests whose handler failed with an exception (answered 500).")
        .Increment();
    ReplyError(res, absl::InternalError(absl::StrCat("internal error: ", what)));
  };
  if (absl::Status s = http->transport_.Start(std::move(t)); !s.ok()) return s;
  HostPort actual = *hp;
  actual.port = http->transport_.port();
  http->address_ = actual.ToString();
  http->port_ = actual.port;
  const HttpTransport::Limits& l = http->options_.limits;
  LogInfo(
      "http", "serving",
      {{"address", http->address_},
       {"scheme", http->transport_.tls() ? "https" : "http"},
       {"client_ca", http->options_.tls.client_ca.empty() ? "none" : http->options_.tls.client_ca},
       {"max_connections", l.max_connections},
       {"max_connections_per_client", l.max_connections_per_client},
       {"store_mirror", http->options_.store_mirror}});
  if (!http->transport_.tls()) {
    LogInfo("http", "plaintext HTTP (no --http-tls-cert/--http-tls-key)",
            {{"address", http->address_}});
  }
  return http;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() { transport_.Stop(); }

void HttpServer::RegisterRoutes() {
  HttpTransport& s = transport_;
  InstallDashboard(s, options_.fault_feed);

  s.Get("/healthz", [](const HttpRequest&, HttpResponse& res) {
    res.set_content("ok\n", "text/plain");
    CountRequest("/healthz", 200);
  });

  s.Get("/readyz", [this](const HttpRequest&, HttpResponse& res) {
    absl::Status ready = options_.readiness ? options_.readiness() : absl::OkStatus();
    std::string body = ready.ok() ? "ok\n" : absl::StrCat("not ready: ", ready.message(), "\n");
    if (!ready.ok()) res.status = 503;
    if (options_.readiness_notes) {
      for (const std::string& note : options_.readiness_notes()) absl::StrAppend(&body, "note: ", note, "\n");
    }
    res.set_content(body, "text/plain");
    CountRequest("/readyz", res.status);
  });

  s.Get("/metrics", [this](const HttpRequest&, HttpResponse& res) {
    res.set_content(options_.metrics->RenderPrometheus() + RenderProcessMetrics(),
                    "text/plain; version=0.0.4; charset=utf-8");
    CountRequest("/metrics", 200);
  });

  s.Get("/version", [this](const HttpRequest&, HttpResponse& res) {
    nlohmann::ordered_json body = {{"name", "clusterd"}, {"version", options_.version}};
    res.set_content(body.dump(), kJson);
    CountRequest("/version", 200);
  });

  // The job registry (read-only).
  s.Get(R"(/api/clusterd/v1/jobs)", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.jobs == nullptr) {
      ReplyError(res, absl::UnavailableError("no job registry is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      nlohmann::ordered_json body = {{"kind", "JobList"},
                                     {"items", nlohmann::ordered_json::array()}};
      for (const auto& r : options_.jobs->Jobs()) {
        if (ns.empty() || r.ns == ns) body["items"].push_back(JobJson(r));
      }
      res.set_content(body.dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/jobs", res.status);
  });
  s.Get(R"(/api/clusterd/v1/jobs/([^/]+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.jobs == nullptr) {
      ReplyError(res, absl::UnavailableError("no job registry is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      absl::StatusOr<cluster::JobRecord> r = ResolveJob(*options_.jobs, req.matches[1], ns);
      if (!r.ok()) {
        ReplyError(res, r.status());
      } else {
        res.set_content(JobJson(*r).dump(), kJson);
      }
    }
    CountRequest("/api/clusterd/v1/jobs/{job}", res.status);
  });
  s.Get(R"(/api/clusterd/v1/jobs/([^/]+)/ranktable)", [this](const HttpRequest& req,
                                                             HttpResponse& res) {
    if (options_.jobs == nullptr) {
      ReplyError(res, absl::UnavailableError("no job registry is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      absl::StatusOr<cluster::JobRecord> r = ResolveJob(*options_.jobs, req.matches[1], ns);
      if (!r.ok()) {
        ReplyError(res, r.status());
      } else {
        // The rank table exactly as the job summary carries it.
        res.set_content(model::SerializeRankTable(r->rank_table), kJson);
      }
    }
    CountRequest("/api/clusterd/v1/jobs/{job}/ranktable", res.status);
  });

  // The fault centre's view (clusterctl get faults).
  s.Get(R"(/api/clusterd/v1/faults)", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.faults == nullptr) {
      ReplyError(res, absl::UnavailableError("no fault centre is attached"));
    } else {
      const std::string node = req.has_param("node") ? req.get_param_value("node") : "";
      const std::string job = req.has_param("job") ? req.get_param_value("job") : "";
      nlohmann::ordered_json body = {{"kind", "FaultList"},
                                     {"items", nlohmann::ordered_json::array()}};
      for (const cluster::FaultViewRow& r : options_.faults->FaultRows(node, job)) {
        body["items"].push_back(
            {{"node", r.node},
             {"npu", r.npu},
             {"code", r.code},
             {"level", r.level},
             {"source", r.source},
             {"since", r.since_ms > 0 ? Rfc3339(absl::FromUnixMillis(r.since_ms)) : ""},
             {"sinceMs", r.since_ms},
             {"jobs", r.jobs}});
      }
      res.set_content(body.dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/faults", res.status);
  });

  // The configuration the fault centre runs with (clusterctl get configuration).
  s.Get(R"(/api/clusterd/v1/configuration)", [this](const HttpRequest&, HttpResponse& res) {
    if (options_.faults == nullptr) {
      ReplyError(res, absl::UnavailableError("no fault centre is attached"));
    } else {
      const cluster::FaultConfigurationView v = options_.faults->Configuration();
      const cluster::ManualSeparationPolicy& m = v.manual_separation;
      nlohmann::ordered_json body = {
          {"kind", "Configuration"},
          {"manualSeparation",
           {{"enabled", m.enabled},
            {"faultWindowHours", m.fault_window_hours},
            {"faultThreshold", m.fault_threshold},
            {"faultFreeHours", m.fault_free_hours},
            {"source", v.manual_separation_source},
            {"appliedAt", v.manual_separation_applied_ms > 0
                              ? Rfc3339(absl::FromUnixMillis(v.manual_separation_applied_ms))
                              : ""}}},
          {"publicFaults",
           {{"source", v.public_fault_source},
            {"resources", v.public_fault_resources},
            {"codes", v.public_fault_codes}}},
          {"relationFaults",
           {{"dataDir", v.data_dir}, {"rules", v.relation_rules}, {"durations", v.fault_durations}}},
          {"notes", v.notes}};
      res.set_content(body.dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/configuration", res.status);
  });

  // The recovery controllers (clusterctl get recovery).
  s.Get(R"(/api/clusterd/v1/recovery)", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.recovery == nullptr) {
      ReplyError(res, absl::UnavailableError("no recovery controller is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      res.set_content(options_.recovery->RecoveryList(ns).dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/recovery", res.status);
  });
  s.Get(R"(/api/clusterd/v1/recovery/([^/]+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.recovery == nullptr) {
      ReplyError(res, absl::UnavailableError("no recovery controller is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      absl::StatusOr<nlohmann::ordered_json> job =
          options_.recovery->RecoveryOf(req.matches[1], ns);
      if (!job.ok()) {
        ReplyError(res, job.status());
      } else {
        res.set_content(job->dump(), kJson);
      }
    }
    CountRequest("/api/clusterd/v1/recovery/{job}", res.status);
  });

  // Goodput and repeat offenders (clusterctl get goodput / offenders, docs/goodput.md).
  s.Get(R"(/api/clusterd/v1/goodput)", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.goodput == nullptr) {
      ReplyError(res, absl::UnavailableError("no goodput accounting is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      res.set_content(options_.goodput->GoodputList(ns).dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/goodput", res.status);
  });
  s.Get(R"(/api/clusterd/v1/goodput/([^/]+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.goodput == nullptr) {
      ReplyError(res, absl::UnavailableError("no goodput accounting is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      absl::StatusOr<nlohmann::ordered_json> job = options_.goodput->GoodputOf(req.matches[1], ns);
      if (!job.ok()) {
        ReplyError(res, job.status());
      } else {
        res.set_content(job->dump(), kJson);
      }
    }
    CountRequest("/api/clusterd/v1/goodput/{job}", res.status);
  });
  s.Get(R"(/api/clusterd/v1/offenders)", [this](const HttpRequest&, HttpResponse& res) {
    if (options_.goodput == nullptr) {
      ReplyError(res, absl::UnavailableError("no goodput accounting is attached"));
    } else {
      res.set_content(options_.goodput->Offenders().dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/offenders", res.status);
  });

  // The fault episodes (clusterctl get episodes, the dashboard's fault table).
  s.Get(R"(/api/clusterd/v1/episodes)", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.goodput == nullptr) {
      ReplyError(res, absl::UnavailableError("no goodput accounting is attached"));
    } else {
      const std::string job = req.has_param("job") ? req.get_param_value("job") : "";
      res.set_content(options_.goodput->Episodes(job).dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/episodes", res.status);
  });

  // The slow-node detections (clusterctl get slownode).
  s.Get(R"(/api/clusterd/v1/slownode)", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.slow_nodes == nullptr) {
      ReplyError(res, absl::UnavailableError("no slow-node controller is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      nlohmann::ordered_json body = {{"kind", "SlowNodeList"},
                                     {"items", nlohmann::ordered_json::array()}};
      for (const auto& v : options_.slow_nodes->Views()) {
        if (SlowNodeInNamespace(v, ns)) body["items"].push_back(v.ToJson());
      }
      res.set_content(body.dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/slownode", res.status);
  });
  s.Get(R"(/api/clusterd/v1/slownode/([^/]+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.slow_nodes == nullptr) {
      ReplyError(res, absl::UnavailableError("no slow-node controller is attached"));
    } else {
      const std::string ns = req.has_param("namespace") ? req.get_param_value("namespace") : "";
      absl::StatusOr<diagnosis::SlowNodeJobView> v =
          ResolveSlowNode(*options_.slow_nodes, req.matches[1], ns);
      if (!v.ok()) {
        ReplyError(res, v.status());
      } else {
        res.set_content(v->ToJson().dump(), kJson);
      }
    }
    CountRequest("/api/clusterd/v1/slownode/{job}", res.status);
  });

  // The slow-network detection (pingmesh, §7).
  s.Get(R"(/api/clusterd/v1/netfault)", [this](const HttpRequest&, HttpResponse& res) {
    if (options_.net_faults == nullptr) {
      ReplyError(res, absl::UnavailableError(
                          "slow-network detection is off (no --ras-net-root / RAS_NET_ROOT_PATH)"));
    } else {
      res.set_content(options_.net_faults->Views().dump(), kJson);
    }
    CountRequest("/api/clusterd/v1/netfault", res.status);
  });

  // What clusterctl needs of the store with the mirror off: the nodes, and the device-info
  // ConfigMaps (NPU health). Same List / object shapes as /api/v1.
  auto list_of = [this](const std::string& resource, const std::string& ns,
                        const std::string& prefix, HttpResponse& res) {
    if (options_.store == nullptr) {
      return ReplyError(res, absl::UnavailableError("no object store is attached"));
    }
    store::ListOptions list_options;
    list_options.ns = ns;
    absl::StatusOr<store::ObjectList> list = options_.store->List(resource, list_options);
    if (!list.ok()) return ReplyError(res, list.status());
    nlohmann::ordered_json body = {{"apiVersion", "v1"},
                                   {"kind", "List"},
                                   {"metadata", {{"resourceVersion", list->resource_version}}},
                                   {"items", nlohmann::ordered_json::array()}};
    for (auto& item : list->items) {
      if (!prefix.empty() && !absl::StartsWith(item["metadata"].value("name", ""), prefix)) {
        continue;
      }
      StripSecrets(item);
      body["items"].push_back(std::move(item));
    }
    res.set_content(body.dump(), kJson);
  };
  s.Get(R"(/api/clusterd/v1/nodes)", [list_of](const HttpRequest&, HttpResponse& res) {
    list_of("nodes", "", "", res);
    CountRequest("/api/clusterd/v1/nodes", res.status);
  });
  s.Get(R"(/api/clusterd/v1/nodes/([^/]+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (options_.store == nullptr) {
      ReplyError(res, absl::UnavailableError("no object store is attached"));
    } else if (absl::Status bad = CheckPathSegment("name", req.matches[1]); !bad.ok()) {
      ReplyError(res, bad);
    } else {
      absl::StatusOr<store::Object> obj =
          options_.store->Get(store::ObjectKey{"nodes", "", req.matches[1]});
      if (!obj.ok()) {
        ReplyError(res, obj.status());
      } else {
        res.set_content(obj->dump(), kJson);
      }
    }
    CountRequest("/api/clusterd/v1/nodes/{node}", res.status);
  });
  s.Get(R"(/api/clusterd/v1/deviceinfo)", [list_of](const HttpRequest&, HttpResponse& res) {
    list_of("configmaps", std::string(model::kDeviceInfoNamespace),
            std::string(model::kDeviceInfoPrefix), res);
    CountRequest("/api/clusterd/v1/deviceinfo", res.status);
  });

  // Store reads. One handler serves all URL shapes.
  auto serve = [this](const std::string& resource, const std::string& ns, const std::string& name,
                      const HttpRequest& req, HttpResponse& res) {
    if (!options_.store_mirror) {
      ReplyError(res,
                 absl::NotFoundError(
                     "the store mirror /api/v1 is off (start clusterd with "
                     "--http-store-mirror); clusterctl and the dashboard use /api/clusterd/v1"));
      return;
    }
    if (options_.store == nullptr) {
      ReplyError(res, absl::UnavailableError("no object store is attached"));
      return;
    }
    if (!store::IsKnownResource(resource)) {
      ReplyError(res,
                 absl::NotFoundError(absl::StrCat("unknown resource \"", Escaped(resource), "\"")));
      return;
    }
    for (const auto& [what, segment] :
         {std::pair<absl::string_view, absl::string_view>{"namespace", ns}, {"name", name}}) {
      if (absl::Status s = CheckPathSegment(what, segment); !s.ok()) {
        LogWarn("http", "bad request", {{"path", Escaped(req.path)}, {"error", s.message()}});
        return ReplyError(res, s);
      }
    }
    const bool configmaps = resource == "configmaps";
    auto served = [&](const std::string& object_ns, const std::string& object_name) {
      return !configmaps || options_.configmap_namespaces.count(object_ns) > 0 ||
             IsClusterdJobConfigMap(object_name);
    };
    if (!name.empty()) {
      if (!served(ns, name)) {
        // Not clusterd's: answered as if absent, so the mirror does not tell what exists.
        return ReplyError(res, absl::NotFoundError(absl::StrCat(
                                   "configmaps \"", name, "\" not found in namespace ", ns,
                                   " (the mirror serves only clusterd's own ConfigMaps)")));
      }
      absl::StatusOr<store::Object> obj = options_.store->Get(store::ObjectKey{resource, ns, name});
      if (!obj.ok()) return ReplyError(res, obj.status());
      StripSecrets(*obj);
      res.set_content(obj->dump(), kJson);
      return;
    }
    store::ListOptions list_options;
    list_options.ns = ns;
    if (req.has_param("labelSelector")) {
      absl::StatusOr<store::LabelSelector> sel =
          store::LabelSelector::Parse(req.get_param_value("labelSelector"));
      if (!sel.ok()) return ReplyError(res, sel.status());
      list_options.selector = *sel;
    }
    absl::StatusOr<store::ObjectList> list = options_.store->List(resource, list_options);
    if (!list.ok()) return ReplyError(res, list.status());
    nlohmann::ordered_json body = {{"apiVersion", "v1"},
                                   {"kind", "List"},
                                   {"metadata", {{"resourceVersion", list->resource_version}}},
                                   {"items", nlohmann::ordered_json::array()}};
    for (auto& item : list->items) {
      const store::Object md = item.contains("metadata") ? item["metadata"] : store::Object();
      if (!served(md.value("namespace", ""), md.value("name", ""))) continue;
      StripSecrets(item);
      body["items"].push_back(std::move(item));
    }
    res.set_content(body.dump(), kJson);
  };

  s.Get(R"(/api/v1/namespaces/([^/]+)/([^/]+)/([^/]+))",
        [serve](const HttpRequest& req, HttpResponse& res) {
          serve(req.matches[2], req.matches[1], req.matches[3], req, res);
          CountRequest("/api/v1/namespaces/{ns}/{resource}/{name}", res.status);
        });
  s.Get(R"(/api/v1/namespaces/([^/]+)/([^/]+))",
        [serve](const HttpRequest& req, HttpResponse& res) {
          serve(req.matches[2], req.matches[1], "", req, res);
          CountRequest("/api/v1/namespaces/{ns}/{resource}", res.status);
        });
  s.Get(R"(/api/v1/([^/]+)/([^/]+))", [serve](const HttpRequest& req, HttpResponse& res) {
    serve(req.matches[1], "", req.matches[2], req, res);
    CountRequest("/api/v1/{resource}/{name}", res.status);
  });
  s.Get(R"(/api/v1/([^/]+))", [serve](const HttpRequest& req, HttpResponse& res) {
    serve(req.matches[1], "", "", req, res);
    CountRequest("/api/v1/{resource}", res.status);
  });
}

}  // namespace clusterd::server
