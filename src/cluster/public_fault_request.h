#pragma once

// Public faults from third-party senders (fault-pipeline.md §9): the request (gRPC
// PubFault.SendPublicFault or the `PublicFault` key of a labelled ConfigMap), the sender and level
// configuration, and the validation with its documented return codes. Pure functions.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::cluster {

// Return codes and texts of §9.1.
inline constexpr int32_t kPubFaultOk = 0;
inline constexpr int32_t kPubFaultInvalid = 409;
inline constexpr int32_t kPubFaultRateLimited = 410;
inline constexpr std::string_view kPubFaultOkInfo = "public fault send successfully";
inline constexpr std::string_view kPubFaultRateLimitedInfo = "limiter work by resource failed";
inline constexpr std::string_view kPubFaultNilInfo = "req is nil";
// Public-fault ConfigMaps carry this label = "true" and the request under this key (§1.8).
inline constexpr std::string_view kPublicFaultLabel = "mc-consumer-publicfault";
inline constexpr std::string_view kPublicFaultKey = "PublicFault";

inline constexpr std::string_view kAssertionOccur = "occur";
inline constexpr std::string_view kAssertionRecover = "recover";
inline constexpr std::string_view kAssertionOnce = "once";

struct PublicFaultInfluence {
  std::string node_name;
  std::string node_sn;
  std::vector<int32_t> device_ids;
  bool operator==(const PublicFaultInfluence&) const = default;
};

struct PublicFaultItem {
  std::string fault_id;
  std::string fault_type;  // NPU, Node, Network, Storage
  std::string fault_code;  // 9 characters
  int64_t fault_time = 0;  // ms
  std::string assertion;   // occur, recover, once
  std::map<std::string, std::string> fault_location;
  std::vector<PublicFaultInfluence> influence;
  std::string description;
  bool operator==(const PublicFaultItem&) const = default;
};

struct PublicFaultRequest {
  std::string id;
  int64_t timestamp = 0;  // ms
  std::string version;    // "1.0"
  std::string resource;   // the sender
  std::vector<PublicFaultItem> faults;
  bool operator==(const PublicFaultRequest&) const = default;
};

// Decodes the `PublicFault` value of a ConfigMap (JSON, Go encoding/json rules: missing fields
// are zero, a field of the wrong type is an error).
absl::StatusOr<PublicFaultRequest> ParsePublicFaultRequest(std::string_view text);

// publicFaultConfiguration.json / publicCustomization.json (§9.3).
struct PublicFaultConfig {
  std::map<std::string, std::string> level_of_code;  // code -> level (§9.3 precedence applied)
  std::set<std::string> resources;
  bool operator==(const PublicFaultConfig&) const = default;
  std::optional<std::string> LevelOf(std::string_view code) const;
};
absl::StatusOr<PublicFaultConfig> ParsePublicFaultConfig(std::string_view text);

// A fault that passed validation, with its influence resolved to node names.
struct AcceptedPublicFault {
  PublicFaultItem item;
  std::string level;
  // node -> device ids (several influence entries for one node are merged).
  std::map<std::string, std::vector<int32_t>> nodes;
};

struct PublicFaultVerdict {
  int32_t code = kPubFaultOk;
  std::string info{kPubFaultOkInfo};
  std::vector<AcceptedPublicFault> accepted;
  std::vector<std::string> dropped;  // why individual faults were dropped
};

// Node name of a serial number (node annotation product-serial-number), or nullopt.
using NodeBySerialFn = std::function<std::optional<std::string>(const std::string& sn)>;

// §9.2 validation (the rate limit is checked by the caller, before this). Request-level failures
// reject the request (409 `check public fault info failed, error: <reason>`); a fault-level
// failure drops that fault; no surviving fault rejects the request ("there is no valid fault").
PublicFaultVerdict ValidatePublicFaultRequest(const PublicFaultRequest& request,
                                              const PublicFaultConfig& config,
                                              const NodeBySerialFn& node_by_serial);

// The 409 info text for `reason`.
std::string InvalidPublicFaultInfo(std::string_view reason);

}  // namespace clusterd::cluster
