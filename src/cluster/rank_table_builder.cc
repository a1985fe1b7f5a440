#include "cluster/rank_table_builder.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "model/pod_group_info.h"

namespace clusterd::cluster {
namespace {

using model::PodInfo;
using model::RankLevelElement;
using model::RankTable;
using model::RankTableServer;
using model::RankV2;

// Port address types of A5 levelList entries, upper case as the device plugin writes them.
constexpr std::string_view kPortRoce = "ROCE";
constexpr std::string_view kPortUboe = "UBOE";
constexpr std::string_view kPortUbg = "UBG";
// Filler for a level-2/3 element a device does not describe (§2.1).
constexpr std::string_view kDefaultNetInstanceId = "CLUSTER1";
constexpr std::string_view kNetTypeClos = "CLOS";

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  if (text.empty() || !absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &v)) {
    return std::nullopt;
  }
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') return std::nullopt;  // Atoi takes no spaces
  }
  return v;
}

// Level 0 and 1 carry one element whatever the port type; Go takes "the first" of a map, we
// take the first by key so that the table is deterministic.
const RankLevelElement* ElementOf(const model::AllocatedDevice& device, int64_t level,
                                  std::string_view port_type) {
  for (const auto& l : device.level_list) {
    if (l.level != level) continue;
    if (level == 0 || level == 1) {
      return l.info.empty() ? nullptr : &l.info.begin()->second;
    }
    auto it = l.info.find(std::string(port_type));
    return it == l.info.end() ? nullptr : &it->second;
  }
  return nullptr;
}

std::string ChoosePortType(const std::set<std::string>& offered, std::string_view label) {
  auto has = [&](std::string_view t) { return offered.count(std::string(t)) > 0; };
  if (label.empty()) {
    for (std::string_view t : {kPortRoce, kPortUboe, kPortUbg}) {
      if (has(t)) return std::string(t);
    }
    return "";
  }
  if (label == kPortRoce) return has(kPortRoce) ? std::string(kPortRoce) : "";
  if (label == kPortUboe) {
    if (has(kPortUboe)) return std::string(kPortUboe);
    if (has(kPortUbg)) return std::string(kPortUbg);
  }
  return "";
}

bool IncludeLevel(int64_t level, std::string port_type, std::string_view label) {
  if (port_type.empty() && !label.empty()) port_type = std::string(label);
  if (level == 2) return port_type == kPortUboe || port_type == kPortUbg;
  if (level == 3) return port_type == kPortRoce;
  return true;
}

std::string TrimmedUpper(std::string_view s) {
  std::string out;
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  for (size_t i = b; i < e; ++i)
    out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(s[i]))));
  return out;
}

struct UsedPod {
  const PodInfo* pod;
  int64_t rank;
};

void AppendRankListV2(const std::vector<UsedPod>& used, std::string_view scale_out_label,
                      RankTable& table) {
  struct Pending {
    RankV2 rank;
    const model::AllocatedDevice* device;
  };
  std::vector<Pending> ranks;
  std::set<std::string> offered;
  for (const UsedPod& u : used) {
    const auto& devices = u.pod->allocation->devices;
    const int64_t n = static_cast<int64_t>(devices.size());
    for (const auto& d : devices) {
      for (const auto& l : d.level_list) {
        for (const auto& [port, _] : l.info) offered.insert(port);
      }
    }
    for (int64_t idx = 0; idx < n; ++idx) {
      const auto& d = devices[idx];
      std::optional<int64_t> id = ParseInt(d.device_id);
      if (!id.has_value())
        continue;  // §2.1: a device whose device_id is not an integer is left out
      Pending p{RankV2{u.rank * n + idx, *id, *id, {}}, &d};
      for (int64_t level : {0, 1}) {
        if (const RankLevelElement* e = ElementOf(d, level, ""); e != nullptr) {
          p.rank.level_list.push_back(*e);
        }
      }
      ranks.push_back(std::move(p));
    }
  }
  if (ranks.empty()) return;
  const std::string label = TrimmedUpper(scale_out_label);
  const std::string port = ChoosePortType(offered, label);
  for (Pending& p : ranks) {
    for (int64_t level : {2, 3}) {
      if (!IncludeLevel(level, port, label)) continue;
      if (const RankLevelElement* e = ElementOf(*p.device, level, port); e != nullptr) {
        p.rank.level_list.push_back(*e);
      } else {
        p.rank.level_list.push_back(RankLevelElement{level, std::string(kDefaultNetInstanceId),
                                                     std::string(kNetTypeClos), "",
                                                     std::vector<model::RankAddrItem>{}});
      }
    }
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const Pending& a, const Pending& b) {
    return a.rank.rank_id < b.rank.rank_id;
  });
  for (Pending& p : ranks) table.rank_list.push_back(std::move(p.rank));
  table.rank_count = static_cast<int64_t>(table.rank_list.size());
  table.version = std::string(model::kRankTableVersion2);
}

}  // namespace

