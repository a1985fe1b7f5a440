#include "cluster/repeat_offenders.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cluster/goodput_ledger.h"
#include "common/saved_time.h"
#include "common/time_format.h"
#include "model/fault_level.h"

namespace clusterd::cluster {
namespace {

std::string Hours(absl::Duration d) {
  const double h = absl::ToDoubleHours(d);
  return h == std::floor(h) ? absl::StrCat(static_cast<int64_t>(h), "h") : absl::StrCat(h, "h");
}

nlohmann::json Mtbf(absl::Duration observed, int64_t faults) {
  if (faults <= 0 || observed <= absl::ZeroDuration()) return nullptr;
  return std::round(absl::ToDoubleSeconds(observed) / static_cast<double>(faults));
}

}  // namespace

nlohmann::ordered_json OffenderPolicy::ToJson() const {
  nlohmann::ordered_json levels_json = nlohmann::ordered_json::array();
  for (const std::string& l : levels) levels_json.push_back(l);
  return {{"enabled", enabled},
          {"faults", faults},
          {"windowHours", absl::ToDoubleHours(window)},
          {"levels", std::move(levels_json)},
          {"action", action}};
}

absl::StatusOr<OffenderPolicy> ParseOffenderPolicy(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("repeat-offender policy: not JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("repeat-offender policy: not an object");
  OffenderPolicy p;
  for (const auto& [key, value] : j.items()) {
    if (key == "enabled") {
      if (!value.is_boolean()) return absl::InvalidArgumentError("enabled: not a boolean");
      p.enabled = value.get<bool>();
    } else if (key == "faults") {
      if (!value.is_number_integer()) return absl::InvalidArgumentError("faults: not an integer");
      p.faults = value.get<int64_t>();
      if (p.faults < 2 || p.faults > 1000) {
        return absl::InvalidArgumentError(
            absl::StrCat("faults: ", p.faults, " is outside 2..1000 (one fault is no repeat)"));
      }
    } else if (key == "windowHours") {
      if (!value.is_number()) return absl::InvalidArgumentError("windowHours: not a number");
      const double h = value.get<double>();
      if (!(h > 0) || h > 24 * 90) {
        return absl::InvalidArgumentError(
            absl::StrCat("windowHours: ", h, " is outside (0, 2160] (90 days)"));
      }
      p.window = absl::Seconds(std::round(h * 3600));
    } else if (key == "levels") {
      if (!value.is_array()) return absl::InvalidArgumentError("levels: not an array");
      for (const auto& l : value) {
        if (!l.is_string() || !model::ParseFaultLevel(l.get<std::string>()).has_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("levels: ", l.dump(), " is not a fault level (SeparateNPU, ...)"));
        }
        p.levels.insert(l.get<std::string>());
      }
    } else if (key == "action") {
      if (!value.is_string()) return absl::InvalidArgumentError("action: not a string");
      p.action = value.get<std::string>();
      if (p.action != "none" && p.action != "cordon" && p.action != "taint") {
        return absl::InvalidArgumentError(
            absl::StrCat("action: \"", p.action, "\" is not one of none, cordon, taint"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown key \"", key, "\" (known: enabled, faults, windowHours, levels, action)"));
    }
  }
  return p;
}

bool RepeatOffenders::Matches(std::string_view level) const {
  if (policy_.levels.empty()) return InterruptsTraining(level);
  return policy_.levels.contains(std::string(level));
}

std::vector<const NodeFaultOccurrence*> RepeatOffenders::InWindow(const NodeFaultRecord& record,
                                                                  absl::Time now) const {
  std::vector<const NodeFaultOccurrence*> out;
  for (const NodeFaultOccurrence& f : record.recent) {
    // A fault stamped a little ahead of our clock still counts (node clocks drift).
    if (f.at > now - policy_.window && f.at <= now + absl::Minutes(5) && Matches(f.level)) {
      out.push_back(&f);
    }
  }
  return out;
}

std::optional<OffenderVerdict> RepeatOffenders::Judge(const std::string& node,
                                                      NodeFaultRecord& record, absl::Time now) {
  if (!policy_.enabled) {
    record.offender = false;
    record.reason.clear();
    return std::nullopt;
  }
  const std::vector<const NodeFaultOccurrence*> in_window = InWindow(record, now);
  if (static_cast<int64_t>(in_window.size()) < policy_.faults) {
    record.offender = false;
    record.reason.clear();
    return std::nullopt;
  }
  if (record.offender) return std::nullopt;  // one verdict (and one action) per offence
  record.offender = true;
  record.verdict_at = now;
  std::vector<std::string> what;
  for (const NodeFaultOccurrence* f : in_window) {
    what.push_back(absl::StrCat(f->code, "@",
                                f->npu.empty() || f->npu == "-1" ? std::string("node") : f->npu,
                                f->npus > 1 ? absl::StrCat("+", f->npus - 1, " more") : "", " ",
                                f->level, " ", Rfc3339Millis(f->at)));
  }
  record.reason = absl::StrCat(in_window.size(), " faults within ", Hours(policy_.window),
                               " (policy: ", policy_.faults, "): ", absl::StrJoin(what, "; "));
  return OffenderVerdict{node, record.reason, policy_.action};
}

std::vector<OffenderVerdict> RepeatOffenders::SetPolicy(OffenderPolicy policy, absl::Time now) {
  policy_ = std::move(policy);
  std::vector<OffenderVerdict> verdicts;
  for (auto& [node, record] : nodes_) {
    record.offender = false;  // judged afresh under the new policy
    if (auto v = Judge(node, record, now)) verdicts.push_back(*std::move(v));
  }
  return verdicts;
}

std::optional<OffenderVerdict> RepeatOffenders::ObserveFault(const std::string& node,
                                                             const std::string& npu,
                                                             const std::string& code,
                                                             const std::string& level,
                                                             absl::Time at) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    if (nodes_.size() >= limits_.max_nodes) {
      // Make room: the node with the oldest last fault goes (never an offender).
      auto last_at = [](const NodeFaultRecord& n) {
        return n.recent.empty() ? absl::InfinitePast() : n.recent.back().at;
      };
      auto oldest = nodes_.end();
      for (auto n = nodes_.begin(); n != nodes_.end(); ++n) {
        if (n->second.offender) continue;
        if (oldest == nodes_.end() || last_at(n->second) < last_at(oldest->second)) oldest = n;
      }
      if (oldest == nodes_.end()) return std::nullopt;
      nodes_.erase(oldest);
    }
    it = nodes_.emplace(node, NodeFaultRecord{}).first;
  }
  NodeFaultRecord& record = it->second;
  if (!record.active.insert(absl::StrCat(npu, "|", code)).second) return std::nullopt;
  ++record.by_npu[npu.empty() ? "-1" : npu];
  for (NodeFaultOccurrence& f : record.recent) {
    if (f.code == code && absl::AbsDuration(at - f.at) <= kOneOccurrenceSpan) {
      ++f.npus;  // the same fault on another NPU of the node
      return std::nullopt;
    }
  }
  record.recent.push_back({at, npu, code, level, 1});
  while (record.recent.size() > limits_.recent_per_node) record.recent.pop_front();
  ++record.total;
  ++record.by_level[level];
  return Judge(node, record, at);
}

