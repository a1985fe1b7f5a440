#pragma once

// Synthetic profiling data for the diagnosis tests and the accuracy harness: a node of
// `ranks` ranks in TP groups of `tp_size`, one step every period/steps_per_round, with a
// fault injected from `fault_step` on. Deterministic for a given seed.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "diagnosis/profiling_data.h"
#include "diagnosis/slow_node_algorithm.h"

namespace clusterd::diagnosis::testing {

enum class Fault {
  kNone,
  kStepChange,  // every rank's step time × (1 + magnitude) (e.g. a slow shared resource)
  kSpike,       // one step × 5 on `slow_rank`, then normal
  kSlowCard,    // `slow_rank` computes slowly: steps slow for all, its ZP_device collapses,
                // the others wait in the collective
  kSlowDomain,  // the TP group of `slow_rank` communicates slowly: its ZP_device rises
};

struct Scenario {
  Fault fault = Fault::kNone;
  int ranks = 8;
  int tp_size = 4;
  int64_t slow_rank = 2;
  double magnitude = 0.5;   // relative slow-down
  double noise = 0.01;      // relative standard deviation of every value
  int64_t fault_step = 61;  // first faulty step (steps count from 1)
  int64_t steps = 150;
  double step_ms = 1000;
  double zp_ms = 50;
};

struct NodeData {
  std::vector<RankProfile> ranks;  // full series, file order
  ParallelGroups groups;
};

inline NodeData Generate(const Scenario& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> unit(0, 1);
  auto noisy = [&](double v) { return std::max(1e-3, v * (1 + s.noise * unit(rng))); };
  NodeData d;
  for (int r = 0; r < s.ranks; ++r) {
    RankProfile p;
    p.rank = r;
    p.comm = CommSeries{};
    d.ranks.push_back(std::move(p));
  }
  const int64_t slow_group = s.slow_rank / s.tp_size;
  for (int64_t step = 1; step <= s.steps; ++step) {
    const bool faulty = s.fault != Fault::kNone && step >= s.fault_step;
    double step_factor = 1;
    if (faulty && (s.fault == Fault::kStepChange || s.fault == Fault::kSlowCard ||
                   s.fault == Fault::kSlowDomain)) {
      step_factor = 1 + s.magnitude;
    }
    const double shared_step = s.step_ms * step_factor;
    for (int r = 0; r < s.ranks; ++r) {
      double st = noisy(shared_step);
      if (s.fault == Fault::kSpike && step == s.fault_step && r == s.slow_rank) st = s.step_ms * 5;
      double zp = s.zp_ms;
      if (faulty && s.fault == Fault::kSlowCard && r / s.tp_size == slow_group) {
        // The slow card arrives last and waits least; its peers wait for it.
        zp = r == s.slow_rank ? s.zp_ms * 0.1 : s.zp_ms + s.magnitude * s.step_ms * 0.5;
      }
      if (faulty && s.fault == Fault::kSlowDomain && r / s.tp_size == slow_group) {
        zp = s.zp_ms * (1 + 4 * s.magnitude);
      }
      RankProfile& p = d.ranks[r];
      p.step_time.push_back({step, st * 1e6});
      p.comm->zp_device.push_back({step, noisy(zp) * 1e6});
      p.comm->zp_host.push_back({step, noisy(s.zp_ms * 0.2) * 1e6});
      p.comm->dataloader_host.push_back({step, noisy(20) * 1e6});
    }
  }
  for (int g = 0; g * s.tp_size < s.ranks; ++g) {
    ParallelGroup tp;
    tp.key = absl::StrCat("group_", g);
    tp.group_name = "tp";
    for (int r = g * s.tp_size; r < (g + 1) * s.tp_size && r < s.ranks; ++r) {
      tp.global_ranks.push_back(r);
    }
    d.groups.groups.push_back(tp);
  }
  return d;
}

// The node's input as of step `upto` (the files hold steps 1..upto).
inline NodeInput InputUpTo(const NodeData& d, int64_t upto, const std::string& ip = "10.0.0.1") {
  NodeInput in;
  in.node_ip = ip;
  in.groups = d.groups;
  for (const RankProfile& full : d.ranks) {
    RankProfile p;
    p.rank = full.rank;
    p.comm = CommSeries{};
    for (const Sample& v : full.step_time) {
      if (v.step <= upto) p.step_time.push_back(v);
    }
    auto cut = [&](const Series& from, Series& to) {
      for (const Sample& v : from) {
        if (v.step <= upto) to.push_back(v);
      }
    };
    if (full.comm) {
      cut(full.comm->zp_device, p.comm->zp_device);
      cut(full.comm->zp_host, p.comm->zp_host);
      cut(full.comm->dataloader_host, p.comm->dataloader_host);
    } else {
      p.comm.reset();  // comm.csv missing
    }
    in.ranks.push_back(std::move(p));
  }
  return in;
}

}  // namespace clusterd::diagnosis::testing
