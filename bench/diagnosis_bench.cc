// One slow-node detection round for a 4,096-rank job (512 nodes × 8 ranks, TP groups of 4):
// the node-level algorithm on every node plus the cluster merge (what SlowNodeController does
// every nSecondsDoOneDetection), from a learned baseline with 5 new steps per rank; and the
// parsing of the ranks' CSVs.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "diagnosis/profiling_data.h"
#include "diagnosis/slow_node_algorithm.h"

namespace clusterd::diagnosis {
namespace diagnosis_bench {

constexpr int kNodes = 512;
constexpr int kRanksPerNode = 8;
constexpr int kTp = 4;
constexpr int64_t kSteps = 200;
constexpr int64_t kLearnedUpTo = 195;  // the state after the round of step 195

enum class Shape { kSteady, kOneSlowCard, kAllSlow };

struct Node {
  std::vector<RankProfile> full;
  ParallelGroups groups;
};

Node MakeNode(int node, Shape shape, std::mt19937_64& rng) {
  std::normal_distribution<double> unit(0, 1);
  Node n;
  const bool slow = shape == Shape::kAllSlow || (shape == Shape::kOneSlowCard && node == 0);
  for (int i = 0; i < kRanksPerNode; ++i) {
    RankProfile p;
    p.rank = node * kRanksPerNode + i;
    p.comm = CommSeries{};
    for (int64_t step = 1; step <= kSteps; ++step) {
      const bool faulty = slow && step > kLearnedUpTo;
      const double st = (faulty ? 1.5e9 : 1e9) * (1 + 0.01 * unit(rng));
      double zp = 50e6;
      if (faulty && i / kTp == 0) zp = i == 2 ? 5e6 : 300e6;
      p.step_time.push_back({step, st});
      p.comm->zp_device.push_back({step, zp * (1 + 0.01 * unit(rng))});
      p.comm->zp_host.push_back({step, 10e6 * (1 + 0.01 * unit(rng))});
      p.comm->dataloader_host.push_back({step, 20e6 * (1 + 0.01 * unit(rng))});
    }
    n.full.push_back(std::move(p));
  }
  for (int g = 0; g < kRanksPerNode / kTp; ++g) {
    ParallelGroup tp{absl::StrCat("group_", node * 2 + g), "tp", 0, {}};
    for (int i = g * kTp; i < (g + 1) * kTp; ++i)
      tp.global_ranks.push_back(node * kRanksPerNode + i);
    n.groups.groups.push_back(tp);
  }
  return n;
}

NodeInput UpTo(const Node& n, int64_t upto, int node) {
  NodeInput in;
  in.node_ip = absl::StrCat("10.0.", node / 256, ".", node % 256);
  in.groups = n.groups;
  for (const RankProfile& f : n.full) {
    RankProfile p;
    p.rank = f.rank;
    p.comm = CommSeries{};
    auto cut = [&](const Series& from, Series& to) {
      for (const Sample& s : from) {
        if (s.step <= upto) to.push_back(s);
      }
    };
    cut(f.step_time, p.step_time);
    cut(f.comm->zp_device, p.comm->zp_device);
    cut(f.comm->zp_host, p.comm->zp_host);
    cut(f.comm->dataloader_host, p.comm->dataloader_host);
    in.ranks.push_back(std::move(p));
  }
  return in;
}

struct Job {
  std::vector<RankSeriesState> state;  // after the round of kLearnedUpTo
  std::vector<NodeInput> next;         // the files after 5 more steps
  ParallelGroups global;
};

Job MakeJob(Shape shape) {
  std::mt19937_64 rng(42);
  const DetectorParams params{20, 3, 0.3, 3, StatisticsMode::kIntended};
  Job job;
  for (int node = 0; node < kNodes; ++node) {
    Node n = MakeNode(node, shape, rng);
    RankSeriesState st;
    for (int64_t upto = 25; upto <= kLearnedUpTo; upto += 5) {
      st = RunNodeRound(st, UpTo(n, upto, node), params, 1.3).next;
    }
    job.state.push_back(std::move(st));
    job.next.push_back(UpTo(n, kSteps, node));
    job.global.Merge(n.groups);
  }
  return job;
}

void RunRound(const Job& job, benchmark::State& state) {
  const DetectorParams params{20, 3, 0.3, 3, StatisticsMode::kIntended};
  int64_t slow = 0;
  for (auto _ : state) {
    std::vector<NodeResult> results;
    results.reserve(kNodes);
    for (int node = 0; node < kNodes; ++node) {
      NodeRound r = RunNodeRound(job.state[node], job.next[node], params, 1.3);
      results.push_back(std::move(r.result));
    }
    ClusterResult c = MergeNodeResults(results, job.global);
    slow = static_cast<int64_t>(c.slow_calculate_ranks.size());
    benchmark::DoNotOptimize(c);
  }
  state.counters["ranks"] = kNodes * kRanksPerNode;
  state.counters["slow_calculate_ranks"] = static_cast<double>(slow);
}

void BM_SlowNodeRound4096Ranks_Steady(benchmark::State& state) {
  static const Job job = MakeJob(Shape::kSteady);
  RunRound(job, state);
}
BENCHMARK(BM_SlowNodeRound4096Ranks_Steady)->Unit(benchmark::kMillisecond);

void BM_SlowNodeRound4096Ranks_OneSlowCard(benchmark::State& state) {
  static const Job job = MakeJob(Shape::kOneSlowCard);
  RunRound(job, state);
}
BENCHMARK(BM_SlowNodeRound4096Ranks_OneSlowCard)->Unit(benchmark::kMillisecond);

void BM_SlowNodeRound4096Ranks_AllNodesSlow(benchmark::State& state) {
  static const Job job = MakeJob(Shape::kAllSlow);
  RunRound(job, state);
}
BENCHMARK(BM_SlowNodeRound4096Ranks_AllNodesSlow)->Unit(benchmark::kMillisecond);

// Parsing the 4,096 ranks' steptime.csv and comm.csv from memory: whole files of 200 steps (a
// full re-read), and the 5 lines a period appends (what RankDataReader parses each round).
void ParseRanks(benchmark::State& state, int64_t steps) {
  std::string step_csv = "step time,durations\n";
  std::string comm_csv = "step_index,ZP_device,ZP_host,PP_device,PP_host,dataloader_host\n";
  for (int64_t s = 1; s <= steps; ++s) {
    absl::StrAppend(&step_csv, s, ",", 1000000000 + s * 137, "\n");
    absl::StrAppend(&comm_csv, s, ",", 50000000 + s, ",", 10000000 + s, ",0,0,", 20000000 + s,
                    "\n");
  }
  for (auto _ : state) {
    for (int r = 0; r < kNodes * kRanksPerNode; ++r) {
      auto a = ParseStepTimeCsv(step_csv);
      auto b = ParseCommCsv(comm_csv);
      benchmark::DoNotOptimize(a);
      benchmark::DoNotOptimize(b);
    }
  }
  state.counters["ranks"] = kNodes * kRanksPerNode;
}

void BM_SlowNodeParse4096Ranks_Whole200Steps(benchmark::State& state) { ParseRanks(state, 200); }
BENCHMARK(BM_SlowNodeParse4096Ranks_Whole200Steps)->Unit(benchmark::kMillisecond);

void BM_SlowNodeParse4096Ranks_Appended5Steps(benchmark::State& state) { ParseRanks(state, 5); }
BENCHMARK(BM_SlowNodeParse4096Ranks_Appended5Steps)->Unit(benchmark::kMillisecond);

}  // namespace diagnosis_bench
}  // namespace clusterd::diagnosis
