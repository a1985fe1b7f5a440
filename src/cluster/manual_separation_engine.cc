#include "cluster/manual_separation_engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/json_util.h"
#include "yaml-cpp/yaml.h"

namespace clusterd::cluster {

using nlohmann::ordered_json;

// ---- policy ----

absl::StatusOr<ManualSeparationPolicy> ParseManualSeparationPolicy(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("manually_separate_policy.conf: ", e.what()));
  }
  ManualSeparationPolicy p;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError("manually_separate_policy.conf is not a YAML mapping");
  }
  auto read_int = [](const YAML::Node& node, const char* key, int64_t* out) -> absl::Status {
    if (!node || !node.IsMap() || !node[key]) return absl::OkStatus();
    try {
      *out = node[key].as<int64_t>();
    } catch (const std::exception&) {
      return absl::InvalidArgumentError(absl::StrCat(key, " is not an integer"));
    }
    return absl::OkStatus();
  };
  try {
    if (root["enabled"]) p.enabled = root["enabled"].as<bool>();
  } catch (const std::exception&) {
    return absl::InvalidArgumentError("enabled is not a boolean");
  }
  if (auto s = read_int(root["separate"], "fault_window_hours", &p.fault_window_hours); !s.ok())
    return s;
  if (auto s = read_int(root["separate"], "fault_threshold", &p.fault_threshold); !s.ok()) return s;
  if (auto s = read_int(root["release"], "fault_free_hours", &p.fault_free_hours); !s.ok())
    return s;
  if (p.fault_window_hours < 1 || p.fault_window_hours > 720) {
    return absl::InvalidArgumentError(
        absl::StrCat("fault_window_hours ", p.fault_window_hours, " is outside 1..720"));
  }
  if (p.fault_threshold < 1 || p.fault_threshold > 50) {
    return absl::InvalidArgumentError(
        absl::StrCat("fault_threshold ", p.fault_threshold, " is outside 1..50"));
  }
  if (p.fault_free_hours != -1 && (p.fault_free_hours < 1 || p.fault_free_hours > 240)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fault_free_hours ", p.fault_free_hours, " is outside 1..240 and not -1"));
  }
  return p;
}

// ---- the CM ----

std::map<std::string, std::string> RenderManualInfo(const ManualCache& cache) {
  std::map<std::string, std::string> data;
  for (const auto& [node, npus] : cache) {
    if (npus.empty()) continue;
    ordered_json value;
    ordered_json total = ordered_json::array();
    ordered_json detail = ordered_json::object();
    for (const auto& [npu, details] : npus) {  // std::map: sorted
      total.push_back(npu);
      ordered_json list = ordered_json::array();
      for (const ManualDetail& d : details) {
        ordered_json item;
        item["FaultCode"] = d.fault_code;
        item["FaultLevel"] = d.fault_level;
        item["LastSeparateTime"] = d.last_separate_ms;
        list.push_back(std::move(item));
      }
      detail[npu] = std::move(list);
    }
    value["Total"] = std::move(total);
    value["Detail"] = std::move(detail);
    data[node] = CanonicalJson(value);
  }
  return data;
}

ManualCache ParseManualInfo(const std::map<std::string, std::string>& data,
                            std::vector<std::string>* problems) {
  ManualCache cache;
  for (const auto& [node, text] : data) {
    auto parsed = ParseJson(text, absl::StrCat("clusterd-manual-info-cm ", node));
    if (!parsed.ok() || !parsed->is_object()) {
      if (problems != nullptr) problems->push_back(absl::StrCat("node ", node, ": unparsable"));
      continue;
    }
    auto total = parsed->find("Total");
    if (total == parsed->end() || !total->is_array()) continue;
    const ordered_json* detail = nullptr;
    if (auto d = parsed->find("Detail"); d != parsed->end() && d->is_object()) detail = &*d;
    for (const auto& name : *total) {
      if (!name.is_string()) continue;
      const std::string npu = name.get<std::string>();
      std::vector<ManualDetail>& details = cache[node][npu];
      if (detail == nullptr) continue;
      auto list = detail->find(npu);
      if (list == detail->end() || !list->is_array()) continue;
      for (const auto& item : *list) {
        ManualDetail d;
        d.fault_code = StringOr(item, "FaultCode", "");
        d.fault_level = StringOr(item, "FaultLevel", std::string(model::kLevelManuallySeparateNPU));
        if (auto t = GetInt64(item, "LastSeparateTime"); t.ok()) d.last_separate_ms = *t;
        details.push_back(std::move(d));
      }
    }
  }
  return cache;
}

// ---- engine ----

void ManualSeparationEngine::SetPolicy(const ManualSeparationPolicy& policy) {
  if (policy_.enabled && !policy.enabled) {
    buffers_.clear();
    counters_.clear();
    cache_.clear();
  }
  policy_ = policy;
}

void ManualSeparationEngine::Load(ManualCache cache) {
  cache_ = std::move(cache);
  last_written_ = cache_;
}

void ManualSeparationEngine::Submit(const std::vector<FaultOccurrence>& occurrences) {
  if (!policy_.enabled) return;
  for (const FaultOccurrence& o : occurrences) {
    if (o.job_id.empty()) continue;
    buffers_[o.job_id].push_back(o);
  }
}

std::optional<int64_t> ManualSeparationEngine::NextTriageDue() const {
  std::optional<int64_t> due;
  for (const auto& [job, buffer] : buffers_) {
    if (buffer.empty()) continue;
    const int64_t t = buffer.front().received_ms + kManualTriageWindowMs;
    if (!due.has_value() || t < *due) due = t;
  }
  return due;
}

