#include "cluster/public_fault_cache.h"

#include <algorithm>

#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"

namespace clusterd::cluster {

using nlohmann::ordered_json;

PublicFaultCache::PublicFaultCache(double rate_per_second, int64_t burst, size_t limit)
    : rate_(rate_per_second), burst_(burst), limit_(limit) {}

void PublicFaultCache::SetResources(const std::set<std::string>& resources, int64_t now_ms) {
  buckets_.clear();
  for (const std::string& r : resources) {
    buckets_[r] = Bucket{static_cast<double>(burst_), now_ms};
  }
}

bool PublicFaultCache::Admit(const std::string& resource, int64_t now_ms) {
  auto it = buckets_.find(resource);
  if (it == buckets_.end()) return false;
  Bucket& b = it->second;
  if (now_ms > b.last_ms) {
    b.tokens = std::min(static_cast<double>(burst_),
                        b.tokens + rate_ * static_cast<double>(now_ms - b.last_ms) / 1000.0);
    b.last_ms = now_ms;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

bool PublicFaultCache::Insert(const std::string& node, const std::string& key,
                              PublicFaultEntry entry) {
  auto& faults = by_node_[node];
  if (faults.count(key) != 0) return false;
  if (size_ >= limit_) {
    if (faults.empty()) by_node_.erase(node);
    return false;
  }
  faults.emplace(key, std::move(entry));
  ++size_;
  return true;
}

void PublicFaultCache::Schedule(int64_t due_ms, const std::string& node, const std::string& key) {
  removals_.insert(Removal{due_ms, node, key});
}

std::set<std::string> PublicFaultCache::Apply(const std::string& resource,
                                              const std::vector<AcceptedPublicFault>& faults,
                                              int64_t now_ms, size_t* rejected) {
  std::set<std::string> changed;
  for (const AcceptedPublicFault& f : faults) {
    const std::string key = KeyOf(resource, f.item.fault_id);
    for (const auto& [node, ids] : f.nodes) {
      PublicFaultEntry entry;
      entry.resource = resource;
      entry.fault_id = f.item.fault_id;
      entry.fault_type = f.item.fault_type;
      entry.fault_code = f.item.fault_code;
      entry.level = f.level;
      entry.device_ids = ids;
      entry.fault_time_s = f.item.fault_time / 1000;
      entry.added_ms = now_ms;
      auto node_it = by_node_.find(node);
      const PublicFaultEntry* present = nullptr;
      if (node_it != by_node_.end()) {
        if (auto e = node_it->second.find(key); e != node_it->second.end()) present = &e->second;
      }
      if (f.item.assertion == kAssertionOccur || f.item.assertion == kAssertionOnce) {
        if (present == nullptr) {
          if (Insert(node, key, std::move(entry))) {
            changed.insert(node);
          } else if (rejected != nullptr) {
            ++*rejected;
          }
        }
        if (f.item.assertion == kAssertionOnce) Schedule(now_ms + kPublicFaultMinVisibleMs, node, key);
        continue;
      }
      // recover
      if (present == nullptr) {
        Schedule(now_ms + kPublicFaultMinVisibleMs, node, key);
      } else if (now_ms - present->added_ms >= kPublicFaultMinVisibleMs) {
        node_it->second.erase(key);
        --size_;
        if (node_it->second.empty()) by_node_.erase(node_it);
        changed.insert(node);
      } else {
        Schedule(present->added_ms + kPublicFaultMinVisibleMs, node, key);
      }
    }
  }
  return changed;
}

std::set<std::string> PublicFaultCache::Expire(int64_t now_ms) {
  std::set<std::string> changed;
  while (!removals_.empty() && removals_.begin()->due_ms <= now_ms) {
    Removal r = *removals_.begin();
    removals_.erase(removals_.begin());
    auto node_it = by_node_.find(r.node);
    if (node_it == by_node_.end()) continue;
    if (node_it->second.erase(r.key) != 0) {
      --size_;
      changed.insert(r.node);
    }
    if (node_it->second.empty()) by_node_.erase(node_it);
  }
  return changed;
}

std::optional<int64_t> PublicFaultCache::NextDue() const {
  if (removals_.empty()) return std::nullopt;
  return removals_.begin()->due_ms;
}

std::vector<PublicFaultOnNode> PublicFaultCache::OnNode(const std::string& node) const {
  std::vector<PublicFaultOnNode> out;
  auto it = by_node_.find(node);
  if (it == by_node_.end()) return out;
  for (const auto& [key, e] : it->second) {
    out.push_back(PublicFaultOnNode{key, e.fault_code, e.level, e.device_ids, e.fault_time_s,
                                    e.added_ms});
  }
  return out;
}

std::vector<std::string> PublicFaultCache::Nodes() const {
  std::vector<std::string> out;
  for (const auto& [node, faults] : by_node_) out.push_back(node);
  return out;
}

std::map<std::string, std::string> PublicFaultCache::StatisticData() const {
  std::map<std::string, std::string> data;
  ordered_json num;
  num["publicFaultNum"] = size_;
  data["FaultNum"] = CanonicalJson(num);
  if (size_ > kStatisticDetailLimit) {
    data["Description"] = std::string(kStatisticTooManyText);
    return data;
  }
  ordered_json all = ordered_json::object();
  for (const auto& [node, faults] : by_node_) {
    ordered_json list = ordered_json::array();
    for (const auto& [key, e] : faults) {
      // Field order of the original's struct; every field is omitempty.
      ordered_json item = ordered_json::object();
      if (!e.resource.empty()) item["resource"] = e.resource;
      if (!e.device_ids.empty()) item["devIds"] = e.device_ids;
      if (!e.fault_id.empty()) item["faultId"] = e.fault_id;
      if (!e.fault_type.empty()) item["type"] = e.fault_type;
      if (!e.fault_code.empty()) item["faultCode"] = e.fault_code;
      if (!e.level.empty()) item["level"] = e.level;
      if (e.fault_time_s != 0) item["faultTime"] = e.fault_time_s;
      list.push_back(std::move(item));
    }
    all[node] = std::move(list);
  }
  data["PublicFaults"] = CanonicalJson(all);
  return data;
}

absl::Status PublicFaultCache::LoadStatistic(std::string_view text, int64_t now_ms) {
  if (text.empty()) return absl::OkStatus();
  CLUSTERD_ASSIGN_OR_RETURN(ordered_json parsed, ParseJson(text, "statistic-fault-info PublicFaults"));
  if (!parsed.is_object()) return absl::InvalidArgumentError("PublicFaults is not an object");
  for (const auto& [node, list] : parsed.items()) {
    if (!list.is_array()) continue;
    for (const auto& item : list) {
      PublicFaultEntry e;
      e.resource = StringOr(item, "resource", "");
      e.fault_id = StringOr(item, "faultId", "");
      e.fault_type = StringOr(item, "type", "");
      e.fault_code = StringOr(item, "faultCode", "");
      e.level = StringOr(item, "level", "");
      if (auto t = GetInt64(item, "faultTime"); t.ok()) e.fault_time_s = *t;
      if (auto ids = item.find("devIds"); ids != item.end() && ids->is_array()) {
        for (const auto& id : *ids) {
          if (id.is_number_integer()) e.device_ids.push_back(id.get<int32_t>());
        }
      }
      e.added_ms = now_ms;
      if (e.fault_id.empty() || e.fault_code.empty()) continue;
      const std::string key = KeyOf(e.resource, e.fault_id);
      Insert(node, key, std::move(e));
    }
  }
  return absl::OkStatus();
}

}  // namespace clusterd::cluster
