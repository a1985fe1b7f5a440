#include "diagnosis/slow_node_algorithm.h"

#include <algorithm>
#include <set>

#include "diagnosis/spatial_cluster.h"

namespace clusterd::diagnosis {
namespace {

using Json = nlohmann::ordered_json;

Json RankLists(const std::vector<std::vector<int64_t>>& v) {
  Json out = Json::array();
  for (const auto& g : v) out.push_back(g);
  return out;
}

Json Ints(const std::vector<int64_t>& v) {
  Json out = Json::array();
  for (int64_t x : v) out.push_back(x);
  return out;
}

Json Strings(const std::vector<std::string>& v) {
  Json out = Json::array();
  for (const auto& x : v) out.push_back(x);
  return out;
}

// The last `k` values of each series at the steps all of them have (newest last). Series are
// in file order, which is ascending by step; a series out of order falls back to a map.
std::vector<std::vector<double>> AlignedTail(const std::vector<const Series*>& series, int64_t k) {
  auto sorted = [](const Series& s) {
    return std::is_sorted(s.begin(), s.end(),
                          [](const Sample& a, const Sample& b) { return a.step < b.step; });
  };
  std::vector<std::vector<double>> out(series.size());
  if (series.empty()) return out;
  if (!std::all_of(series.begin(), series.end(), [&](const Series* s) { return sorted(*s); })) {
    std::vector<Series> copies;
    for (const Series* s : series) {
      std::map<int64_t, double> by_step;
      for (const Sample& v : *s) by_step[v.step] = v.value;  // the newest row of a step wins
      Series c;
      for (const auto& [step, value] : by_step) c.push_back({step, value});
      copies.push_back(std::move(c));
    }
    std::vector<const Series*> ptrs;
    for (const Series& c : copies) ptrs.push_back(&c);
    return AlignedTail(ptrs, k);
  }
  // The value of the last row of `step` in sorted `s`, if any.
  auto find = [](const Series& s, int64_t step) -> const Sample* {
    auto it = std::upper_bound(s.begin(), s.end(), step,
                               [](int64_t v, const Sample& x) { return v < x.step; });
    if (it == s.begin() || std::prev(it)->step != step) return nullptr;
    return &*std::prev(it);
  };
  std::vector<int64_t> steps;  // newest first
  const Series& first = *series.front();
  for (auto it = first.rbegin(); it != first.rend() && static_cast<int64_t>(steps.size()) < k;
       ++it) {
    if (!steps.empty() && steps.back() == it->step) continue;
    const bool everywhere = std::all_of(series.begin() + 1, series.end(), [&](const Series* s) {
      return find(*s, it->step) != nullptr;
    });
    if (everywhere) steps.push_back(it->step);
  }
  std::reverse(steps.begin(), steps.end());
  for (size_t i = 0; i < series.size(); ++i) {
    for (int64_t step : steps) out[i].push_back(find(*series[i], step)->value);
  }
  return out;
}

}  // namespace

std::string_view ToString(NodeRoundOutcome outcome) {
  switch (outcome) {
    case NodeRoundOutcome::kRan:
      return "ran";
    case NodeRoundOutcome::kNoRanks:
      return "no ranks with parallel_group.json";
    case NodeRoundOutcome::kUnsupported:
      return "cp or exp parallel group: detection not run";
    case NodeRoundOutcome::kNoNewSteps:
      return "no new steps";
  }
  return "?";
}

Json NodeResult::ToJson(const std::string& job_id) const {
  Json r = Json::object();
  r["isSlow"] = is_slow ? 1 : 0;
  r["degradationLevel"] = DegradationLevel(is_slow ? degradation : 0);
  r["jobId"] = job_id;
  r["nodeRank"] = node_ip;
  r["slowCalculateRanks"] = Ints(slow_calculate_ranks);
  r["slowCommunicationDomains"] = RankLists(slow_communication_domains);
  r["slowSendRanks"] = Ints(slow_send_ranks);
  r["slowHostNodes"] = Strings(slow_host_nodes);
  r["slowIORanks"] = Ints(slow_io_ranks);
  Json inner = Json::object();
  inner[node_ip] = r;
  Json out = Json::object();
  out["slownode_" + job_id] = inner;
  return out;
}

Json ClusterResult::ToJson(const std::string& job_id, const std::string& reporter_ip) const {
  Json r = Json::object();
  r["isSlow"] = is_slow ? 1 : 0;
  r["degradationLevel"] = DegradationLevel(is_slow ? degradation : 0);
  r["jobId"] = job_id;
  r["slowCalculateRanks"] = Ints(slow_calculate_ranks);
  r["slowCommunicationDomains"] = RankLists(slow_communication_domains);
  r["slowHostNodes"] = Strings(slow_host_nodes);
  r["slowIORanks"] = Ints(slow_io_ranks);
  r["slowCommunicationRanks"] = Ints(slow_communication_ranks);
  Json inner = Json::object();
  inner[reporter_ip] = r;
  Json out = Json::object();
  out["slownode_" + job_id] = inner;
  return out;
}

NodeRound RunNodeRound(const RankSeriesState& state, const NodeInput& input,
                       const DetectorParams& params, double cluster_mean_distance) {
  NodeRound round;
  round.next = state;
  round.result.node_ip = input.node_ip;
  if (input.ranks.empty()) {
    round.outcome = NodeRoundOutcome::kNoRanks;
    return round;
  }
  if (input.groups.HasCpOrExp()) {
    round.outcome = NodeRoundOutcome::kUnsupported;
    return round;
  }
  // Perception gate: the lowest local rank must have a step newer than its last detected one.
  const RankProfile& lowest = input.ranks.front();
  {
    auto rit = state.find(lowest.rank);
    int64_t last = 0;
    if (rit != state.end()) {
      auto sit = rit->second.find(SeriesKind::kStepTime);
      if (sit != rit->second.end()) last = sit->second.last_step;
    }
    if (lowest.step_time.empty() || (last != 0 && lowest.step_time.back().step <= last)) {
      round.outcome = NodeRoundOutcome::kNoNewSteps;
      return round;
    }
  }

  auto run = [&](int64_t rank, SeriesKind kind, const Series& series) {
    SeriesState& st = round.next[rank][kind];
    DetectStep step = DetectSeries(st, series, IncrementRuleOf(kind), params);
    st = step.next;
    return step.detection;
  };

  double max_d = 0;
  bool slow = false;
  for (const RankProfile& r : input.ranks) {
    Detection d = run(r.rank, SeriesKind::kStepTime, r.step_time);
    if (d.slow && d.degradation > 0) {
      slow = true;
      max_d = std::max(max_d, d.degradation);
    }
    round.step_detections[r.rank] = std::move(d);
  }
  round.outcome = NodeRoundOutcome::kRan;
  if (!slow) return round;
  NodeResult& res = round.result;
  res.is_slow = true;
  res.degradation = max_d;

  // Localization on comm.csv: each series is detected once per round per rank.
  std::set<int64_t> local;
  for (const RankProfile& r : input.ranks) local.insert(r.rank);
  std::map<int64_t, const CommSeries*> comm;
  for (const RankProfile& r : input.ranks) {
    if (r.comm) comm[r.rank] = &*r.comm;
  }
  std::map<SeriesKind, std::set<int64_t>> slow_on;
  for (SeriesKind kind : {SeriesKind::kZpDevice, SeriesKind::kPpDevice, SeriesKind::kZpHost,
                          SeriesKind::kDataloaderHost}) {
    for (const auto& [rank, c] : comm) {
      const Series* s = c->Get(kind);
      if (s->empty()) continue;
      if (run(rank, kind, *s).slow) slow_on[kind].insert(rank);
    }
  }

  // TP groups restricted to the local ranks; without a tp group each rank stands alone.
  std::vector<std::vector<int64_t>> tp;
  for (const auto& g : input.groups.Distinct("tp")) {
    std::vector<int64_t> mine;
    for (int64_t r : g) {
      if (local.count(r)) mine.push_back(r);
    }
    if (!mine.empty() && std::find(tp.begin(), tp.end(), mine) == tp.end()) tp.push_back(mine);
  }
  const bool has_tp =
      std::any_of(tp.begin(), tp.end(), [](const auto& g) { return g.size() >= 2; });

  if (has_tp) {
    std::set<int64_t> calc;
    for (const auto& g : tp) {
      if (g.size() < 2) continue;
      std::vector<int64_t> ranks;
      std::vector<const Series*> series;
      for (int64_t r : g) {
        auto it = comm.find(r);
        if (it == comm.end() || it->second->zp_device.empty()) continue;
        ranks.push_back(r);
        series.push_back(&it->second->zp_device);
      }
      if (ranks.size() < 2) continue;
      auto found = SlowRanksBySpatialClustering(ranks, AlignedTail(series, params.consecutive),
                                                params.consecutive, cluster_mean_distance);
      if (found) calc.insert(found->begin(), found->end());
    }
    res.slow_calculate_ranks.assign(calc.begin(), calc.end());
    for (const auto& g : tp) {
      if (g.size() < 2) continue;
      bool any_data = false, all_slow = true;
      for (int64_t r : g) {
        auto it = comm.find(r);
        if (it == comm.end() || it->second->zp_device.empty()) continue;
        any_data = true;
        if (!slow_on[SeriesKind::kZpDevice].count(r)) all_slow = false;
      }
      if (any_data && all_slow) res.slow_communication_domains.push_back(g);
    }
  } else {
    const auto& s = slow_on[SeriesKind::kZpDevice];
    res.slow_calculate_ranks.assign(s.begin(), s.end());
  }
  const auto& send = slow_on[SeriesKind::kPpDevice];
  res.slow_send_ranks.assign(send.begin(), send.end());
  const auto& host = slow_on[SeriesKind::kZpHost];
  const bool host_slow = !host.empty() && host.size() == local.size();
  if (host_slow) res.slow_host_nodes.push_back(input.node_ip);
  if (!host_slow) {
    const auto& io = slow_on[SeriesKind::kDataloaderHost];
    res.slow_io_ranks.assign(io.begin(), io.end());
  }
  return round;
}

std::vector<std::vector<int64_t>> SlowPpDomains(
    const std::vector<int64_t>& slow_send, const std::vector<std::vector<int64_t>>& pp_groups) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t r : slow_send) {
    for (const auto& g : pp_groups) {
      auto it = std::find(g.begin(), g.end(), r);
      if (it == g.end() || it + 1 == g.end()) continue;
      out.push_back({r, *(it + 1)});
      break;
    }
  }
  return out;
}

