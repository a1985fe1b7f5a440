#include "cluster/rank_table_global_builder.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/sv.h"

namespace clusterd::cluster {
namespace {

using model::GlobalRankTable;

absl::StatusOr<GlobalRankTable::Group> PodGroupOf(std::string_view job_id, std::string_view role,
                                                  const char* group_id,
                                                  std::vector<MindIePod> pods) {
  if (pods.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("global rank table of ", Sv(job_id), ": no ", Sv(role), " pod"));
  }
  std::sort(pods.begin(), pods.end(),
            [](const MindIePod& a, const MindIePod& b) { return a.name < b.name; });
  GlobalRankTable::Group group;
  group.group_id = group_id;
  group.server_count = std::to_string(pods.size());
  for (const MindIePod& p : pods) {
    if (p.host_ip.empty() || p.pod_ip.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("global rank table of ", Sv(job_id), ": ", Sv(role), " pod ", p.ns, "/",
                       p.name, " has no ", p.host_ip.empty() ? "status.hostIP" : "status.podIP"));
    }
    GlobalRankTable::Server server;
    server.server_id = p.host_ip;
    server.server_ip = p.pod_ip;
    group.servers.push_back(std::move(server));
  }
  return group;
}

}  // namespace

absl::StatusOr<GlobalRankTable> BuildGlobalRankTable(std::string_view job_id,
                                                     std::vector<InstanceConfigMap> instances,
                                                     std::vector<MindIePod> coordinators,
                                                     std::vector<MindIePod> controllers) {
  std::sort(instances.begin(), instances.end(),
            [](const InstanceConfigMap& a, const InstanceConfigMap& b) { return a.name < b.name; });
  struct Kept {
    model::InstanceRankTable table;
    std::string deploy_server;
  };
  std::vector<Kept> kept;
  for (const InstanceConfigMap& cm : instances) {
    const std::string what = absl::StrCat("configmap ", cm.ns, "/", cm.name);
    auto server_label = cm.labels.find(std::string(kLabelGrtServerDeployServer));
    auto group_label = cm.labels.find(std::string(kLabelGrtGroupDeployServer));
    const bool has_server = server_label != cm.labels.end();
    const bool has_group = group_label != cm.labels.end();
    if (has_server == has_group) {
      return absl::InvalidArgumentError(absl::StrCat(
          "global rank table of ", Sv(job_id), ": ", what, " must carry exactly one of the labels ",
          Sv(kLabelGrtServerDeployServer), " and ", Sv(kLabelGrtGroupDeployServer),
          has_server ? " (it has both)" : " (it has neither)"));
    }
    auto parsed = model::ParseInstanceRankTable(cm.hccl_json, absl::StrCat(what, " hccl.json"));
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("global rank table of ", Sv(job_id), ": ", parsed.status().message()));
    }
    if (parsed->status != model::kGlobalRankTableStatusCompleted) continue;
    // Server ids become host IPs, in the super-pod list too.
    absl::flat_hash_map<std::string, std::string> host_of;
    for (auto& s : parsed->servers) {
      host_of[s.server_id] = s.host_ip;
      s.server_id = s.host_ip;
    }
    for (auto& sp : parsed->super_pod_list) {
      for (auto& id : sp.server_ids) {
        if (auto it = host_of.find(id); it != host_of.end()) id = it->second;
      }
    }
    kept.push_back({*std::move(parsed), has_server ? server_label->second : group_label->second});
  }
  if (kept.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("global rank table of ", Sv(job_id), ": no completed instance rank table (",
                     instances.size(), " rings-config ConfigMaps)"));
  }

  GlobalRankTable table;
  table.version = kept.front().table.version;
  table.status = std::string(model::kGlobalRankTableStatusCompleted);
  auto coordinator = PodGroupOf(job_id, "coordinator", "0", std::move(coordinators));
  if (!coordinator.ok()) return coordinator.status();
  auto controller = PodGroupOf(job_id, "controller", "1", std::move(controllers));
  if (!controller.ok()) return controller.status();
  table.groups.push_back(*std::move(coordinator));
  table.groups.push_back(*std::move(controller));
  for (size_t i = 0; i < kept.size(); ++i) {
    const model::InstanceRankTable& t = kept[i].table;
    GlobalRankTable::Group g;
    g.group_id = std::to_string(i + 2);
    g.deploy_server = kept[i].deploy_server;
    g.server_count = t.server_count;
    for (const auto& s : t.servers) {
      GlobalRankTable::Server server;
      for (size_t k = 0; k < s.devices.size(); ++k) {
        const auto& d = s.devices[k];
        server.devices.push_back(
            {d.device_id, d.device_ip, d.super_device_id, std::to_string(k), d.rank_id});
      }
      server.server_id = s.server_id;
      server.server_ip = s.container_ip;
      server.hardware_type = s.hardware_type;
      g.servers.push_back(std::move(server));
    }
    g.super_pod_list = t.super_pod_list;
    table.groups.push_back(std::move(g));
  }
  return table;
}

}  // namespace clusterd::cluster
