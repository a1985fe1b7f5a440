#include "sim/trace_replay.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json_util.h"
#include "common/status_util.h"

namespace clusterd::sim {
namespace {

// The trace is a few hundred kB; a file far larger is not a fault trace.
constexpr size_t kMaxTraceBytes = 64u << 20;

// GPU-cluster fault classes onto the NPU fault codes that clusterd handles the same way
// (faultCode.json, NodeDConfiguration.json):
//   a double-bit ECC error is an uncorrectable memory error (UCE, 80E01801: the job retries);
//   a lost or failing GPU is a chip to isolate (SeparateNPU, 80E3A201);
//   a degraded GPU (link width, P2P bandwidth, temperature, single-bit ECC) is sub-health
//   (81A3880C);
//   a parameter-plane link down or a lost NIC is a RoCE link-down network fault (81078603), a
//   slow NIC link the NPU's sub-health code for a degraded port (81078605);
//   board, CPU, power and fan failures are node faults from NodeD: failed board or CPU
//   separate the node (2C000031), power and fan faults pre-separate it (0000001D), lost
//   redundancy and a low battery are not handled (0100000D).
struct Rule {
  absl::string_view cls;   // fault_type.Class ("" = any)
  absl::string_view desc;  // substring of fault_type.Desc ("" = any)
  absl::string_view kind, code, label;
};
constexpr Rule kRules[] = {
    {"GPU", "DBE", "chip", "80E01801", "trace: GPU double-bit ECC"},
    {"GPU", "SBE", "chip", "81A3880C", "trace: GPU single-bit ECC"},
    {"GPU", "PCI link width", "chip", "81A3880C", "trace: GPU PCIe width low"},
    {"GPU", "P2P Bandwidth", "chip", "81A3880C", "trace: GPU P2P bandwidth"},
    {"GPU", "Temperature", "chip", "81A3880C", "trace: GPU temperature"},
    {"GPU", "", "chip", "80E3A201", "trace: GPU failure"},
    {"Parameter Plane Cable", "", "network", "81078603", "trace: link down"},
    {"NIC", "Speed low", "chip", "81078605", "trace: NIC speed low"},
    {"NIC", "", "network", "81078603", "trace: NIC failure"},
    {"", "Redundancy Lost", "node", "0100000D", "trace: redundancy lost"},
    {"Motherboard Battery", "", "node", "0100000D", "trace: board battery"},
    {"Motherboard", "", "node", "2C000031", "trace: board failed"},
    {"CPU", "", "node", "2C000031", "trace: CPU failure"},
    {"Power Supply", "", "node", "0000001D", "trace: power supply"},
    {"Fan", "", "node", "0000001D", "trace: fan"},
    {"RAID Card", "", "node", "0000001D", "trace: RAID card"},
    {"Memory", "", "node", "0000001D", "trace: host memory"},
    {"Training Task Troubleshooting", "Offline", "node", "2C000031", "trace: machine offline"},
};

// FNV-1a: a hash that is the same on every platform, so a replay picks the same NPUs anywhere.
uint64_t StableHash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

std::string TypeKey(const TraceEpisode& e) {
  return absl::StrCat(e.node_id, "\x1f", e.level, "\x1f", e.cls, "\x1f", e.desc);
}

}  // namespace

absl::StatusOr<std::vector<TraceEpisode>> ParseTrace(std::string_view text,
                                                     TraceParseStats* stats) {
  CLUSTERD_ASSIGN_OR_RETURN(nlohmann::ordered_json doc,
                            ParseJson(text, "fault trace", kMaxTraceBytes));
  if (!doc.is_array()) return absl::InvalidArgumentError("a fault trace is a JSON array");
  TraceParseStats local;
  TraceParseStats& st = stats != nullptr ? *stats : local;
  std::vector<TraceEpisode> episodes;
  // Open episodes per (node, fault type), oldest first: an end closes the oldest.
  std::map<std::string, std::deque<size_t>> open;
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& ev = doc[i];
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("trace event ", i, ": ", why));
    };
    if (!ev.is_object()) return bad("not an object");
    const auto node = ev.find("node_id");
    const auto time = ev.find("event_time");
    const auto type = ev.find("event_type");
    const auto fault = ev.find("fault_type");
    if (node == ev.end() || !node->is_string() || node->get<std::string>().empty()) {
      return bad("node_id must be a non-empty string");
    }
    if (time == ev.end() || !time->is_number() || time->get<double>() < 0) {
      return bad("event_time must be a number of days >= 0");
    }
    if (type == ev.end() || !type->is_string()) return bad("event_type must be a string");
    if (fault == ev.end() || !fault->is_object()) return bad("fault_type must be an object");
    TraceEpisode e;
    e.node_id = node->get<std::string>();
    e.level = StringOr(*fault, "Level", "");
    e.cls = StringOr(*fault, "Class", "");
    e.desc = StringOr(*fault, "Desc", "");
    const double day = time->get<double>();
    ++st.events;
    const std::string kind = type->get<std::string>();
    if (kind == "fault_start") {
      e.start_day = day;
      open[TypeKey(e)].push_back(episodes.size());
      episodes.push_back(std::move(e));
    } else if (kind == "fault_end") {
      auto it = open.find(TypeKey(e));
      if (it == open.end() || it->second.empty()) {
        ++st.unmatched_ends;
        continue;
      }
      TraceEpisode& started = episodes[it->second.front()];
      it->second.pop_front();
      started.end_day = std::max(day, started.start_day);
    } else {
      return bad(absl::StrCat("event_type \"", kind, "\" is neither fault_start nor fault_end"));
    }
  }
  std::stable_sort(
      episodes.begin(), episodes.end(),
      [](const TraceEpisode& a, const TraceEpisode& b) { return a.start_day < b.start_day; });
  return episodes;
}

