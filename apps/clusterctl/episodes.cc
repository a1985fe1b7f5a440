// clusterctl get episodes [JOB]: the fault episodes (docs/goodput.md), as the demo's table.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops.h"

namespace clusterctl {
namespace {

using Json = nlohmann::ordered_json;

std::string SecondsText(const Json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fs", v.get<double>());
  return buf;
}

std::string StringOr(const Json& v, const char* fallback) {
  return v.is_string() && !v.get_ref<const std::string&>().empty() ? v.get<std::string>()
                                                                   : fallback;
}

}  // namespace

int GetEpisodes(const Globals& g, const std::string& job) {
  Json body;
  const std::string path =
      job.empty() ? "/api/clusterd/v1/episodes" : "/api/clusterd/v1/episodes?job=" + Escape(job);
  if (int rc = FetchJson(g, path, &body); rc != kExitOk) return rc;
  std::vector<std::vector<std::string>> rows;
  for (const Json& e : body.value("items", Json::array())) {
    const Json seconds = e.value("seconds", Json::object());
    const std::string code = e.value("code", "");
    const std::string ns = e.value("namespace", "");
    const std::string name = e.value("name", "");
    std::string total = SecondsText(seconds.value("total", Json()));
    if (total == "-" && seconds.value("open", Json()).is_number()) {
      total = SecondsText(seconds["open"]) + "+";  // still open: so far
    }
    std::vector<std::string> row = {
        code.empty() ? "(no fault seen)" : absl::StrCat(code, " ", e.value("level", "")),
        e.value("where", "-"),
        ns.empty() ? StringOr(e.value("jobId", Json()), "-") : absl::StrCat(ns, "/", name),
        StringOr(e.value("occurred", Json()), StringOr(e.value("detected", Json()), "-").c_str()),
        SecondsText(seconds.value("detected", Json())),
        SecondsText(seconds.value("notified", Json())),
        SecondsText(seconds.value("decided", Json())),
        SecondsText(seconds.value("resumed", Json())),
        total};
    const Json strategies = e.value("strategies", Json::array());
    std::vector<std::string> names;
    for (const Json& s : strategies) names.push_back(s.is_string() ? s.get<std::string>() : "");
    row.push_back(names.empty() ? "-" : absl::StrJoin(names, ">"));
    row.push_back(e.value("state", ""));
    rows.push_back(std::move(row));
  }
  if (g.table() && rows.empty()) {
    std::fprintf(stderr, "No fault episodes%s.\n",
                 job.empty() ? "" : absl::StrCat(" of job ", job).c_str());
    return kExitOk;
  }
  return Print(g, body,
               {"FAULT", "WHERE", "JOB", "OCCURRED", "DETECTED", "NOTIFIED", "DECIDED", "RESUMED",
                "TOTAL", "STRATEGY", "STATE"},
               rows);
}

}  // namespace clusterctl
