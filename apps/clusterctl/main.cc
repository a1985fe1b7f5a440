// clusterctl: the operator's CLI for a running clusterd. kubectl-like: `get RESOURCE [NAME]`,
// -n/--namespace, -A, -l, -o table|json|yaml.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/channel.h"
#include "httplib.h"
#include "output.h"
#include "recover.grpc.pb.h"
#include "store/object_store.h"

namespace {

// Exit codes (documented in --help).
constexpr int kExitOk = 0;
constexpr int kExitError = 1;  // the server answered with an error (not found, bad request, ...)
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;

struct Globals {
  std::string grpc_addr;
  std::string http_addr;
  std::string output = "table";
  double timeout_s = 5;
};

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return kExitUsage;
}

// Resource aliases, as kubectl spells them.
const std::map<std::string, std::string>& ResourceAliases() {
  static const auto* aliases = new std::map<std::string, std::string>{
      {"cm", "configmaps"},       {"configmap", "configmaps"},   {"configmaps", "configmaps"},
      {"po", "pods"},             {"pod", "pods"},               {"pods", "pods"},
      {"no", "nodes"},            {"node", "nodes"},             {"nodes", "nodes"},
      {"pg", "podgroups"},        {"podgroup", "podgroups"},     {"podgroups", "podgroups"},
      {"ascendjob", "ascendjobs"}, {"ascendjobs", "ascendjobs"}, {"lease", "leases"},
      {"leases", "leases"},       {"ev", "events"},              {"event", "events"},
      {"events", "events"},       {"vcjob", "jobs"},             {"vcjobs", "jobs"}};
  return *aliases;
}

std::unique_ptr<httplib::Client> HttpClient(const Globals& g) {
  std::string base = g.http_addr.find("://") == std::string::npos ? "http://" + g.http_addr : g.http_addr;
  auto cli = std::make_unique<httplib::Client>(base);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000));
  cli->set_connection_timeout(timeout);
  cli->set_read_timeout(timeout);
  return cli;
}

int Print(const Globals& g, const nlohmann::ordered_json& value,
          const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  absl::StatusOr<clusterctl::Format> format = clusterctl::ParseFormat(g.output);
  if (!format.ok()) return Usage(std::string(format.status().message()));
  switch (*format) {
    case clusterctl::Format::kJson:
      std::cout << value.dump(2) << "\n";
      break;
    case clusterctl::Format::kYaml:
      std::cout << clusterctl::ToYaml(value);
      break;
    case clusterctl::Format::kTable:
      std::cout << clusterctl::RenderTable(headers, rows);
      break;
  }
  return kExitOk;
}

int Health(const Globals& g) {
  nlohmann::ordered_json report = nlohmann::ordered_json::object();
  bool healthy = true;

  auto stub = Recover::NewStub(clusterd::client::MakeChannel(g.grpc_addr));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(g.timeout_s * 1000)));
  ClientInfo req;
  req.set_role("clusterctl");
  Status resp;
  grpc::Status st = stub->HealthCheck(&ctx, req, &resp);
  std::string grpc_detail = st.ok() ? absl::StrCat("code=", resp.code(), " ", resp.info())
                                    : absl::StrCat("unreachable: ", st.error_message());
  healthy &= st.ok() && resp.code() == 0;
  report["grpc"] = {{"address", g.grpc_addr}, {"ok", st.ok() && resp.code() == 0}, {"detail", grpc_detail}};

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
    rows.push_back({name, item["address"].get<std::string>(), item["ok"].get<bool>() ? "ok" : "FAIL",
                    item["detail"].get<std::string>()});
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
    row.push_back(std::to_string(o.contains("data") && o["data"].is_object() ? o["data"].size() : 0));
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
    return Usage(absl::StrCat("unknown resource type \"", kind, "\"; known: ", absl::StrJoin(known, ", ")));
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
  if (!selector.empty()) absl::StrAppend(&path, "?labelSelector=", httplib::detail::encode_query_param(selector));

  auto http = HttpClient(g);
  auto res = http->Get(path);
  if (!res) {
    std::fprintf(stderr, "error: cannot reach clusterd at %s: %s\n", g.http_addr.c_str(),
                 httplib::to_string(res.error()).c_str());
    return kExitUnreachable;
  }
  nlohmann::ordered_json body = nlohmann::ordered_json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    std::string message = body.is_object() ? body.value("message", res->body) : res->body;
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return kExitError;
  }
  if (body.is_discarded()) {
    std::fprintf(stderr, "error: clusterd sent a malformed answer\n");
    return kExitError;
  }
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
    if (rows.empty() && g.output == "table") {
      std::fprintf(stderr, "No resources found%s.\n",
                   show_ns || clusterd::store::IsClusterScoped(resource)
                       ? ""
                       : absl::StrCat(" in ", ns, " namespace").c_str());
      return kExitOk;
    }
  }
  return Print(g, body, headers, rows);
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
  app.add_option("-o,--output", g.output, "Output format: table, json or yaml")
      ->capture_default_str();
  app.add_option("--timeout", g.timeout_s, "Seconds to wait for clusterd")->capture_default_str();

  CLI::App* health = app.add_subcommand("health", "Check that clusterd serves (gRPC HealthCheck, /healthz, /readyz)");

  CLI::App* get = app.add_subcommand("get", "List objects, or show one by name");
  std::string kind, name, ns = "default", selector;
  bool all_namespaces = false;
  get->add_option("resource", kind,
                  "configmaps (cm), pods (po), nodes (no), podgroups (pg), ascendjobs, vcjobs, "
                  "leases, events")
      ->required();
  get->add_option("name", name, "Object name (optional)");
  get->add_option("-n,--namespace", ns, "Namespace")->capture_default_str();
  get->add_flag("-A,--all-namespaces", all_namespaces, "List across all namespaces");
  get->add_option("-l,--selector", selector, "Label selector, e.g. a=b,c!=d");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (!clusterctl::ParseFormat(g.output).ok()) {
    return Usage(absl::StrCat("unknown output format \"", g.output, "\" (want table, json or yaml)"));
  }
  if (health->parsed()) return Health(g);
  if (get->parsed()) return Get(g, kind, name, ns, all_namespaces, selector);
  return kExitUsage;
}