void RepeatOffenders::ObserveClear(const std::string& node, const std::string& npu,
                                   const std::string& code) {
  if (auto it = nodes_.find(node); it != nodes_.end()) {
    it->second.active.erase(absl::StrCat(npu, "|", code));
  }
}

void RepeatOffenders::Expire(absl::Time now) {
  for (auto& [node, record] : nodes_) {
    if (record.offender &&
        (!policy_.enabled || static_cast<int64_t>(InWindow(record, now).size()) < policy_.faults)) {
      record.offender = false;
      record.reason.clear();
    }
  }
}

nlohmann::ordered_json RepeatOffenders::ToJson(absl::Time now) const {
  const absl::Duration observed = now - since_;
  std::vector<const std::pair<const std::string, NodeFaultRecord>*> order;
  for (const auto& entry : nodes_) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->second.offender != b->second.offender) return a->second.offender;
    return a->second.total > b->second.total;
  });
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const auto* entry : order) {
    const NodeFaultRecord& r = entry->second;
    nlohmann::ordered_json npus = nlohmann::ordered_json::array();
    for (const auto& [npu, n] : r.by_npu) {
      npus.push_back({{"npu", npu}, {"faults", n}, {"mtbfSeconds", Mtbf(observed, n)}});
    }
    nlohmann::ordered_json recent = nlohmann::ordered_json::array();
    for (const NodeFaultOccurrence& f : r.recent) {
      recent.push_back({{"at", Rfc3339Millis(f.at)},
                        {"npu", f.npu},
                        {"npus", f.npus},
                        {"code", f.code},
                        {"level", f.level}});
    }
    items.push_back({{"node", entry->first},
                     {"faults", r.total},
                     {"byLevel", r.by_level},
                     {"mtbfSeconds", Mtbf(observed, r.total)},
                     {"offender", r.offender},
                     {"reason", r.reason},
                     {"verdictAt", r.offender ? nlohmann::ordered_json(Rfc3339Millis(r.verdict_at))
                                              : nlohmann::ordered_json(nullptr)},
                     {"npus", std::move(npus)},
                     {"recent", std::move(recent)}});
  }
  return {{"kind", "OffenderList"},
          {"policy", policy_.ToJson()},
          {"observingSince", Rfc3339Millis(since_)},
          {"items", std::move(items)}};
}

