#include "server/slow_node_bridge.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cluster/public_fault_request.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"

namespace clusterd::server {
namespace {

constexpr char kSlowNodeBridgeLog[] = "slow-node-bridge";
constexpr std::string_view kStatusDelete = "delete";

bool IsIpv4(const std::string& text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() != 4) return false;
  for (absl::string_view p : parts) {
    int v = 0;
    if (p.empty() || p.size() > 3 || !absl::SimpleAtoi(p, &v) || v < 0 || v > 255) return false;
  }
  return true;
}

std::string StringField(const nlohmann::ordered_json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

absl::Status DiagnosisFaultSink::SendPublicFault(const diagnosis::PublicFaultReport& report) {
  const std::string text = report.ToJson().dump();
  absl::StatusOr<cluster::PublicFaultRequest> request = cluster::ParsePublicFaultRequest(text);
  if (!request.ok()) {
    return absl::InternalError(
        absl::StrCat(feature_, " public fault ", report.id, ": ", request.status().message()));
  }
  cluster::PublicFaultVerdict verdict = centre_.SendPublicFault(*request);
  if (verdict.code == cluster::kPubFaultOk) return absl::OkStatus();
  const std::string message = absl::StrCat("fault centre refused ", feature_, " public fault ",
                                           report.id, ": ", verdict.code, " ", verdict.info);
  // Rate limiting passes: the controller retries. A refused request (409) would be refused
  // again, so it is logged and counted here and not retried.
  if (verdict.code == cluster::kPubFaultRateLimited) return absl::UnavailableError(message);
  LogWarn(kSlowNodeBridgeLog, "diagnosis public fault refused",
          {{"feature", feature_}, {"id", report.id}, {"reason", verdict.info}});
  MetricsRegistry::Default()
      .GetCounter("clusterd_diagnosis_faults_refused_total",
                  "Diagnosis public faults the fault centre refused (not retried)",
                  {{"feature", feature_}})
      .Increment();
  return absl::OkStatus();
}

absl::Status SlowNodeProfilingWriter::SetProfiling(const diagnosis::SlowNodeJob& job,
                                                   const model::ProfilingSwitch& value) {
  cluster::DataTraceResult r = switches_.Modify(absl::StrCat(job.ns, "/", job.name), value);
  if (r.code == cluster::kDataTraceOk) return absl::OkStatus();
  LogDebug(kSlowNodeBridgeLog,
           "profiling switch not delivered through data trace; writing the ConfigMap",
           {{"job", absl::StrCat(job.ns, "/", job.name)},
            {"code", static_cast<int64_t>(r.code)},
            {"message", r.message}});
  return fallback_.SetProfiling(job, value);
}

std::optional<diagnosis::SlowNodeJob> SlowNodeJobFromSignal(const model::JobSummarySignal& signal) {
  if (signal.job_name.empty()) return std::nullopt;
  diagnosis::SlowNodeJob job;
  job.ns = signal.ns;
  job.name = signal.job_name;
  job.job_id = signal.job_id;
  job.status =
      signal.op == model::kJobOperatorDelete ? std::string(kStatusDelete) : signal.job_status;
  if (signal.hccl_json.empty()) return job;
  absl::StatusOr<nlohmann::ordered_json> table =
      ParseJson(signal.hccl_json, "job summary hccl.json", 64 << 20);
  if (!table.ok() || !table->is_object()) return job;
  auto list = table->find("server_list");
  if (list == table->end() || !list->is_array()) return job;
  for (const auto& server : *list) {
    if (!server.is_object()) continue;
    diagnosis::ServerRanks s;
    s.sn = StringField(server, "server_sn");
    const std::string server_id = StringField(server, "server_id");
    s.ip = IsIpv4(server_id) ? server_id : StringField(server, "host_ip");
    if (auto devices = server.find("device"); devices != server.end() && devices->is_array()) {
      for (const auto& d : *devices) {
        int64_t rank = 0;
        if (d.is_object() && absl::SimpleAtoi(StringField(d, "rank_id"), &rank)) {
          s.rank_ids.push_back(rank);
        }
      }
    }
    if (!s.rank_ids.empty()) job.servers.push_back(std::move(s));
  }
  return job;
}

}  // namespace clusterd::server
