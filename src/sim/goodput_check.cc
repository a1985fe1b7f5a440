#include "sim/goodput_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "httplib.h"

namespace clusterd::sim {
namespace {

std::optional<absl::Time> ParseTime(const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, v.get<std::string>(), &t, &err)) return std::nullopt;
  return t;
}

absl::StatusOr<nlohmann::json> Fetch(httplib::Client& http, const std::string& path) {
  auto res = http.Get(path);
  if (!res) return absl::UnavailableError(absl::StrCat(path, ": no answer"));
  if (res->status != 200) {
    return absl::UnavailableError(absl::StrCat(path, ": HTTP ", res->status, " ", res->body));
  }
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (body.is_discarded()) return absl::DataLossError(absl::StrCat(path, ": not JSON"));
  return body;
}

}  // namespace

absl::Status WriteOffenderPolicy(store::ObjectStore& store, const std::string& policy_json) {
  const store::ObjectKey key{std::string(store::kConfigMaps), "cluster-system",
                             "clusterd-config-cm"};
  absl::StatusOr<store::Object> existing = store.Get(key);
  if (existing.ok()) {
    store::Object patch = {{"data", {{"repeat-offender-policy.json", policy_json}}}};
    return store.Patch(key, patch).status();
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  store::Object cm = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", key.name}, {"namespace", key.ns}}},
                      {"data", {{"repeat-offender-policy.json", policy_json}}}};
  return store.Create(store::kConfigMaps, cm).status();
}

std::optional<double> TimelineTrainingShare(const nlohmann::json& job, absl::Time from,
                                            absl::Time to) {
  absl::Duration training, counted;
  for (const nlohmann::json& i : job.value("timeline", nlohmann::json::array())) {
    std::optional<absl::Time> start = ParseTime(i.value("start", nlohmann::json()));
    if (!start.has_value()) continue;
    // The open interval (end null) runs to now, past `to`.
    const absl::Time end = ParseTime(i.value("end", nlohmann::json())).value_or(to);
    const absl::Time a = std::max(*start, from), b = std::min(end, to);
    if (b <= a) continue;
    counted += b - a;
    if (i.value("use", "") == "training") training += b - a;
  }
  if (counted <= absl::ZeroDuration()) return std::nullopt;
  return absl::FDivDuration(training, counted);
}

std::vector<std::string> CheckGoodput(const GoodputCheck& check, const std::string& http_address,
                                      const std::vector<SimJobTraining>& jobs) {
  std::vector<std::string> failures;
  httplib::Client http("http://" + http_address);
  http.set_read_timeout(10, 0);
  std::printf("\n%-10s %10s %10s %7s  %s\n", "GOODPUT", "CLUSTERD", "SIMULATOR", "DIFF",
              "CLUSTERD ETTR (LIFE), LOST TIME BY CAUSE");
  for (const SimJobTraining& j : jobs) {
    absl::StatusOr<nlohmann::json> body =
        Fetch(http, absl::StrCat("/api/clusterd/v1/goodput/", j.name, "?namespace=", j.ns));
    if (!body.ok()) {
      failures.push_back(absl::StrCat("goodput of ", j.name, ": ", body.status().message()));
      continue;
    }
    std::optional<double> share = TimelineTrainingShare(*body, j.from, j.to);
    if (!share.has_value()) {
      failures.push_back(absl::StrCat("goodput of ", j.name, ": no time counted while it ran"));
      continue;
    }
    const double diff = *share - j.share;
    std::vector<std::string> lost;
    const nlohmann::json lost_seconds = body->value("lostSeconds", nlohmann::json::object());
    for (const auto& [cause, seconds] : lost_seconds.items()) {
      if (seconds.is_number() && seconds.get<double>() >= 0.05) {
        lost.push_back(absl::StrCat(cause, " ", absl::StrFormat("%.1fs", seconds.get<double>())));
      }
    }
    const nlohmann::json ettr = body->value("ettr", nlohmann::json());
    std::printf(
        "%-10s %9.1f%% %9.1f%% %+6.1f  %s; %s\n", j.name.c_str(), *share * 100, j.share * 100,
        diff * 100,
        ettr.is_number() ? absl::StrFormat("%.1f%%", ettr.get<double>() * 100).c_str() : "-",
        lost.empty() ? "nothing lost" : absl::StrJoin(lost, ", ").c_str());
    if (std::abs(diff) > check.tolerance) {
      failures.push_back(absl::StrFormat(
          "goodput of %s: clusterd counts %.1f%% training, the simulator saw %.1f%% (tolerance "
          "%.1f points)",
          j.name, *share * 100, j.share * 100, check.tolerance * 100));
    }
  }
  if (!check.offenders.empty() || !check.offender_policy.empty()) {
    absl::StatusOr<nlohmann::json> body = Fetch(http, "/api/clusterd/v1/offenders");
    if (!body.ok()) {
      failures.push_back(absl::StrCat("offenders: ", body.status().message()));
      return failures;
    }
    std::vector<std::string> judged;
    for (const nlohmann::json& n : body->value("items", nlohmann::json::array())) {
      if (n.value("offender", false)) {
        judged.push_back(n.value("node", ""));
        std::printf("repeat offender %s: %s\n", n.value("node", "").c_str(),
                    n.value("reason", "").c_str());
      }
    }
    for (const std::string& node : check.offenders) {
      if (std::find(judged.begin(), judged.end(), node) == judged.end()) {
        failures.push_back(absl::StrCat("node ", node, " is not judged a repeat offender"));
      }
    }
  }
  return failures;
}

}  // namespace clusterd::sim
