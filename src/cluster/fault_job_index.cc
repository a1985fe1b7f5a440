#include "cluster/fault_job_index.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/sv.h"

namespace clusterd::cluster {
namespace {

// Splits on commas outside [...].
std::vector<std::string> SplitItems(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  out.push_back(current);
  return out;
}

}  // namespace

std::vector<CustomFilterRule> ParseCustomFilter(std::string_view text, bool upper_case_keys) {
  std::string normalised =
      absl::StrReplaceAll(Sv(text), {{"\xEF\xBC\x8C", ","}, {"\xEF\xBC\x9A", ":"}});
  std::vector<CustomFilterRule> out;
  for (const std::string& raw : SplitItems(normalised)) {
    absl::string_view item = absl::StripAsciiWhitespace(raw);
    if (item.empty()) continue;
    CustomFilterRule rule;
    // The time follows the last ':' outside [...].
    size_t close = item.rfind(']');
    size_t colon = item.rfind(':');
    if (colon != absl::string_view::npos && (close == absl::string_view::npos || colon > close)) {
      absl::string_view seconds = absl::StripAsciiWhitespace(item.substr(colon + 1));
      item = absl::StripAsciiWhitespace(item.substr(0, colon));
      int64_t value = 0;
      if (absl::SimpleAtoi(seconds, &value) && value >= 0 && value <= kCustomFilterMaxSeconds) {
        rule.seconds = value;
      }
    }
    if (item.empty()) continue;
    rule.key = std::string(item);
    if (upper_case_keys) absl::AsciiStrToUpper(&rule.key);
    out.push_back(std::move(rule));
  }
  return out;
}

FaultJobPolicy PolicyOf(const model::PodGroupInfo& pg) {
  FaultJobPolicy p;
  bool has_retry = false;
  for (absl::string_view s : absl::StrSplit(pg.Annotation(kAnnotationRecoverStrategy), ',')) {
    s = absl::StripAsciiWhitespace(s);
    if (s == "retry") has_retry = true;
    if (s == "recover-in-place") p.recover_in_place = true;
  }
  p.retry = has_retry && pg.Label(kLabelProcessRecoverEnable) == "on";
  if (std::string s = pg.Label(kLabelSubHealthyStrategy); !s.empty()) p.sub_healthy_strategy = s;
  p.code_rules = ParseCustomFilter(pg.Annotation(kAnnotationFilterFaultCode), true);
  p.level_rules = ParseCustomFilter(pg.Annotation(kAnnotationFilterFaultLevel), false);
  p.mindie_server = pg.Label(model::kLabelApp) == kAppMindIeServer;
  return p;
}

const FaultJobServer* FaultJob::ServerOn(std::string_view node) const {
  for (const FaultJobServer& s : servers) {
    if (s.node == node) return &s;
  }
  return nullptr;
}

std::optional<int64_t> FaultJob::PodRankOf(int64_t rank_id) const {
  if (devices_per_pod <= 0) return std::nullopt;
  return rank_id / devices_per_pod;
}

const NpuUse* FaultJobIndex::Use(const std::string& node, int64_t physical_id) const {
  auto n = npus_by_node.find(node);
  if (n == npus_by_node.end()) return nullptr;
  auto it = n->second.find(physical_id);
  return it == n->second.end() ? nullptr : &it->second;
}

const FaultJob* FaultJobIndex::Job(const std::string& job_id) const {
  auto it = jobs.find(job_id);
  return it == jobs.end() ? nullptr : &it->second;
}

const std::set<std::string>& FaultJobIndex::JobsOn(const std::string& node) const {
  static const std::set<std::string> kNone;
  auto it = jobs_by_node.find(node);
  return it == jobs_by_node.end() ? kNone : it->second;
}

std::set<std::string> FaultJobIndex::NodesOf(const FaultJob& job) const {
  std::set<std::string> nodes;
  for (const FaultJobServer& s : job.servers) nodes.insert(s.node);
  for (const FaultJobPod& p : job.pods) {
    if (!p.node.empty()) nodes.insert(p.node);
  }
  return nodes;
}

FaultJob BuildFaultJob(const FaultJobSource& src) {
  const JobRecord& r = *src.record;
  FaultJob job;
  job.job_id = r.job_id;
  job.ns = r.ns;
  job.name = r.name;
  job.multi_instance_job_id = r.multi_instance_job_id;
  job.app_type = r.app_type;
  if (src.pod_group != nullptr) {
    job.pod_group_exists = true;
    job.policy = PolicyOf(*src.pod_group);
  }
  std::map<std::string, std::string> live_pods;  // UID -> node: scheduled, not terminated
  for (const model::PodInfo* pod : src.pods) {
    if (pod == nullptr) continue;
    FaultJobPod p;
    p.uid = pod->uid;
    p.ns = pod->ns;
    p.name = pod->name;
    p.node = pod->node_name;
    p.host_ip = pod->host_ip;
    p.rank = pod->rank_index;
    if (pod->allocation.has_value()) {
      for (const model::AllocatedDevice& d : pod->allocation->devices) {
        int64_t id = 0;
        if (absl::SimpleAtoi(d.device_id, &id)) p.npus.push_back(id);
      }
      if (job.devices_per_pod == 0 && !pod->allocation->devices.empty()) {
        job.devices_per_pod = static_cast<int64_t>(pod->allocation->devices.size());
      }
    }
    if (p.rank.has_value() && !pod->uid.empty() && !pod->IsBackup()) {
      job.pod_uid_by_rank.emplace(*p.rank, pod->uid);
    }
    const bool terminated =
        pod->phase == model::kPodPhaseSucceeded || pod->phase == model::kPodPhaseFailed;
    p.holds_npus = !p.node.empty() && !terminated;
    if (p.holds_npus) live_pods.emplace(p.uid, p.node);
    job.pods.push_back(std::move(p));
  }
  // A server of the last complete rank table is the job's only while its pod is: a pod that is
  // gone, replaced or terminated no longer holds those NPUs (another job's pod may hold them
  // already), so its server is left out of fault mapping. The reference maps the whole last
  // complete table until the next one is complete (docs/compatibility.md).
  for (const model::RankTableServer& s : r.previous_servers) {
    if (auto live = live_pods.find(s.pod_uid);
        live == live_pods.end() || live->second != s.server_name) {
      continue;
    }
    FaultJobServer server;
    server.node = s.server_name;
    server.server_id = s.server_id;
    server.host_ip = s.host_ip;
    server.server_sn = s.server_sn;
    server.pod_uid = s.pod_uid;
    for (const model::RankTableDevice& d : s.devices) {
      FaultJobDevice dev;
      if (!absl::SimpleAtoi(d.device_id, &dev.device_id) ||
          !absl::SimpleAtoi(d.rank_id, &dev.rank_id)) {
        continue;
      }
      server.devices.push_back(dev);
    }
    job.servers.push_back(std::move(server));
  }
  return job;
}

void FaultJobIndex::Unlink(const FaultJob& job, std::set<std::pair<std::string, int64_t>>* freed) {
  for (const FaultJobPod& p : job.pods) {
    if (!p.holds_npus) continue;
    auto node = npus_by_node.find(p.node);
    if (node == npus_by_node.end()) continue;
    for (int64_t id : p.npus) {
      auto use = node->second.find(id);
      if (use == node->second.end() || use->second.job_id != job.job_id ||
          use->second.pod_uid != p.uid) {
        continue;
      }
      node->second.erase(use);
      freed->emplace(p.node, id);
    }
    if (node->second.empty()) npus_by_node.erase(node);
  }
  for (const std::string& n : NodesOf(job)) {
    auto it = jobs_by_node.find(n);
    if (it == jobs_by_node.end()) continue;
    it->second.erase(job.job_id);
    if (it->second.empty()) jobs_by_node.erase(it);
  }
}

void FaultJobIndex::Link(const FaultJob& job) {
  for (const FaultJobPod& p : job.pods) {
    if (!p.holds_npus) continue;
    auto& npus = npus_by_node[p.node];
    for (int64_t id : p.npus) npus.emplace(id, NpuUse{job.job_id, p.uid, p.rank});
  }
  for (const std::string& n : NodesOf(job)) jobs_by_node[n].insert(job.job_id);
}

// An NPU two pods claim (a transient of churn) belongs to the claim made first; when that claim
// goes, the NPU passes to another job on the node that claims it (in job-id order), so that the
// index never forgets a pod that holds an NPU.
void FaultJobIndex::Reclaim(const std::set<std::pair<std::string, int64_t>>& freed) {
  for (const auto& [node, id] : freed) {
    if (Use(node, id) != nullptr) continue;
    for (const std::string& job_id : JobsOn(node)) {
      const FaultJob& job = jobs.at(job_id);
      for (const FaultJobPod& p : job.pods) {
        if (p.holds_npus && p.node == node &&
            std::find(p.npus.begin(), p.npus.end(), id) != p.npus.end()) {
          npus_by_node[node].emplace(id, NpuUse{job.job_id, p.uid, p.rank});
          break;
        }
      }
      if (Use(node, id) != nullptr) break;
    }
  }
}

void FaultJobIndex::Put(FaultJob job) {
  std::set<std::pair<std::string, int64_t>> freed;
  if (auto old = jobs.find(job.job_id); old != jobs.end()) {
    Unlink(old->second, &freed);
    jobs.erase(old);
  }
  Link(job);
  jobs.emplace(job.job_id, std::move(job));
  Reclaim(freed);
}

void FaultJobIndex::Erase(const std::string& job_id) {
  auto old = jobs.find(job_id);
  if (old == jobs.end()) return;
  std::set<std::pair<std::string, int64_t>> freed;
  Unlink(old->second, &freed);
  jobs.erase(old);
  Reclaim(freed);
}

FaultJobIndex BuildFaultJobIndex(const std::vector<FaultJobSource>& sources) {
  FaultJobIndex index;
  for (const FaultJobSource& src : sources) {
    if (src.record != nullptr) index.Put(BuildFaultJob(src));
  }
  return index;
}

}  // namespace clusterd::cluster
