#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace clusterd::model {

// The per-job rank table (jobs-ranktable-diagnosis.md §2.1): the `hccl.json` of the job-summary
// ConfigMaps and the `HcclJson` of job-summary signals. Plain data; the builder lives in
// cluster/rank_table_builder.h.

// Rank-table status values (no "d" in "complete", unlike the global table's "completed").
inline constexpr std::string_view kRankTableInitializing = "initializing";
inline constexpr std::string_view kRankTableComplete = "complete";
// `version` of a table carrying a v2.0 rank_list (resource type `npu`).
inline constexpr std::string_view kRankTableVersion2 = "2.0";

// One address of a network level (A5 levelList), field order as the original emits it.
struct RankAddrItem {
  std::string addr_type;
  std::string addr;
  std::optional<std::vector<std::string>> ports;  // nullopt renders `null` (Go nil slice)
  std::string plane_id;
  bool operator==(const RankAddrItem&) const = default;
};

// One level of a device's multi-layer network description (A5).
struct RankLevelElement {
  int64_t net_layer = 0;
  std::string net_instance_id;
  std::string net_type;
  std::string net_attr;
  std::optional<std::vector<RankAddrItem>> rank_addr_list;  // nullopt renders `null`
  bool operator==(const RankLevelElement&) const = default;
};

// The device plugin's per-device `levelList` entry: level index and one element per port type
// (keys such as "UB", "UBG", "UBOE", "ROCE").
struct RankLevel {
  int64_t level = 0;
  std::map<std::string, RankLevelElement> info;
  bool operator==(const RankLevel&) const = default;
};

struct RankTableDevice {
  std::string device_id;
  std::string device_ip;
  std::string rank_id;
  std::string super_device_id;  // omitted from JSON when empty
  bool operator==(const RankTableDevice&) const = default;
};

struct RankTableServer {
  std::vector<RankTableDevice> devices;
  std::string server_id;
  std::string host_ip;
  int64_t super_pod_id = 0;
  std::string server_name;  // node name
  std::string server_sn;    // node serial number
  std::string pod_name;
  std::map<std::string, std::string> container_ids;  // container name -> container ID
  // Not serialised: the pod the server was built from.
  std::string pod_uid;
  bool operator==(const RankTableServer&) const = default;
};

// v2.0 rank_list entry (resource type `npu`); all numbers are JSON integers.
struct RankV2 {
  int64_t rank_id = 0;
  int64_t local_id = 0;
  int64_t device_id = 0;
  std::vector<RankLevelElement> level_list;  // omitted when empty
  bool operator==(const RankV2&) const = default;
};

struct RankTable {
  std::string status;
  // nullopt: never built, renders `"server_list":null`.
  std::optional<std::vector<RankTableServer>> server_list;
  std::string server_count;
  int64_t total = 0;              // number of job-summary ConfigMap slices
  std::string version;            // omitted when empty
  std::vector<RankV2> rank_list;  // omitted when empty
  int64_t rank_count = 0;         // omitted when 0
  bool operator==(const RankTable&) const = default;

  // Devices (NPUs) over all servers.
  size_t DeviceCount() const;
};

// Go `encoding/json` bytes of each piece, fields in the order of §2.1.
std::string SerializeRankTable(const RankTable& table);
std::string SerializeRankTableServer(const RankTableServer& server);
std::string SerializeRankV2(const RankV2& rank);
std::string SerializeRankLevelElement(const RankLevelElement& element);

// The table assembled from already-serialised server and rank_list entries (used when slicing
// a table into ConfigMaps without serialising each server twice).
std::string SerializeRankTableParts(const RankTable& table, const std::vector<std::string>& servers,
                                    bool server_list_null, const std::vector<std::string>& ranks);

// Decoding of the pieces written by the device plugin (Go encoding/json rules).
absl::StatusOr<RankLevelElement> RankLevelElementFromJson(const nlohmann::ordered_json& value,
                                                          std::string_view what);
absl::StatusOr<RankLevel> RankLevelFromJson(const nlohmann::ordered_json& value,
                                            std::string_view what);

}  // namespace clusterd::model