std::vector<int64_t> SlowNetworkRanks(const std::vector<int64_t>& slow_send,
                                      const std::vector<std::vector<int64_t>>& pp_groups) {
  std::vector<int64_t> out;
  const std::set<int64_t> s(slow_send.begin(), slow_send.end());
  for (const auto& g : pp_groups) {
    const size_t m = g.size();
    if (m < 2) continue;
    std::vector<double> bad(m, 0), links(m, 2);
    links.front() = 1;
    links.back() = 1;
    for (size_t k = 0; k + 1 < m; ++k) {
      if (!s.count(g[k])) continue;
      bad[k] += 1;
      bad[k + 1] += 1;
    }
    for (size_t k = 0; k < m; ++k) {
      if (bad[k] / links[k] != 1) continue;
      const bool left = k > 0 && bad[k - 1] / links[k - 1] == 0.5;
      const bool right = k + 1 < m && bad[k + 1] / links[k + 1] == 0.5;
      if ((left || right) && std::find(out.begin(), out.end(), g[k]) == out.end()) {
        out.push_back(g[k]);
      }
    }
  }
  return out;
}

ClusterResult MergeNodeResults(const std::vector<NodeResult>& nodes, const ParallelGroups& global) {
  ClusterResult out;
  std::vector<int64_t> send;
  std::set<int64_t> tp_union;
  for (const NodeResult& n : nodes) {
    if (!n.is_slow) continue;
    out.degradation = std::max(out.degradation, n.degradation);
    out.slow_calculate_ranks.insert(out.slow_calculate_ranks.end(), n.slow_calculate_ranks.begin(),
                                    n.slow_calculate_ranks.end());
    out.slow_io_ranks.insert(out.slow_io_ranks.end(), n.slow_io_ranks.begin(),
                             n.slow_io_ranks.end());
    out.slow_host_nodes.insert(out.slow_host_nodes.end(), n.slow_host_nodes.begin(),
                               n.slow_host_nodes.end());
    send.insert(send.end(), n.slow_send_ranks.begin(), n.slow_send_ranks.end());
    for (const auto& d : n.slow_communication_domains) tp_union.insert(d.begin(), d.end());
  }
  out.is_slow = out.degradation > 0;
  for (const auto& g : global.Distinct("tp")) {
    if (g.empty()) continue;
    const bool all =
        std::all_of(g.begin(), g.end(), [&](int64_t r) { return tp_union.count(r) > 0; });
    if (all) out.slow_communication_domains.push_back(g);
  }
  const auto pp = global.Distinct("pp");
  for (auto& d : SlowPpDomains(send, pp)) out.slow_communication_domains.push_back(std::move(d));
  out.slow_communication_ranks = SlowNetworkRanks(send, pp);
  return out;
}

}  // namespace clusterd::diagnosis
