#include "diagnosis/net_fault.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/canonical_json.h"
#include "common/check_code.h"
#include "common/json_util.h"
#include "common/sv.h"
#include "diagnosis/net_topology.h"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

double Round3(double v) { return std::round(v * 1000) / 1000; }

struct Stats {
  double mean = 0, std = 0;
};
Stats MeanStd(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(v.size()));
  return s;
}

std::string PathKey(const std::string& task, int64_t st, const std::string& src, int64_t dt,
                    const std::string& dst) {
  return absl::StrCat(task, "\x1f", st, "\x1f", src, "\x1f", dt, "\x1f", dst);
}

double DelayMs(double us) { return std::round(us / 1000); }

}  // namespace

absl::StatusOr<std::map<std::string, PingmeshEntry>> ParsePingmeshConfig(
    const std::map<std::string, std::string>& data) {
  std::map<std::string, PingmeshEntry> out;
  for (const auto& [key, value] : data) {
    // A named capture: clang before 16 cannot capture the structured binding itself.
    auto fail = [&key = key](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("pingmesh-config key \"", key, "\": ", Sv(why)));
    };
    auto j = ParseJson(value, key);
    if (!j.ok() || !j->is_object()) return fail("not a JSON object");
    PingmeshEntry e;
    const std::string activate = StringOr(*j, "activate", "");
    if (activate != "on" && activate != "off") return fail("activate is not on or off");
    e.activate = activate == "on";
    auto interval = GetInt64(*j, "task_interval");
    if (!interval.ok() || *interval < 1 || *interval > 60) {
      return fail("task_interval is not an integer in [1, 60]");
    }
    e.task_interval = *interval;
    out[key] = e;
  }
  return out;
}

std::optional<PingmeshEntry> EffectiveEntry(const std::map<std::string, PingmeshEntry>& config,
                                            std::string_view super_pod_id) {
  if (auto it = config.find(std::string(super_pod_id)); it != config.end()) return it->second;
  if (auto it = config.find("global"); it != config.end()) return it->second;
  return std::nullopt;
}

CathelperConf CathelperFor(const std::optional<PingmeshEntry>& entry) {
  CathelperConf c;
  if (entry) {
    c.period = entry->task_interval * 10;
    c.net_fault = entry->activate;
  }
  return c;
}

std::string RenderCathelperConf(const CathelperConf& c) {
  return absl::StrCat("suppressedPeriod=", c.suppressed_period, "\nnetworkType=", c.network_type,
                      "\npingType=", c.ping_type, "\npingTimes=", c.ping_times,
                      "\npingInterval=", c.ping_interval, "\nperiod=", c.period,
                      "\nnetFault=", c.net_fault ? "on" : "off", "\n");
}

absl::StatusOr<CathelperConf> ParseCathelperConf(std::string_view text) {
  CathelperConf c;
  for (absl::string_view line : absl::StrSplit(Sv(text), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(line, absl::MaxSplits('=', 1));
    const absl::string_view k = absl::StripAsciiWhitespace(kv.first);
    const absl::string_view v = absl::StripAsciiWhitespace(kv.second);
    if (k == "netFault") {
      c.net_fault = v == "on";
      continue;
    }
    int64_t n = 0;
    int64_t* field = k == "suppressedPeriod" ? &c.suppressed_period
                     : k == "networkType"    ? &c.network_type
                     : k == "pingType"       ? &c.ping_type
                     : k == "pingTimes"      ? &c.ping_times
                     : k == "pingInterval"   ? &c.ping_interval
                     : k == "period"         ? &c.period
                                             : nullptr;
    if (field == nullptr) continue;
    if (!absl::SimpleAtoi(v, &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cathelper.conf: ", k, " is not an integer: \"", v, "\""));
    }
    *field = n;
  }
  if (c.period <= 0) return absl::InvalidArgumentError("cathelper.conf: period must be > 0");
  return c;
}