std::optional<TraceFaultMapping> MapTraceFault(const TraceEpisode& episode) {
  for (const Rule& r : kRules) {
    if (!r.cls.empty() && episode.cls != r.cls) continue;
    if (!r.desc.empty() &&
        !absl::StrContains(absl::AsciiStrToLower(episode.desc), absl::AsciiStrToLower(r.desc))) {
      continue;
    }
    if (r.cls.empty() && episode.level != "Hardware Failure") continue;
    return TraceFaultMapping{std::string(r.kind), std::string(r.code), std::string(r.label)};
  }
  return std::nullopt;
}

ReplayPlan PlanReplay(const std::vector<TraceEpisode>& episodes, const ReplaySpec& spec,
                      const ClusterSpec& cluster) {
  ReplayPlan plan;
  plan.episodes = static_cast<int>(episodes.size());
  std::map<std::string, int> node_of;  // trace node -> simulated node index (1-based)
  bool first = true;
  for (const TraceEpisode& e : episodes) {
    if (plan.played >= spec.max_events) break;
    if (e.start_day < spec.from_day) {
      ++plan.skipped["before from_day"];
      continue;
    }
    std::optional<TraceFaultMapping> m = MapTraceFault(e);
    if (!m.has_value()) {
      ++plan.skipped[absl::StrCat(e.level, " / ", e.cls)];
      continue;
    }
    if (first) {
      plan.first_day = e.start_day;
      first = false;
    }
    plan.last_day = e.start_day;
    auto [it, added] = node_of.emplace(e.node_id, 0);
    if (added) it->second = static_cast<int>(node_of.size() - 1) % cluster.nodes + 1;
    FaultSpec f;
    f.line = spec.line;
    f.at_s = spec.start_s + (e.start_day - plan.first_day) / spec.days_per_second;
    f.kind = m->kind;
    f.code = m->code;
    f.node = SimNodeName(it->second);
    if (f.kind != "node") {
      f.npu = static_cast<int>(StableHash(absl::StrCat(e.node_id, "/", e.start_day)) %
                               static_cast<uint64_t>(cluster.npus_per_node));
    }
    if (e.end_day.has_value()) {
      f.clear_after_s = std::max(1.0, (*e.end_day - e.start_day) / spec.days_per_second);
    }
    f.label = m->label;
    plan.faults.push_back(std::move(f));
    ++plan.played;
  }
  return plan;
}

absl::StatusOr<ReplayPlan> ExpandReplay(Scenario* scenario, std::string_view data_dir) {
  if (!scenario->replay.has_value()) return ReplayPlan{};
  const ReplaySpec& spec = *scenario->replay;
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(scenario->file, ":", spec.line, ": ", why));
  };
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  const fs::path trace(spec.trace);
  if (trace.is_absolute()) {
    candidates.push_back(trace);
  } else {
    if (!scenario->file.empty() && scenario->file.front() != '<') {
      candidates.push_back(fs::path(scenario->file).parent_path() / trace);
    }
    candidates.push_back(fs::path(std::string(data_dir)) / trace);
  }
  fs::path used;
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      used = p;
      break;
    }
  }
  if (used.empty()) return error(absl::StrCat("cannot open the trace \"", spec.trace, "\""));
  std::ifstream in(used);
  if (!in) return error(absl::StrCat("cannot read the trace ", used.string()));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<TraceEpisode>> episodes = ParseTrace(text.str());
  if (!episodes.ok()) {
    return error(absl::StrCat(used.string(), ": ", episodes.status().message()));
  }
  ReplayPlan plan = PlanReplay(*episodes, spec, scenario->cluster);
  for (const FaultSpec& f : plan.faults) scenario->faults.push_back(f);
  return plan;
}

}  // namespace clusterd::sim
