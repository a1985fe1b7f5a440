#include "diagnosis/public_fault.h"

#include <random>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace clusterd::diagnosis {

nlohmann::ordered_json PublicFaultReport::ToJson() const {
  using Json = nlohmann::ordered_json;
  Json faults_json = Json::array();
  for (const PublicFault& f : faults) {
    Json loc = Json::object();
    for (const auto& [k, v] : f.fault_location) loc[k] = v;
    Json infl = Json::array();
    for (const FaultInfluence& i : f.influence) {
      infl.push_back(
          Json{{"nodeName", i.node_name}, {"nodeSN", i.node_sn}, {"deviceIds", i.device_ids}});
    }
    faults_json.push_back(Json{{"faultId", f.fault_id},
                               {"faultType", f.fault_type},
                               {"faultCode", f.fault_code},
                               {"faultTime", f.fault_time},
                               {"assertion", f.assertion},
                               {"faultLocation", loc},
                               {"influence", infl},
                               {"description", f.description}});
  }
  return Json{{"id", id},
              {"timestamp", timestamp},
              {"version", version},
              {"resource", resource},
              {"faults", faults_json}};
}

std::string NewUuid() {
  static absl::Mutex mu(absl::kConstInit);
  static std::mt19937_64* rng = nullptr;
  uint64_t a, b;
  {
    absl::MutexLock lock(&mu);
    if (rng == nullptr) rng = new std::mt19937_64(std::random_device{}());
    a = (*rng)();
    b = (*rng)();
  }
  a = (a & ~0xF000ULL) | 0x4000ULL;                  // version 4
  b = (b & ~(0xC000ULL << 48)) | (0x8000ULL << 48);  // variant 10
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF,
                         b >> 48, b & 0xFFFFFFFFFFFFULL);
}

PublicFaultReport SlowNodeReport(std::string_view job_id, std::string_view fault_code,
                                 const std::vector<int64_t>& ranks, std::string_view reporter_node,
                                 absl::Time now, std::string id) {
  PublicFaultReport r;
  r.id = std::move(id);
  r.timestamp = absl::ToUnixMillis(now);
  PublicFault f;
  f.fault_id = std::string(job_id);
  f.fault_type = std::string(kFaultTypeNode);
  f.fault_code = std::string(fault_code);
  f.fault_time = r.timestamp;
  f.assertion = std::string(kAssertionOnce);
  f.influence.push_back({std::string(reporter_node), "", ranks});
  r.faults.push_back(std::move(f));
  return r;
}

}  // namespace clusterd::diagnosis
