#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace clusterd::diagnosis {

// Public faults the diagnosis reports (jobs-ranktable-diagnosis.md §6.2, §7.5), in the request
// shape of fault-pipeline.md §9.1. The room does not know the fault centre: the server connects
// a PublicFaultSink to its SendPublicFault.

inline constexpr std::string_view kSlowNodeFaultCode = "110001010";           // SubHealth
inline constexpr std::string_view kSlowNodeRecoveredFaultCode = "100001011";  // NotHandle
inline constexpr std::string_view kNetFaultSameServerCode = "200001010";
inline constexpr std::string_view kNetFaultCrossServerCode = "200001011";
inline constexpr std::string_view kNetFaultNonNpuCode = "200001012";
inline constexpr std::string_view kFdOnlineResource = "fd-online";
inline constexpr std::string_view kPublicFaultVersion = "1.0";
inline constexpr std::string_view kFaultTypeNode = "Node";
inline constexpr std::string_view kFaultTypeNetwork = "Network";
inline constexpr std::string_view kAssertionOnce = "once";

struct FaultInfluence {
  std::string node_name;
  std::string node_sn;
  std::vector<int64_t> device_ids;
  bool operator==(const FaultInfluence&) const = default;
};

struct PublicFault {
  std::string fault_id;
  std::string fault_type;
  std::string fault_code;
  int64_t fault_time = 0;  // ms
  std::string assertion;
  std::map<std::string, std::string> fault_location;
  std::vector<FaultInfluence> influence;
  std::string description;
  bool operator==(const PublicFault&) const = default;
};

struct PublicFaultReport {
  std::string id;
  int64_t timestamp = 0;  // ms
  std::string version = std::string(kPublicFaultVersion);
  std::string resource = std::string(kFdOnlineResource);
  std::vector<PublicFault> faults;
  bool operator==(const PublicFaultReport&) const = default;
  // The §9.1 request JSON (what SendPublicFault / the PublicFault ConfigMap key carry).
  nlohmann::ordered_json ToJson() const;
};

// Where reports go. Called from the controller's worker; an error is retried (up to 20 times,
// 3 s apart, as the original does on gRPC errors).
class PublicFaultSink {
 public:
  virtual ~PublicFaultSink() = default;
  virtual absl::Status SendPublicFault(const PublicFaultReport& report) = 0;
};

// A random RFC 4122 version-4 UUID (the request id).
std::string NewUuid();

// The slow-node fault of §6.2: faultId = jobId, type Node, assertion once, influence
// [{nodeName: reporter, deviceIds: ranks}] (rank ids, as the original).
PublicFaultReport SlowNodeReport(std::string_view job_id, std::string_view fault_code,
                                 const std::vector<int64_t>& ranks, std::string_view reporter_node,
                                 absl::Time now, std::string id);

}  // namespace clusterd::diagnosis
