#include "cluster/fault_job_centre.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_util.h"

namespace clusterd::cluster {
namespace {

constexpr std::string_view kCqeA = "8C1F8608";
constexpr std::string_view kCqeB = "4C1F8608";
constexpr int64_t kRelationCycleMs = 1000;

bool IsCqe(std::string_view code) { return code == kCqeA || code == kCqeB; }

// The code part of a switch FaultTimeAndLevelMap key `<code>_<chip>_<port>`.
std::string SwitchCodeOfKey(const std::string& key) {
  size_t last = key.rfind('_');
  if (last == std::string::npos || last == 0) return key;
  size_t before = key.rfind('_', last - 1);
  if (before == std::string::npos) return key.substr(0, last);
  return key.substr(0, before);
}

std::string StrategyOver(const std::string& a, std::string_view b) {
  if (a == kStrategySeparate || b == kStrategySeparate) return std::string(kStrategySeparate);
  if (a == kStrategySubHealth || b == kStrategySubHealth) return std::string(kStrategySubHealth);
  return a.empty() ? std::string(b) : a;
}

}  // namespace

// ---- configuration ----

RelationConfig ParseRelationConfig(std::string_view rules_json, std::string_view durations_json,
                                   std::vector<std::string>* problems) {
  RelationConfig config;
  auto note = [&](std::string text) {
    if (problems != nullptr) problems->push_back(std::move(text));
  };
  if (!rules_json.empty()) {
    auto parsed = ParseJson(rules_json, "relationFaultCustomization.json");
    if (!parsed.ok() || !parsed->is_array()) {
      note(parsed.ok() ? "relationFaultCustomization.json is not an array"
                       : std::string(parsed.status().message()));
    } else {
      for (const auto& item : *parsed) {
        if (!item.is_object()) continue;
        RelationRule rule;
        rule.trigger = StringOr(item, "TriggerFault", "");
        rule.strategy = StringOr(item, "FaultStrategy", "");
        if (auto r = item.find("RelationFaults"); r != item.end() && r->is_array()) {
          for (const auto& code : *r) {
            if (code.is_string()) rule.relations.push_back(code.get<std::string>());
          }
        }
        if (rule.trigger.empty() || rule.relations.empty()) {
          note("relation rule without TriggerFault or RelationFaults skipped");
          continue;
        }
        config.triggers.insert(rule.trigger);
        for (const auto& c : rule.relations) config.relations.insert(c);
        config.rules.push_back(std::move(rule));
      }
    }
  }
  if (!durations_json.empty()) {
    auto parsed = ParseJson(durations_json, "faultDuration.json");
    if (!parsed.ok() || !parsed->is_array()) {
      note(parsed.ok() ? "faultDuration.json is not an array"
                       : std::string(parsed.status().message()));
    } else {
      for (const auto& item : *parsed) {
        const std::string code = StringOr(item, "FaultCode", "");
        auto seconds = GetInt64(item, "TimeOutInterval");
        if (code.empty() || !seconds.ok() || *seconds < 0) {
          note("faultDuration entry without code or with a negative interval skipped");
          continue;
        }
        config.timeout_s.emplace(code, *seconds);
      }
    }
  }
  return config;
}

// ---- 1. RelationFault ----

RelationOutput RunRelationFault(const FaultJob& job, const RelationConfig& config,
                                const NodeViewFn& nodes, RelationState& state, int64_t now_ms) {
  RelationOutput out;
  if (job.servers.empty() || config.rules.empty()) return out;
  if (!state.first_sight_ms.has_value()) state.first_sight_ms = now_ms;

  bool super_pod = false;
  std::map<std::string, RelationFault> current;  // relation-set faults present now
  std::set<std::string> forced;                  // ids the Retry stage forces in
  std::set<std::string> triggers_now;
  std::vector<RelationFault> cqe_now;
  auto collect = [&](RelationFault f, bool is_forced) {
    if (config.triggers.count(f.code) != 0) {
      if (IsCqe(f.code)) cqe_now.push_back(f);
      triggers_now.insert(f.code);
    }
    if (config.relations.count(f.code) != 0) {
      if (is_forced) forced.insert(f.id);
      current.emplace(f.id, std::move(f));
    }
  };
  for (const FaultJobServer& server : job.servers) {
    const JobNodeView view = nodes(server.node);
    if (view.device != nullptr && view.device->super_pod_id >= 0) super_pod = true;
    if (view.switch_record != nullptr) {
      const SwitchRecord& sw = *view.switch_record;
      if (sw.info.node_status == model::kNodeStatusUnHealthy) continue;
      if (sw.info.fault_time_and_level_map.has_value()) {
        for (const auto& [key, value] : *sw.info.fault_time_and_level_map) {
          RelationFault f;
          f.code = SwitchCodeOfKey(key);
          if (config.triggers.count(f.code) == 0 && config.relations.count(f.code) == 0) continue;
          f.id = absl::StrCat(server.node, "-FF-", key);
          f.node = server.node;
          f.npu = "FF";
          f.is_switch = true;
          f.level = sw.info.fault_level;
          auto r = sw.received_ms.find(key);
          f.received_ms = r != sw.received_ms.end() ? r->second : now_ms;
          collect(std::move(f), false);
        }
      }
    }
    if (view.device == nullptr) continue;
    std::set<std::string> npus;
    for (const FaultJobDevice& d : server.devices) npus.insert(view.device->NpuName(d.device_id));
    auto take = [&](const NpuFault& nf, bool is_forced) {
      if (npus.count(nf.npu_name) == 0) return;
      if (config.triggers.count(nf.code) == 0 && config.relations.count(nf.code) == 0) return;
      RelationFault f;
      f.id = absl::StrCat(server.node, "-", nf.npu_name, "-", nf.code);
      f.node = server.node;
      f.npu = nf.npu_name;
      f.code = nf.code;
      f.level = nf.level;
      f.received_ms = nf.received_ms;
      collect(std::move(f), is_forced);
    };
    for (const NpuFault& nf : view.device->faults) take(nf, false);
    if (view.force_added != nullptr) {
      for (const NpuFault& nf : *view.force_added) take(nf, true);
    }
  }

  // Super-pod jobs defer CQE triggers instead of counting them now.
  if (super_pod) {
    for (const RelationFault& f : cqe_now) {
      if (state.deferred_seen.emplace(f.id, f.received_ms).second) {
        state.deferred_cqe.push_back(f.received_ms);
      }
      triggers_now.erase(f.code);
    }
  }

  // Tracking.
  for (auto it = state.tracked.begin(); it != state.tracked.end();) {
    if (current.count(it->first) == 0) {
      const int64_t timeout = config.timeout_s.count(it->second.code) != 0
                                  ? config.timeout_s.at(it->second.code) * 1000
                                  : 0;
      RelationFault gone = it->second;
      gone.strategy.clear();
      state.vanished.emplace_back(std::move(gone), it->second.received_ms + timeout);
      it = state.tracked.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = state.seen.begin(); it != state.seen.end();) {
    it = current.count(*it) == 0 ? state.seen.erase(it) : std::next(it);
  }
  state.vanished.erase(std::remove_if(state.vanished.begin(), state.vanished.end(),
                                      [&](const auto& v) { return v.second < now_ms; }),
                       state.vanished.end());
  for (auto& [id, f] : current) {
    if (auto t = state.tracked.find(id); t != state.tracked.end()) {
      t->second.level = f.level;
      t->second.strategy.clear();
      continue;
    }
    if (state.seen.count(id) != 0 && forced.count(id) == 0) continue;
    state.tracked.emplace(id, f);
  }

  // Match.
  std::set<std::string> tracked_codes;
  for (const auto& [id, f] : state.tracked) tracked_codes.insert(f.code);
  std::map<std::string, std::string> vanished_strategy;  // vanished id -> strategy
  std::set<std::string> vanished_codes;
  for (const auto& [f, expiry] : state.vanished) vanished_codes.insert(f.code);
  for (const RelationRule& rule : config.rules) {
    if (triggers_now.count(rule.trigger) == 0) continue;
    const bool effective =
        rule.strategy == kStrategySeparate || rule.strategy == kStrategySubHealth;
    const bool all_tracked =
        std::all_of(rule.relations.begin(), rule.relations.end(),
                    [&](const std::string& c) { return tracked_codes.count(c) != 0; });
    if (all_tracked && effective) {
      for (auto& [id, f] : state.tracked) {
        if (std::find(rule.relations.begin(), rule.relations.end(), f.code) !=
            rule.relations.end()) {
          f.strategy = StrategyOver(f.strategy, rule.strategy);
        }
      }
    }
    if (!super_pod && IsCqe(rule.trigger) && effective) {
      const bool all_vanished =
          std::all_of(rule.relations.begin(), rule.relations.end(),
                      [&](const std::string& c) { return vanished_codes.count(c) != 0; });
      if (all_vanished) {
        for (const auto& [f, expiry] : state.vanished) {
          if (std::find(rule.relations.begin(), rule.relations.end(), f.code) !=
              rule.relations.end()) {
            vanished_strategy[f.id] = StrategyOver(vanished_strategy[f.id], rule.strategy);
          }
        }
      }
    }
  }

  // Output of matches, then time-outs (which may add defaults).
  for (const auto& [id, f] : state.tracked) {
    if (!f.strategy.empty()) out.faults.push_back(f);
  }
  for (const auto& [f, expiry] : state.vanished) {
    if (auto s = vanished_strategy.find(f.id); s != vanished_strategy.end()) {
      RelationFault copy = f;
      copy.strategy = s->second;
      out.faults.push_back(std::move(copy));
    }
  }
  for (auto it = state.tracked.begin(); it != state.tracked.end();) {
    RelationFault& f = it->second;
    if (f.strategy == kStrategySeparate) {
      it = state.tracked.erase(it);
      continue;
    }
    if (!f.strategy.empty()) {
      ++it;
      continue;
    }
    const int64_t timeout =
        config.timeout_s.count(f.code) != 0 ? config.timeout_s.at(f.code) * 1000 : 0;
    if (now_ms - f.received_ms < timeout) {
      const int64_t due = f.received_ms + timeout;
      if (!out.next_due_ms.has_value() || due < *out.next_due_ms) out.next_due_ms = due;
      ++it;
      continue;
    }
    state.seen.insert(f.id);
    if (f.received_ms >= *state.first_sight_ms) {
      if (f.is_switch) {
        f.strategy = std::string(kStrategySubHealth);
      } else {
        auto hit = std::find_if(
            state.deferred_cqe.begin(), state.deferred_cqe.end(),
            [&](int64_t t) { return t >= f.received_ms && t <= f.received_ms + timeout; });
        if (hit != state.deferred_cqe.end()) {
          state.deferred_cqe.erase(hit);
          f.strategy = std::string(kStrategySeparate);
        }
      }
      if (!f.strategy.empty()) out.faults.push_back(f);
    }
    it = state.tracked.erase(it);
  }

  // Node strategies and pod labels.
  for (const RelationFault& f : out.faults) {
    std::string& s = out.node_strategy[f.node];
    s = StrategyOver(s, f.strategy);
  }
  std::set<std::string> live_pods;
  for (const FaultJobServer& server : job.servers) {
    if (!server.pod_uid.empty()) live_pods.insert(server.pod_uid);
    auto ns = out.node_strategy.find(server.node);
    if (ns == out.node_strategy.end() || server.pod_uid.empty()) continue;
    std::string& written = state.pod_labels[server.pod_uid];
    // Separate stays once written (the intended rule; see docs/compatibility-faults.md).
    if (written == kStrategySeparate || written == ns->second) continue;
    written = ns->second;
    out.patches.push_back(PodLabelPatch{server.pod_uid, ns->second});
  }
  for (auto it = state.pod_labels.begin(); it != state.pod_labels.end();) {
    it = live_pods.count(it->first) == 0 ? state.pod_labels.erase(it) : std::next(it);
  }
  if (!out.faults.empty()) {
    const int64_t due = now_ms + kRelationCycleMs;
    if (!out.next_due_ms.has_value() || due < *out.next_due_ms) out.next_due_ms = due;
  }
  for (const auto& [f, expiry] : state.vanished) {
    if (!out.next_due_ms.has_value() || expiry + 1 < *out.next_due_ms) out.next_due_ms = expiry + 1;
  }
  return out;
}

// ---- 2. JobFaultRank ----

std::string FaultRankEntry::FaultType() const {
  if (do_step_retry && code == model::kFaultCodeUce) return "0";
  if (do_step_retry && code == model::kFaultCodeHcclRetry) return "2";
  return "1";
}

JobFaultRankResult ComputeJobFaultRanks(const FaultJob& job, const NodeViewFn& nodes,
                                        const RelationOutput& relation, const RetryBook& retry,
                                        int64_t now_ms) {
  JobFaultRankResult result;
  JobFaultRanks& out = result.faults;
  out.job_id = job.job_id;
  out.multi_instance_job_id = job.multi_instance_job_id;
  out.app_type = job.app_type;
  bool unhealthy = false, subhealthy = false;
  auto due = [&](int64_t t) {
    if (!result.next_due_ms.has_value() || t < *result.next_due_ms) result.next_due_ms = t;
  };

  auto rank_of = [&](const FaultJobServer& s, const FaultJobDevice& d) {
    FaultRankEntry r;
    r.rank_id = d.rank_id;
    r.pod_rank = job.PodRankOf(d.rank_id);
    // The pod that holds the NPU, not whichever pod holds the rank now (after a hot switch the
    // backup pod does, and a fault of the old pod must not look like one of the backup's).
    r.pod_uid = s.pod_uid;
    if (r.pod_uid.empty() && r.pod_rank.has_value()) {
      if (auto p = job.pod_uid_by_rank.find(*r.pod_rank); p != job.pod_uid_by_rank.end()) {
        r.pod_uid = p->second;
      }
    }
    r.node = s.node;
    return r;
  };
  auto device_of = [](const FaultJobServer& s) {
    FaultDevice d;
    d.server_name = s.node;
    d.server_sn = s.server_sn;
    d.server_id = s.server_id;
    d.host_ip = s.host_ip;
    return d;
  };

  if (job.servers.empty()) {
    // No complete rank table: node-info faults and not-ready nodes of the pods' nodes.
    std::map<std::string, int> pods_per_node;
    for (const FaultJobPod& p : job.pods) {
      if (p.node.empty()) return result;  // a pod is still unscheduled: nothing
      ++pods_per_node[p.node];
    }
    std::set<std::string> done;
    for (const FaultJobPod& p : job.pods) {
      if (!done.insert(p.node).second) continue;
      const JobNodeView view = nodes(p.node);
      FaultDevice base;
      base.server_name = p.node;
      base.host_ip = p.host_ip;
      base.server_id = pods_per_node[p.node] == 1 ? p.host_ip : p.uid;
      if (!view.node_ready) {
        FaultDevice d = base;
        d.device_type = std::string(kDeviceTypeNode);
        d.device_id = "-1";
        d.level = std::string(model::kLevelSeparateNPU);
        out.devices.push_back(std::move(d));
      }
      if (view.node_record != nullptr) {
        for (const model::FaultDev& fd : view.node_record->info.fault_dev_list) {
          for (const std::string& code : fd.fault_code) {
            FaultDevice d = base;
            d.device_type = fd.device_type;
            d.device_id = std::to_string(fd.device_id);
            d.code = code;
            d.level = fd.fault_level;
            d.fault_time_ms = view.node_record->update_time_ms;
            out.devices.push_back(std::move(d));
          }
        }
      }
    }
    return result;
  }

  std::set<int64_t> in_place_pod_ranks;
  // RecoverInPlace verdict per pod rank.
  for (const FaultJobServer& s : job.servers) {
    const JobNodeView view = nodes(s.node);
    if (view.in_place_hidden == nullptr || view.device == nullptr) continue;
    for (const InPlaceHidden& h : *view.in_place_hidden) {
      if (h.job_id != job.job_id) continue;
      for (const FaultJobDevice& d : s.devices) {
        if (view.device->NpuName(d.device_id) == h.npu_name) {
          if (auto pr = job.PodRankOf(d.rank_id)) in_place_pod_ranks.insert(*pr);
        }
      }
    }
  }

  std::map<std::string, std::vector<const RelationFault*>> relation_by_node;
  for (const RelationFault& f : relation.faults) relation_by_node[f.node].push_back(&f);

  for (const FaultJobServer& s : job.servers) {
    const JobNodeView view = nodes(s.node);
    // Switch.
    if (view.switch_record != nullptr) {
      const SwitchRecord& sw = *view.switch_record;
      if (sw.info.node_status == model::kNodeStatusUnHealthy) unhealthy = true;
      if (sw.info.node_status == model::kNodeStatusSubHealthy) subhealthy = true;
      std::vector<std::string> codes;
      for (const model::SwitchFaultEvent& e : sw.events) {
        FaultDevice d = device_of(s);
        d.device_type = std::string(kDeviceTypeSwitch);
        d.device_id = "-1";
        d.code = e.assembled_fault_code;
        d.level = sw.info.fault_level;
        d.fault_time_ms = e.alarm_raised_time;
        d.switch_chip_id = std::to_string(e.switch_chip_id);
        d.switch_port_id = std::to_string(e.switch_port_id);
        out.devices.push_back(std::move(d));
        codes.push_back(e.assembled_fault_code);
      }
      const bool sw_unhealthy = sw.info.node_status == model::kNodeStatusUnHealthy;
      if (sw_unhealthy || sw.info.node_status == model::kNodeStatusSubHealthy) {
        for (const FaultJobDevice& d : s.devices) {
          FaultRankEntry r = rank_of(s, d);
          r.code = absl::StrJoin(codes, ",");
          r.level = std::string(sw_unhealthy ? model::kLevelSeparateNPU : model::kLevelSubHealthFault);
          out.ranks.push_back(std::move(r));
        }
      }
    }
    // NodeD.
    if (view.node_record != nullptr &&
        view.node_record->info.node_status == model::kNodeStatusUnHealthy) {
      std::vector<std::string> codes;
      for (const model::FaultDev& fd : view.node_record->info.fault_dev_list) {
        for (const std::string& c : fd.fault_code) {
          if (std::find(codes.begin(), codes.end(), c) == codes.end()) codes.push_back(c);
        }
      }
      for (const FaultJobDevice& d : s.devices) {
        FaultRankEntry r = rank_of(s, d);
        r.code = absl::StrJoin(codes, ",");
        r.level = std::string(model::kLevelSeparateNPU);
        out.ranks.push_back(std::move(r));
      }
    }
    // Kubernetes node missing or not ready.
    if (!view.node_ready) {
      for (const FaultJobDevice& d : s.devices) {
        FaultRankEntry r = rank_of(s, d);
        r.level = std::string(model::kLevelSeparateNPU);
        out.ranks.push_back(std::move(r));
      }
      FaultDevice d = device_of(s);
      d.device_type = std::string(kDeviceTypeNode);
      d.device_id = "-1";
      d.level = std::string(model::kLevelSeparateNPU);
      out.devices.push_back(std::move(d));
    }
    if (view.node_record != nullptr) {
      for (const model::FaultDev& fd : view.node_record->info.fault_dev_list) {
        for (const std::string& code : fd.fault_code) {
          FaultDevice d = device_of(s);
          d.device_type = fd.device_type;
          d.device_id = std::to_string(fd.device_id);
          d.code = code;
          d.level = fd.fault_level;
          d.fault_time_ms = view.node_record->update_time_ms;
          out.devices.push_back(std::move(d));
        }
      }
    }
    // NPU faults.
    if (view.device != nullptr) {
      const DeviceRecord& dev = *view.device;
      for (const FaultJobDevice& jd : s.devices) {
        const std::string npu = dev.NpuName(jd.device_id);
        const std::string device_id = std::to_string(jd.device_id);
        const bool listed_unhealthy =
            SortedContains(dev.unhealthy, npu) || SortedContains(dev.network_unhealthy, npu);
        std::optional<int64_t> pod_rank = job.PodRankOf(jd.rank_id);
        const bool in_place = pod_rank.has_value() && in_place_pod_ranks.count(*pod_rank) != 0;
        const RetryReport* report = nullptr;
        if (job.policy.retry) {
          if (auto it = retry.find({s.node, jd.device_id}); it != retry.end()) report = &it->second;
        }
        std::set<std::string> codes_seen;
        bool has_retry_code = false;
        auto add = [&](const std::string& code, const std::string& level, int64_t time) {
          FaultRankEntry r = rank_of(s, jd);
          r.code = code;
          r.level = level;
          r.fault_time_ms = time;
          r.device_id = device_id;
          r.do_restart_in_place = in_place;
          if (job.policy.retry &&
              (code == model::kFaultCodeUce || code == model::kFaultCodeHcclRetry) &&
              report != nullptr) {
            const bool recent = now_ms - report->report_ms <= kRetryReportWindowMs;
            const bool near = time > 0 && report->report_ms <= time + kRetryReportWindowMs;
            r.do_step_retry = recent || near;
            if (recent) due(report->report_ms + kRetryReportWindowMs + 1);
          }
          out.ranks.push_back(r);
          FaultDevice d = device_of(s);
          d.device_type = std::string(kDeviceTypeNpu);
          d.device_id = device_id;
          d.code = code;
          d.level = level;
          d.fault_time_ms = time;
          out.devices.push_back(std::move(d));
        };
        for (const NpuFault& f : dev.faults) {
          if (f.npu_name != npu) continue;
          if (f.level == model::kLevelFreeRestartNPU && !listed_unhealthy) continue;
          const std::string code = f.code == kPseudoCodeManuallySeparate ? "" : f.code;
          if (f.code == model::kFaultCodeUce || f.code == model::kFaultCodeHcclRetry)
            has_retry_code = true;
          codes_seen.insert(code);
          add(code, f.level, f.fault_time < 0 ? 0 : f.fault_time);
        }
        if (view.in_place_hidden != nullptr) {
          for (const InPlaceHidden& h : *view.in_place_hidden) {
            if (h.job_id != job.job_id || h.npu_name != npu || codes_seen.count(h.code) != 0)
              continue;
            if (job.policy.retry &&
                (h.code == model::kFaultCodeUce || h.code == model::kFaultCodeHcclRetry))
              continue;
            codes_seen.insert(h.code);
            add(h.code, h.level, 0);
          }
        }
        if (report != nullptr && !has_retry_code &&
            now_ms - report->report_ms < kRetryReportWindowMs) {
          const std::string code(report->type == 2 ? model::kFaultCodeHcclRetry
                                                   : model::kFaultCodeUce);
          FaultRankEntry r = rank_of(s, jd);
          r.code = code;
          r.level = std::string(model::kLevelRestartBusiness);
          r.device_id = device_id;
          r.do_step_retry = true;
          r.do_restart_in_place = in_place;
          out.ranks.push_back(r);
          FaultDevice d = device_of(s);
          d.device_type = std::string(kDeviceTypeNpu);
          d.device_id = device_id;
          d.code = code;
          d.level = std::string(model::kLevelRestartBusiness);
          out.devices.push_back(std::move(d));
          due(report->report_ms + kRetryReportWindowMs);
        }
      }
      // Faults the custom filter hid, for the Fault service.
      if (view.custom_hidden != nullptr) {
        for (const FaultJobDevice& jd : s.devices) {
          const std::string npu = dev.NpuName(jd.device_id);
          for (const NpuFault& f : *view.custom_hidden) {
            if (f.npu_name != npu) continue;
            FaultDevice d = device_of(s);
            d.device_type = std::string(kDeviceTypeNpu);
            d.device_id = std::to_string(jd.device_id);
            d.code = f.code;
            d.level = f.level;
            d.fault_time_ms = f.fault_time;
            out.filtered_devices.push_back(std::move(d));
          }
        }
      }
    }
    // Relation-fault ranks.
    if (auto rel = relation_by_node.find(s.node); rel != relation_by_node.end()) {
      bool switch_done = false;
      for (const RelationFault* f : rel->second) {
        // The relation rules' own spelling of separation ("SeparateFault", the switch
        // vocabulary), as the original reports it.
        const std::string level = f->strategy == kStrategySeparate
                                      ? "SeparateFault"
                                      : std::string(model::kLevelSubHealthFault);
        if (f->is_switch) {
          if (switch_done) continue;
          switch_done = true;
          for (const FaultJobDevice& jd : s.devices) {
            FaultRankEntry r = rank_of(s, jd);
            r.code = f->code;
            r.level = level;
            out.ranks.push_back(std::move(r));
          }
          FaultDevice d = device_of(s);
          d.device_type = std::string(kDeviceTypeSwitch);
          d.device_id = "-1";
          d.code = f->code;
          d.level = f->strategy;
          out.devices.push_back(std::move(d));
          continue;
        }
        if (view.device == nullptr) continue;
        for (const FaultJobDevice& jd : s.devices) {
          if (view.device->NpuName(jd.device_id) != f->npu) continue;
          FaultRankEntry r = rank_of(s, jd);
          r.code = f->code;
          r.level = level;
          r.device_id = std::to_string(jd.device_id);
          out.ranks.push_back(std::move(r));
          FaultDevice d = device_of(s);
          d.device_type = std::string(kDeviceTypeNpu);
          d.device_id = std::to_string(jd.device_id);
          d.code = f->code;
          d.level = f->strategy;
          out.devices.push_back(std::move(d));
        }
      }
    }
  }

  for (const auto& [node, strategy] : relation.node_strategy) {
    if (strategy == kStrategySeparate) unhealthy = true;
    if (strategy == kStrategySubHealth) subhealthy = true;
  }
  for (const FaultRankEntry& r : out.ranks) {
    if (r.level == model::kLevelSubHealthFault) {
      subhealthy = true;
    } else if (r.level != model::kLevelNotHandleFault && r.level != "PreSeparate" &&
               r.level != model::kLevelPreSeparateNPU) {
      unhealthy = true;
    }
  }
  out.health = std::string(unhealthy ? kUnHealthy : subhealthy ? kSubHealthy : kHealthy);
  return result;
}

// ---- 3. FaultCodeEvent ----

std::vector<FaultCodeEvent> FaultCodeEvents(const JobFaultRanks& faults, std::string* digest,
                                            int64_t now_ms) {
  std::vector<FaultCodeEvent> events;
  if (faults.ranks.empty()) return events;
  std::vector<std::string> parts;
  parts.reserve(faults.devices.size());
  for (const FaultDevice& d : faults.devices) {
    parts.push_back(absl::StrCat(d.server_id, "|", d.code, "|", d.level, "|", d.fault_time_ms, "|",
                                 d.device_id));
  }
  std::sort(parts.begin(), parts.end());
  std::string now_digest = absl::StrJoin(parts, ";");
  if (digest != nullptr && *digest == now_digest) return events;
  if (digest != nullptr) *digest = std::move(now_digest);
  std::set<std::tuple<std::string, std::string, std::string, int64_t>> seen;
  for (const FaultDevice& d : faults.devices) {
    if (d.code.empty()) continue;
    if (!seen.emplace(d.server_name, d.device_id, d.code, d.fault_time_ms).second) continue;
    events.push_back(FaultCodeEvent{d.code, d.fault_time_ms == 0 ? now_ms : d.fault_time_ms,
                                    d.server_name, d.device_id, d.level});
  }
  return events;
}

}  // namespace clusterd::cluster