nlohmann::json RepeatOffenders::Save() const {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [node, r] : nodes_) {
    nlohmann::json recent = nlohmann::json::array();
    for (const NodeFaultOccurrence& f : r.recent) {
      recent.push_back({absl::ToUnixMillis(f.at), f.npu, f.code, f.level, f.npus});
    }
    nodes.push_back({{"node", node},
                     {"total", r.total},
                     {"byLevel", r.by_level},
                     {"byNpu", r.by_npu},
                     {"offender", r.offender},
                     {"reason", r.reason},
                     {"verdictAt", r.offender ? absl::ToUnixMillis(r.verdict_at) : 0},
                     {"active", r.active},
                     {"recent", std::move(recent)}});
  }
  return {{"version", 1}, {"since", absl::ToUnixMillis(since_)}, {"nodes", std::move(nodes)}};
}

absl::Status RepeatOffenders::Restore(const nlohmann::json& saved) {
  if (!saved.is_object() || !saved.contains("version") || saved["version"] != 1 ||
      !saved.contains("nodes") || !saved["nodes"].is_array()) {
    return absl::InvalidArgumentError("offender state: not a version 1 object with a nodes array");
  }
  std::map<std::string, NodeFaultRecord> restored;
  try {
    for (const nlohmann::json& n : saved["nodes"]) {
      NodeFaultRecord r;
      const std::string node = n.at("node").get<std::string>();
      r.total = n.value("total", int64_t{0});
      r.by_level = n.value("byLevel", std::map<std::string, int64_t>{});
      r.by_npu = n.value("byNpu", std::map<std::string, int64_t>{});
      r.offender = n.value("offender", false);
      r.reason = n.value("reason", "");
      const int64_t verdict_at = n.value("verdictAt", int64_t{0});
      r.verdict_at = FromSavedMillis(verdict_at);
      r.active = n.value("active", std::set<std::string>{});
      for (const nlohmann::json& f : n.value("recent", nlohmann::json::array())) {
        if (!f.is_array() || f.size() < 4) continue;
        r.recent.push_back({absl::FromUnixMillis(f[0].get<int64_t>()), f[1].get<std::string>(),
                            f[2].get<std::string>(), f[3].get<std::string>(),
                            f.size() > 4 ? std::max<int64_t>(1, f[4].get<int64_t>()) : 1});
      }
      restored[node] = std::move(r);
    }
    if (const int64_t since = saved.value("since", int64_t{0}); since > 0) {
      since_ = absl::FromUnixMillis(since);
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("offender state: ", e.what()));
  }
  nodes_ = std::move(restored);
  return absl::OkStatus();
}

}  // namespace clusterd::cluster