std::vector<const PodInfo*> RankTablePods(const std::vector<const PodInfo*>& pods) {
  absl::flat_hash_set<std::string> names;
  for (const PodInfo* p : pods) names.insert(p->name);
  std::vector<const PodInfo*> out;
  out.reserve(pods.size());
  for (const PodInfo* p : pods) {
    if (p->IsBackup()) {
      std::string source = p->Annotation(model::kAnnotationBackupSourcePodName);
      if (!source.empty() && names.contains(source)) continue;
    }
    out.push_back(p);
  }
  return out;
}

RankTableBuild BuildJobRankTable(const std::vector<const PodInfo*>& input, int64_t replicas,
                                 const NodeSerials& serials, std::string_view resource_type,
                                 std::string_view scale_out_type_label) {
  RankTableBuild build;
  std::vector<const PodInfo*> pods = input;
  std::sort(pods.begin(), pods.end(), [](const PodInfo* a, const PodInfo* b) {
    return a->ns != b->ns ? a->ns < b->ns : a->name < b->name;
  });

  std::vector<RankTableServer> servers;
  std::vector<UsedPod> used;
  std::map<int64_t, std::string> rank_owner;
  absl::flat_hash_set<std::string> nodes_seen;
  bool one_pod_one_node = true;
  for (const PodInfo* pod : pods) {
    const std::string key = pod->Key();
    if (!pod->rank_index.has_value()) {
      if (!pod->rank_index_problem.empty()) {
        build.problems.push_back({key, "invalid_rank_index", pod->rank_index_problem});
      } else if (pod->needs_npu) {
        build.problems.push_back(
            {key, "missing_rank_index",
             absl::StrCat("pod ", key, ": annotation ", std::string(model::kAnnotationRankIndex),
                          " is missing")});
      }
      continue;
    }
    const int64_t r = *pod->rank_index;
    if (r >= replicas) {
      build.problems.push_back({key, "rank_out_of_range",
                                absl::StrCat("pod ", key, ": rank index ", r,
                                             " is not below the job's replicas ", replicas)});
      continue;
    }
    if (auto [it, inserted] = rank_owner.emplace(r, pod->name); !inserted) {
      build.problems.push_back(
          {key, "duplicate_rank_index",
           absl::StrCat("pod ", key, ": rank index ", r, " is already taken by pod ", pod->ns, "/",
                        it->second, "; pod left out of the rank table")});
      continue;
    }
    const model::PodDeviceAllocation* alloc =
        pod->allocation.has_value() ? &*pod->allocation : nullptr;
    if (pod->allocation_annotation_present && alloc == nullptr) {
      build.problems.push_back({key, "malformed_allocation", pod->allocation_problem});
    }
    if ((alloc != nullptr && !alloc->devices.empty()) ||
        (!pod->allocation_annotation_present && !pod->needs_npu)) {
      ++build.completed_pods;
    }
    if (alloc == nullptr || alloc->devices.empty()) continue;
    if (!nodes_seen.insert(pod->node_name).second) one_pod_one_node = false;

    RankTableServer server;
    server.server_id = alloc->server_id;
    server.host_ip = alloc->host_ip;
    server.super_pod_id = alloc->super_pod_id;
    server.server_name = pod->node_name;
    if (!pod->node_name.empty()) {
      if (auto it = serials.by_node_name.find(pod->node_name); it != serials.by_node_name.end()) {
        server.server_sn = it->second;
      }
    } else if (auto it = serials.by_host_ip.find(alloc->host_ip); it != serials.by_host_ip.end()) {
      server.server_sn = it->second;
    }
    server.pod_name = pod->name;
    server.container_ids = pod->container_ids;
    server.pod_uid = pod->uid;
    const int64_t n = static_cast<int64_t>(alloc->devices.size());
    server.devices.reserve(alloc->devices.size());
    for (int64_t idx = 0; idx < n; ++idx) {
      const auto& d = alloc->devices[idx];
      server.devices.push_back(
          {d.device_id, d.device_ip, std::to_string(r * n + idx), d.super_device_id});
    }
    servers.push_back(std::move(server));
    used.push_back({pod, r});
  }
  if (one_pod_one_node) {
    for (auto& s : servers) s.server_id = s.host_ip;
  }
  // First rank ids are distinct (rank indices are unique and rank = r*n), so the order is total.
  std::stable_sort(servers.begin(), servers.end(),
                   [](const RankTableServer& a, const RankTableServer& b) {
                     return ParseInt(a.devices.front().rank_id).value_or(0) <
                            ParseInt(b.devices.front().rank_id).value_or(0);
                   });
  build.table.server_count = std::to_string(servers.size());
  build.table.status = std::string(
      build.completed_pods == replicas ? model::kRankTableComplete : model::kRankTableInitializing);
  if (resource_type == model::kResourceTypeNpu) {
    AppendRankListV2(used, scale_out_type_label, build.table);
  }
  build.table.server_list = std::move(servers);
  return build;
}

}  // namespace clusterd::cluster
