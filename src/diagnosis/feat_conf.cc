#include "diagnosis/feat_conf.h"

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_util.h"
#include "common/status_util.h"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

std::string Lower(std::string_view s) {
  return absl::AsciiStrToLower(absl::string_view(s.data(), s.size()));
}

absl::Status TypeError(std::string_view field, std::string_view want, const Json& got) {
  return absl::InvalidArgumentError(
      absl::StrCat("field ", absl::string_view(field.data(), field.size()), ": want ",
                   absl::string_view(want.data(), want.size()), ", got ", got.dump()));
}

absl::Status ReadInt(const Json& v, std::string_view field, int64_t& out) {
  if (v.is_null()) return absl::OkStatus();  // Go: null leaves the field alone
  if (!v.is_number_integer()) return TypeError(field, "an integer", v);
  out = v.get<int64_t>();
  return absl::OkStatus();
}

absl::Status ReadDouble(const Json& v, std::string_view field, double& out) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_number()) return TypeError(field, "a number", v);
  out = v.get<double>();
  return absl::OkStatus();
}

absl::Status ReadString(const Json& v, std::string_view field, std::string& out) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_string()) return TypeError(field, "a string", v);
  out = v.get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadIntList(const Json& v, std::string_view field, std::vector<int64_t>& out) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_array()) return TypeError(field, "an array of integers", v);
  out.clear();
  for (const Json& e : v) {
    if (!e.is_number_integer()) return TypeError(field, "an array of integers", v);
    out.push_back(e.get<int64_t>());
  }
  return absl::OkStatus();
}

absl::Status ReadServers(const Json& v, std::vector<ServerRanks>& out) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_array()) return TypeError("servers", "an array", v);
  out.clear();
  for (const Json& e : v) {
    if (!e.is_object()) return TypeError("servers", "an array of objects", v);
    ServerRanks server;
    for (auto it = e.begin(); it != e.end(); ++it) {
      const std::string key = Lower(it.key());
      if (key == "sn") {
        CLUSTERD_RETURN_IF_ERROR(ReadString(it.value(), "servers[].Sn", server.sn));
      } else if (key == "ip") {
        CLUSTERD_RETURN_IF_ERROR(ReadString(it.value(), "servers[].Ip", server.ip));
      } else if (key == "rankids") {
        CLUSTERD_RETURN_IF_ERROR(ReadIntList(it.value(), "servers[].RankIds", server.rank_ids));
      }
    }
    out.push_back(std::move(server));
  }
  return absl::OkStatus();
}

}  // namespace

bool FeatConf::SameThresholds(const FeatConf& o) const {
  return job_name == o.job_name && job_namespace == o.job_namespace &&
         normal_number == o.normal_number && n_sigma == o.n_sigma &&
         degradation_percentage == o.degradation_percentage &&
         n_consec_anomalies == o.n_consec_anomalies &&
         n_seconds_do_one_detection == o.n_seconds_do_one_detection &&
         cluster_mean_distance == o.cluster_mean_distance && card_one_node == o.card_one_node;
}

absl::StatusOr<FeatConf> ParseFeatConf(std::string_view text, std::string_view what) {
  auto parsed = ParseJson(text, what);
  if (!parsed.ok()) return parsed.status();
  const Json& j = *parsed;
  const absl::string_view what_sv(what.data(), what.size());
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(what_sv, ": FeatConf is not a JSON object"));
  }
  FeatConf c;
  absl::Status st;
  for (auto it = j.begin(); it != j.end() && st.ok(); ++it) {
    const std::string key = Lower(it.key());
    const Json& v = it.value();
    if (key == "jobname") {
      st = ReadString(v, "jobName", c.job_name);
    } else if (key == "jobnamespace") {
      st = ReadString(v, "jobNamespace", c.job_namespace);
    } else if (key == "normalnumber") {
      st = ReadInt(v, "normalNumber", c.normal_number);
    } else if (key == "nsigma") {
      st = ReadInt(v, "nSigma", c.n_sigma);
    } else if (key == "degradationpercentage") {
      st = ReadDouble(v, "degradationPercentage", c.degradation_percentage);
    } else if (key == "nconsecanomaliessignifyslow") {
      st = ReadInt(v, "nConsecAnomaliesSignifySlow", c.n_consec_anomalies);
    } else if (key == "nsecondsdoonedetection") {
      st = ReadInt(v, "nSecondsDoOneDetection", c.n_seconds_do_one_detection);
    } else if (key == "clustermeandistance") {
      st = ReadDouble(v, "clusterMeanDistance", c.cluster_mean_distance);
    } else if (key == "cardonenode") {
      st = ReadInt(v, "cardOneNode", c.card_one_node);
    } else if (key == "slownode") {
      st = ReadInt(v, "slowNode", c.slow_node);
    } else if (key == "rankids") {
      st = ReadIntList(v, "rankIds", c.rank_ids);
    } else if (key == "jobid") {
      st = ReadString(v, "jobId", c.job_id);
    } else if (key == "servers") {
      st = ReadServers(v, c.servers);
    }
  }
  if (!st.ok()) return Annotate(st, what);
  return c;
}

