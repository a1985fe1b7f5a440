#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::model {

// MindIE prefill/decode deployments (jobs-ranktable-diagnosis.md §2.3-§2.7): the per-instance
// rank tables the job operator writes into `rings-config-*` ConfigMaps, and the global rank
// table the Config service pushes. Plain data; the builder is cluster/rank_table_global_builder.h.

inline constexpr std::string_view kGlobalRankTableStatusCompleted = "completed";

struct SuperPodEntry {
  std::string super_pod_id;
  std::vector<std::string> server_ids;  // server_list[].server_id
  bool operator==(const SuperPodEntry&) const = default;
};

// One server instance's table (the `hccl.json` key of `rings-config-<name>`).
struct InstanceRankTable {
  struct Device {
    std::string device_id;
    std::string device_ip;
    std::string super_device_id;
    std::string rank_id;
  };
  struct Server {
    std::vector<Device> devices;
    std::string server_id;  // pod UID or host IP
    std::string host_ip;
    std::string container_ip;
    std::string hardware_type;
  };
  std::string status;
  std::string version;
  std::string server_count;
  std::vector<Server> servers;
  std::vector<SuperPodEntry> super_pod_list;
};

// Go encoding/json decoding of an instance table.
absl::StatusOr<InstanceRankTable> ParseInstanceRankTable(std::string_view text,
                                                         std::string_view what);

// The global rank table of §2.4.
struct GlobalRankTable {
  struct Device {
    std::string device_id;
    std::string device_ip;
    std::string super_device_id;  // omitted when empty
    std::string device_logical_id;
    std::string rank_id;
    bool operator==(const Device&) const = default;
  };
  struct Server {
    std::vector<Device> devices;  // omitted when empty
    std::string server_id;
    std::string server_ip;      // omitted when empty
    std::string hardware_type;  // omitted when empty
    bool operator==(const Server&) const = default;
  };
  struct Group {
    std::string group_id;
    std::string deploy_server;  // omitted when empty
    std::string server_count;
    std::vector<Server> servers;
    std::vector<SuperPodEntry> super_pod_list;  // omitted when empty
    bool operator==(const Group&) const = default;
  };
  std::string version;
  std::string status;
  std::vector<Group> groups;
  bool operator==(const GlobalRankTable&) const = default;

  size_t RankCount() const;
};

// Go encoding/json bytes, fields in the order of §2.4.
std::string SerializeGlobalRankTable(const GlobalRankTable& table);

}  // namespace clusterd::model