bool ManualSeparationEngine::Count(const FaultOccurrence& o) {
  auto& times = counters_[{o.node, o.npu_name, o.code}];
  times.erase(std::remove_if(times.begin(), times.end(),
                             [&](int64_t t) { return o.received_ms - t > kManualCounterMaxAgeMs; }),
              times.end());
  times.push_back(o.received_ms);
  const size_t threshold = static_cast<size_t>(policy_.fault_threshold);
  if (times.size() < threshold) return false;
  if (threshold > 1) {
    const int64_t first = times[times.size() - threshold];
    const int64_t last = times.back();
    if (last - first >= policy_.fault_window_hours * 3600 * 1000) return false;
  }
  times.clear();
  std::vector<ManualDetail>& details = cache_[o.node][o.npu_name];
  auto it = std::find_if(details.begin(), details.end(),
                         [&](const ManualDetail& d) { return d.fault_code == o.code; });
  if (it != details.end()) {
    it->last_separate_ms = o.received_ms;
  } else {
    details.push_back(ManualDetail{o.code, std::string(model::kLevelManuallySeparateNPU), o.received_ms});
  }
  return true;
}

std::set<std::string> ManualSeparationEngine::Triage(
    int64_t now_ms, const std::function<bool(const std::string&)>& pod_group_exists) {
  std::set<std::string> changed;
  for (auto it = buffers_.begin(); it != buffers_.end();) {
    if (pod_group_exists && !pod_group_exists(it->first)) {
      it = buffers_.erase(it);
      continue;
    }
    std::vector<FaultOccurrence>& buffer = it->second;
    while (!buffer.empty() && buffer.front().received_ms + kManualTriageWindowMs <= now_ms) {
      const FaultOccurrence first = buffer.front();
      bool software = false;
      for (size_t i = 1; i < buffer.size(); ++i) {
        const FaultOccurrence& o = buffer[i];
        if (o.code == first.code && (o.npu_name != first.npu_name || o.node != first.node)) {
          software = true;
          break;
        }
      }
      std::vector<FaultOccurrence> kept, taken;
      for (FaultOccurrence& o : buffer) {
        const bool same = o.code == first.code &&
                          o.received_ms <= first.received_ms + kManualTriageWindowMs &&
                          (software || (o.npu_name == first.npu_name && o.node == first.node));
        (same ? taken : kept).push_back(std::move(o));
      }
      buffer = std::move(kept);
      if (!software) {
        for (const FaultOccurrence& o : taken) {
          if (Count(o)) changed.insert(o.node);
        }
      }
    }
    it = buffer.empty() ? buffers_.erase(it) : std::next(it);
  }
  return changed;
}

ManualSeparationEngine::SyncPlan ManualSeparationEngine::Sync(
    const std::optional<ManualCache>& cm_now, int64_t now_ms) {
  SyncPlan plan;
  if (cache_.empty()) {
    plan.delete_cm = true;
    last_written_.clear();
    return plan;
  }
  auto remove_npu = [&](const std::string& node, const std::string& npu) {
    auto n = cache_.find(node);
    if (n == cache_.end()) return;
    if (n->second.erase(npu) == 0) return;
    plan.changed_nodes.insert(node);
    for (auto c = counters_.begin(); c != counters_.end();) {
      c = std::get<0>(c->first) == node && std::get<1>(c->first) == npu ? counters_.erase(c)
                                                                        : std::next(c);
    }
    if (n->second.empty()) cache_.erase(n);
  };
  // (1) operator deletions since our last write.
  if (cm_now.has_value()) {
    for (const auto& [node, npus] : last_written_) {
      for (const auto& [npu, details] : npus) {
        bool present = false;
        if (auto n = cm_now->find(node); n != cm_now->end()) present = n->second.count(npu) != 0;
        if (!present) remove_npu(node, npu);
      }
    }
  }
  // (2) release after fault_free_hours.
  if (policy_.fault_free_hours != -1) {
    const int64_t free_ms = policy_.fault_free_hours * 3600 * 1000;
    std::vector<std::pair<std::string, std::string>> empty;
    for (auto& [node, npus] : cache_) {
      for (auto& [npu, details] : npus) {
        const size_t before = details.size();
        details.erase(std::remove_if(details.begin(), details.end(),
                                     // Named captures: clang before 16 cannot capture the
                                     // structured bindings themselves.
                                     [&, &node = node, &npu = npu](const ManualDetail& d) {
                                       const bool release = now_ms - d.last_separate_ms >= free_ms;
                                       if (release) counters_.erase({node, npu, d.fault_code});
                                       return release;
                                     }),
                      details.end());
        if (details.size() != before) plan.changed_nodes.insert(node);
        if (details.empty()) empty.emplace_back(node, npu);
      }
    }
    for (const auto& [node, npu] : empty) remove_npu(node, npu);
  }
  // (3) rewrite (or delete when nothing is left).
  if (cache_.empty()) {
    plan.delete_cm = true;
    last_written_.clear();
  } else {
    plan.write = cache_;
  }
  return plan;
}

std::vector<std::string> ManualSeparationEngine::NpusOn(const std::string& node) const {
  std::vector<std::string> out;
  if (auto n = cache_.find(node); n != cache_.end()) {
    for (const auto& [npu, details] : n->second) out.push_back(npu);
  }
  return out;
}

size_t ManualSeparationEngine::CountOf(const std::string& node, const std::string& npu,
                                       const std::string& code) const {
  auto it = counters_.find({node, npu, code});
  return it == counters_.end() ? 0 : it->second.size();
}

}  // namespace clusterd::cluster