absl::StatusOr<SuperPodTopology> ParseSuperPodTopology(std::string_view text,
                                                       std::string_view what) {
  auto j = ParseJson(text, what, 64 << 20);
  if (!j.ok()) return j.status();
  if (!j->is_object()) return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": not an object"));
  SuperPodTopology t;
  t.version = StringOr(*j, "Version", "");
  t.super_pod_id = StringOr(*j, "SuperPodID", "");
  if (j->contains("NodeDeviceMap") && (*j)["NodeDeviceMap"].is_object()) {
    for (auto it = (*j)["NodeDeviceMap"].begin(); it != (*j)["NodeDeviceMap"].end(); ++it) {
      const Json& node = it.value();
      if (!node.is_object()) continue;
      NpuLocation base;
      base.node_name = StringOr(node, "NodeName", it.key());
      base.server_id = StringOr(node, "ServerID", "");
      base.rack_id = StringOr(node, "RackID", "");
      if (node.contains("NpuInfoMap")) {
        auto bad = [&](std::string_view why) {
          return absl::InvalidArgumentError(
              absl::StrCat(Sv(what), ": node ", it.key(), " NpuInfoMap: ", Sv(why)));
        };
        const Json& infos = node["NpuInfoMap"];
        if (!infos.is_object()) return bad("not an object");
        for (auto n = infos.begin(); n != infos.end(); ++n) {
          const Json& e = n.value();
          if (!e.is_object()) return bad(absl::StrCat(n.key(), " is not an object"));
          std::string f[4];
          const char* keys[4] = {"Addr", "NetPlaneId", "L1", "L2"};
          for (int k = 0; k < 4; ++k) {
            if (!e.contains(keys[k])) continue;
            if (!e[keys[k]].is_string()) {
              return bad(absl::StrCat(n.key(), ": ", keys[k], " is not a string"));
            }
            f[k] = e[keys[k]].get<std::string>();
          }
          if (f[0].empty() || f[1].empty()) {
            return bad(absl::StrCat(n.key(), ": Addr and NetPlaneId are required"));
          }
          if (!f[3].empty() && f[2].empty()) return bad(absl::StrCat(n.key(), ": L2 without L1"));
          if (base.rack_id.empty()) return bad("a network path on a node without RackID");
          if (!t.paths.emplace(f[0], NpuNetPath{f[1], base.rack_id, f[2], f[3]}).second) {
            return bad(absl::StrCat(n.key(), ": address ", f[0], " appears twice"));
          }
        }
      }
      if (!node.contains("DeviceMap") || !node["DeviceMap"].is_object()) continue;
      for (auto d = node["DeviceMap"].begin(); d != node["DeviceMap"].end(); ++d) {
        if (!d.value().is_string()) continue;
        NpuLocation loc = base;
        loc.phy_id = d.key();
        t.npu_by_sdid[d.value().get<std::string>()] = loc;
      }
    }
  }
  return t;
}

std::string SdidToAddress(uint32_t sdid) {
  return absl::StrCat("192.", (sdid >> 22) & 0x3FF, ".", 2 + ((sdid >> 16) & 0x3), ".",
                      199 - static_cast<int64_t>(sdid & 0xFFFF));
}

uint32_t SdidServer(uint32_t sdid) { return (sdid >> 22) & 0x3FF; }