absl::Status ValidateFeatConf(const FeatConf& c) {
  auto bad = [](std::string_view rule, auto value) {
    return absl::InvalidArgumentError(
        absl::StrCat(absl::string_view(rule.data(), rule.size()), ", got ", value));
  };
  if (c.job_name.empty()) return absl::InvalidArgumentError("jobName is empty");
  if (c.normal_number <= 0) return bad("normalNumber must be > 0", c.normal_number);
  if (c.n_sigma < 0) return bad("nSigma must be >= 0", c.n_sigma);
  if (!(c.degradation_percentage > 0) || !std::isfinite(c.degradation_percentage)) {
    return bad("degradationPercentage must be > 0", c.degradation_percentage);
  }
  if (c.n_consec_anomalies < 1)
    return bad("nConsecAnomaliesSignifySlow must be >= 1", c.n_consec_anomalies);
  if (c.n_seconds_do_one_detection < 0) {
    return bad("nSecondsDoOneDetection must be >= 0", c.n_seconds_do_one_detection);
  }
  if (!(c.cluster_mean_distance > 1) || !std::isfinite(c.cluster_mean_distance)) {
    return bad("clusterMeanDistance must be > 1", c.cluster_mean_distance);
  }
  if (c.card_one_node <= 0) return bad("cardOneNode must be > 0", c.card_one_node);
  return absl::OkStatus();
}

absl::StatusOr<FeatConf> ParseAndValidateFeatConf(std::string_view text, std::string_view what) {
  auto conf = ParseFeatConf(text, what);
  if (!conf.ok()) return conf.status();
  CLUSTERD_RETURN_IF_ERROR(Annotate(ValidateFeatConf(*conf), what));
  return conf;
}

Json FeatConfToJson(const FeatConf& c) {
  Json j = Json::object();
  j["jobName"] = c.job_name;
  if (!c.job_id.empty()) j["jobId"] = c.job_id;
  if (c.normal_number != 0) j["normalNumber"] = c.normal_number;
  if (c.n_sigma != 0) j["nSigma"] = c.n_sigma;
  if (c.degradation_percentage != 0) j["degradationPercentage"] = c.degradation_percentage;
  if (c.n_consec_anomalies != 0) j["nConsecAnomaliesSignifySlow"] = c.n_consec_anomalies;
  if (c.n_seconds_do_one_detection != 0) {
    j["nSecondsDoOneDetection"] = c.n_seconds_do_one_detection;
  }
  if (c.cluster_mean_distance != 0) j["clusterMeanDistance"] = c.cluster_mean_distance;
  if (c.card_one_node != 0) j["cardOneNode"] = c.card_one_node;
  j["rankIds"] = c.rank_ids;
  j["slowNode"] = c.slow_node;
  j["jobNamespace"] = c.job_namespace;
  Json servers = Json::array();
  for (const ServerRanks& s : c.servers) {
    servers.push_back(Json{{"Sn", s.sn}, {"Ip", s.ip}, {"RankIds", s.rank_ids}});
  }
  j["servers"] = servers;
  return j;
}

}  // namespace clusterd::diagnosis