absl::StatusOr<std::vector<PingRow>> ParsePingResultCsv(std::string_view text, ParseStats* stats) {
  ParseStats local;
  ParseStats& s = stats ? *stats : local;
  std::vector<absl::string_view> lines = absl::StrSplit(Sv(text), '\n');
  if (!lines.empty()) {
    if (!lines.back().empty()) ++s.malformed_rows;  // unterminated: still being written
    lines.pop_back();
  }
  std::vector<PingRow> out;
  if (lines.empty()) return out;
  if (!absl::StartsWithIgnoreCase(absl::StripAsciiWhitespace(lines[0]), "pingTaskId")) {
    return absl::InvalidArgumentError(
        absl::StrCat("ping result: header does not start with pingTaskId: \"", lines[0], "\""));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[i]);
    if (line.empty()) continue;
    ++s.rows;
    std::vector<absl::string_view> f = absl::StrSplit(line, ',');
    PingRow r;
    bool ok = f.size() == 12;
    if (ok) {
      r.task_id = std::string(f[0]);
      r.src_addr = std::string(f[2]);
      r.dst_addr = std::string(f[4]);
      ok = absl::SimpleAtoi(f[1], &r.src_type) && absl::SimpleAtoi(f[3], &r.dst_type) &&
           absl::SimpleAtod(f[5], &r.min_delay) && absl::SimpleAtod(f[6], &r.max_delay) &&
           absl::SimpleAtod(f[7], &r.avg_delay) && absl::SimpleAtod(f[8], &r.min_loss) &&
           absl::SimpleAtod(f[9], &r.max_loss) && absl::SimpleAtod(f[10], &r.avg_loss) &&
           absl::SimpleAtoi(f[11], &r.timestamp) && std::isfinite(r.avg_delay) &&
           std::isfinite(r.avg_loss);
    }
    if (!ok) {
      ++s.malformed_rows;
      continue;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void PingWindow::Add(const std::vector<PingRow>& rows) {
  for (const PingRow& r : rows) {
    const std::string id = absl::StrCat(
        PathKey(r.task_id, r.src_type, r.src_addr, r.dst_type, r.dst_addr), "\x1f", r.timestamp);
    if (!seen_.insert(id).second) continue;
    if (started_) {
      if (r.timestamp > t_max_) queue_.push_back(r);  // later rows wait for their round
      continue;
    }
    window_.push_back(r);
    if (!any_) {
      t_min_ = t_max_ = r.timestamp;
      any_ = true;
    }
    t_min_ = std::min(t_min_, r.timestamp);
    t_max_ = std::max(t_max_, r.timestamp);
  }
}

bool PingWindow::Advance() {
  if (!started_) {
    if (!any_ || t_max_ - t_min_ < kPeriods * period_ms_) return false;
    started_ = true;
  } else {
    const int64_t next = t_max_ + period_ms_;
    std::deque<PingRow> later;
    for (PingRow& r : queue_) {
      if (r.timestamp > t_max_ && r.timestamp <= next) {
        window_.push_back(std::move(r));
      } else if (r.timestamp > next) {
        later.push_back(std::move(r));
      }
    }
    queue_ = std::move(later);
    t_max_ = next;
  }
  const int64_t oldest = t_max_ - kPeriods * period_ms_;
  std::erase_if(window_, [&](const PingRow& r) { return r.timestamp <= oldest; });
  // Forget the identities of rows that left the window.
  std::erase_if(seen_, [&](const std::string& id) {
    const size_t pos = id.rfind('\x1f');
    int64_t ts = 0;
    return absl::SimpleAtoi(absl::string_view(id).substr(pos + 1), &ts) && ts <= oldest;
  });
  return true;
}

std::vector<PingRow> PingWindow::Current() const {
  std::vector<PingRow> out;
  for (const PingRow& r : window_) {
    if (r.timestamp > t_max_ - 2 * period_ms_ && r.timestamp <= t_max_ - period_ms_)
      out.push_back(r);
  }
  return out;
}

std::vector<PingRow> PingWindow::Baseline() const {
  std::vector<PingRow> out;
  for (const PingRow& r : window_) {
    if (r.timestamp > t_max_ - kPeriods * period_ms_ && r.timestamp <= t_max_ - 2 * period_ms_) {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<FaultyPath> FindFaultyPaths(const std::vector<PingRow>& current,
                                        const std::vector<PingRow>& baseline,
                                        std::vector<FaultyPath>* evaluated) {
  struct Values {
    std::vector<double> loss, delay;
  };
  std::map<std::string, Values> base;
  for (const PingRow& r : baseline) {
    Values& v = base[PathKey(r.task_id, r.src_type, r.src_addr, r.dst_type, r.dst_addr)];
    v.loss.push_back(r.avg_loss * 100);
    v.delay.push_back(DelayMs(r.avg_delay));
  }
  std::map<std::string, FaultyPath> paths;
  std::map<std::string, Values> cur;
  for (const PingRow& r : current) {
    const std::string key = PathKey(r.task_id, r.src_type, r.src_addr, r.dst_type, r.dst_addr);
    if (!base.count(key)) continue;  // no baseline: skipped
    Values& v = cur[key];
    const double loss = r.avg_loss * 100, delay = DelayMs(r.avg_delay);
    auto [it, fresh] = paths.try_emplace(key);
    FaultyPath& p = it->second;
    if (fresh) {
      p.task_id = r.task_id;
      p.src_type = r.src_type;
      p.src_addr = r.src_addr;
      p.dst_type = r.dst_type;
      p.dst_addr = r.dst_addr;
      p.min_loss = p.max_loss = loss;
      p.min_delay = p.max_delay = delay;
    }
    p.min_loss = std::min(p.min_loss, loss);
    p.max_loss = std::max(p.max_loss, loss);
    p.min_delay = std::min(p.min_delay, delay);
    p.max_delay = std::max(p.max_delay, delay);
    p.newest = std::max(p.newest, r.timestamp);
    v.loss.push_back(loss);
    v.delay.push_back(delay);
  }
  std::vector<FaultyPath> out;
  for (auto& [key, p] : paths) {
    const Stats bl = MeanStd(base[key].loss), bd = MeanStd(base[key].delay);
    p.loss_indicator = MeanStd(cur[key].loss).mean;
    p.delay_indicator = MeanStd(cur[key].delay).mean;
    p.loss = p.loss_indicator >= bl.mean + 3 * std::max(bl.std, 1.0);
    p.delay = p.delay_indicator >= bd.mean + 3 * std::max(bd.std, 1.0);
    if (evaluated) evaluated->push_back(p);
    if (p.loss || p.delay) out.push_back(p);
  }
  return out;
}

Json NetAlarm::ToJson() const {
  return Json{{"taskId", task_id},       {"timestamp", timestamp},  {"minLossRate", min_loss},
              {"maxLossRate", max_loss}, {"avgLossRate", avg_loss}, {"minDelay", min_delay},
              {"maxDelay", max_delay},   {"avgDelay", avg_delay},   {"srcId", src_id},
              {"srcType", src_type},     {"dstId", dst_id},         {"dstType", dst_type},
              {"level", level},          {"faultType", fault_type}};
}

NetAlarm AlarmOver(const std::vector<const FaultyPath*>& contributing, bool loss) {
  NetAlarm a;
  a.task_id = contributing.front()->task_id;
  double sum_loss = 0, sum_delay = 0;
  a.min_loss = a.min_delay = INFINITY;
  a.max_loss = a.max_delay = -INFINITY;
  for (const FaultyPath* p : contributing) {
    a.timestamp = std::max(a.timestamp, p->newest);
    a.min_loss = std::min(a.min_loss, p->min_loss);
    a.max_loss = std::max(a.max_loss, p->max_loss);
    a.min_delay = std::min(a.min_delay, p->min_delay);
    a.max_delay = std::max(a.max_delay, p->max_delay);
    sum_loss += p->loss_indicator;
    sum_delay += p->delay_indicator;
  }
  const double n = static_cast<double>(contributing.size());
  a.avg_loss = Round3(sum_loss / n);
  a.avg_delay = Round3(sum_delay / n);
  a.min_loss = Round3(a.min_loss);
  a.max_loss = Round3(a.max_loss);
  a.min_delay = Round3(a.min_delay);
  a.max_delay = Round3(a.max_delay);
  a.fault_type = !loss ? 0 : (a.avg_loss >= 80 ? 2 : 1);
  return a;
}

void NpuDirectRootCause(std::vector<const FaultyPath*> paths, bool loss,
                        std::vector<NetAlarm>& out) {
  while (!paths.empty()) {
    std::map<std::string, int> count;
    for (const FaultyPath* p : paths) {
      ++count[p->src_addr];
      if (p->dst_addr != p->src_addr) ++count[p->dst_addr];
    }
    int best = 0;
    for (const auto& [addr, n] : count) best = std::max(best, n);
    std::vector<std::string> winners;
    for (const auto& [addr, n] : count) {
      if (n == best) winners.push_back(addr);  // ascending address
    }
    std::string src = winners.front(), dst = winners.front();
    int64_t level = 1;
    for (size_t i = 1; i < winners.size(); ++i) {
      const bool together = std::any_of(paths.begin(), paths.end(), [&](const FaultyPath* p) {
        return (p->src_addr == src && p->dst_addr == winners[i]) ||
               (p->dst_addr == src && p->src_addr == winners[i]);
      });
      if (together) {
        dst = winners[i];
        level = 0;
        break;
      }
    }
    std::vector<const FaultyPath*> contributing, rest;
    for (const FaultyPath* p : paths) {
      const bool hit =
          p->src_addr == src || p->dst_addr == src || p->src_addr == dst || p->dst_addr == dst;
      (hit ? contributing : rest).push_back(p);
    }
    NetAlarm a = AlarmOver(contributing, loss);
    a.src_id = src;
    a.dst_id = dst;
    a.src_type = a.dst_type = kObjectNpu;
    a.level = level;
    out.push_back(std::move(a));
    paths = std::move(rest);
  }
}

std::vector<NetAlarm> RootCause(const std::vector<FaultyPath>& faulty) {
  std::vector<const FaultyPath*> loss, delay;
  for (const FaultyPath& p : faulty) {
    if (p.loss) loss.push_back(&p);
    if (p.delay) delay.push_back(&p);
  }
  std::vector<NetAlarm> out;
  NpuDirectRootCause(loss, true, out);
  NpuDirectRootCause(delay, false, out);
  return out;
}

std::vector<NetAlarm> AlarmSuppression::Filter(const std::vector<NetAlarm>& alarms, absl::Time now,
                                               int64_t suppressed_period_s) {
  const absl::Duration keep = absl::Seconds(suppressed_period_s);
  std::erase_if(seen_, [&](const auto& e) { return now - e.second > keep; });
  std::vector<NetAlarm> out;
  for (const NetAlarm& a : alarms) {
    const std::string key =
        absl::StrCat(a.src_id, "\x1f", a.dst_id, "\x1f", a.fault_type, "\x1f", a.level);
    auto [it, fresh] = seen_.try_emplace(key, now);
    it->second = now;  // refreshed either way
    if (fresh) out.push_back(a);
  }
  return out;
}

std::string NetworkFaultLogEntry(int64_t n, absl::Time when, const std::vector<NetAlarm>& alarms) {
  const absl::CivilSecond t = absl::ToCivilSecond(when, absl::UTCTimeZone());
  Json arr = Json::array();
  for (const NetAlarm& a : alarms) arr.push_back(a.ToJson());
  return absl::StrCat("Detection ", n, " result(", t.year(), "-", t.month(), "-", t.day(), " ",
                      t.hour(), ":", t.minute(), ":", t.second(), "):\n", arr.dump(2), "\n");
}

PublicFault AlarmToPublicFault(const NetAlarm& a) {
  PublicFault f;
  auto sdid = [](const std::string& id) -> std::optional<uint32_t> {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(id, &v)) return std::nullopt;
    return v;
  };
  if (a.src_type != kObjectNpu || a.dst_type != kObjectNpu) {
    f.fault_code = std::string(kNetFaultNonNpuCode);
  } else {
    const auto s = sdid(a.src_id), d = sdid(a.dst_id);
    f.fault_code = s && d && SdidServer(*s) == SdidServer(*d)
                       ? std::string(kNetFaultSameServerCode)
                       : std::string(kNetFaultCrossServerCode);
  }
  f.fault_id = Sha256Hex(absl::StrCat(a.src_type, "-", a.src_id, "->", a.dst_type, "-", a.dst_id));
  f.fault_type = std::string(kFaultTypeNetwork);
  f.assertion = std::string(kAssertionOnce);
  f.fault_time = a.timestamp;
  f.fault_location = {{"SrcType", absl::StrCat(a.src_type)},
                      {"SrcID", a.src_id},
                      {"DstType", absl::StrCat(a.dst_type)},
                      {"DstID", a.dst_id}};
  int64_t device = 0;
  const size_t dash = a.src_id.rfind('-');
  if (dash != std::string::npos) {
    if (auto v = sdid(a.src_id.substr(dash + 1))) device = *v & 0xFFFF;
  }
  f.influence.push_back({absl::AsciiStrToLower(a.src_id), "", {device}});
  f.description = CanonicalJson(a.ToJson());
  return f;
}

PublicFaultReport NetFaultReport(const std::vector<NetAlarm>& alarms, absl::Time now,
                                 std::string id) {
  PublicFaultReport r;
  r.id = std::move(id);
  r.timestamp = absl::ToUnixMillis(now);
  for (const NetAlarm& a : alarms) r.faults.push_back(AlarmToPublicFault(a));
  return r;
}

std::vector<NetAlarm> SuperPodNetDetector::Round(const std::vector<PingRow>& rows, absl::Time now,
                                                 AlarmSuppression& suppression) {
  window_.Add(rows);
  if (!window_.Advance()) return {};
  ++rounds_;
  std::vector<FaultyPath> evaluated;
  std::vector<FaultyPath> faulty =
      FindFaultyPaths(window_.Current(), window_.Baseline(), &evaluated);
  std::vector<NetAlarm> alarms =
      topology_.empty() ? RootCause(faulty) : TopologyRootCause(faulty, evaluated, topology_);
  return suppression.Filter(alarms, now, conf_.suppressed_period);
}

}  // namespace clusterd::diagnosis
