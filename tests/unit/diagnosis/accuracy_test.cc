// Accuracy harness (docs/diagnosis.md): synthetic nodes generated with fixed seeds, 1,000 runs
// per case, run through the node-level algorithm, the cluster merge and the degradation handler
// exactly as the controller does every period. Prints the markdown table of docs/diagnosis.md:
//   ./build-d/tests/unit_diagnosis_tests --gtest_filter='DiagnosisAccuracy.*'
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "diagnosis/degradation_handler.h"
#include "diagnosis/slow_node_algorithm.h"
#include "gtest/gtest.h"
#include "unit/diagnosis/synthetic.h"

namespace clusterd::diagnosis {
namespace accuracy_test {

using testing::Fault;
using testing::Scenario;

constexpr int kRuns = 1000;
constexpr int kStepsPerPeriod = 5;  // nSecondsDoOneDetection 30 s at 6 s per step
constexpr int64_t kFirstRound = 25;

struct Case {
  std::string name;
  Scenario scenario;
  bool faulty;
  // Expected localization: slow-calculate ranks or one slow communication domain.
  std::vector<int64_t> calc;
  std::vector<std::vector<int64_t>> domains;
};

struct CaseResult {
  int detected = 0;         // slow verdict at or after the onset
  int false_positive = 0;   // slow verdict before the onset, or at all without a fault
  int localized = 0;        // detected runs whose first slow result localizes exactly
  int confirmed = 0;        // runs that reached the public fault (5 slow rounds)
  std::vector<int> delays;  // periods from the first period holding the onset to detection
  std::vector<int> confirm_delays;
};

CaseResult RunCase(const Case& c, uint64_t seed_base) {
  CaseResult out;
  const DetectorParams params{20, 3, 0.3, 3, StatisticsMode::kIntended};
  ParallelGroups global;
  for (int g = 0; g * c.scenario.tp_size < c.scenario.ranks; ++g) {
    ParallelGroup tp{absl::StrFormat("group_%d", g), "tp", 0, {}};
    for (int r = g * c.scenario.tp_size; r < (g + 1) * c.scenario.tp_size; ++r) {
      tp.global_ranks.push_back(r);
    }
    global.groups.push_back(tp);
  }
  std::mt19937_64 onset_rng(seed_base);
  std::uniform_int_distribution<int64_t> onset(41, 100);
  for (int run = 0; run < kRuns; ++run) {
    Scenario s = c.scenario;
    s.fault_step = onset(onset_rng);
    const testing::NodeData data = testing::Generate(s, seed_base * 100003 + run);
    // The first period whose data holds the onset step.
    const int64_t onset_round_end =
        kFirstRound +
        ((s.fault_step - kFirstRound + kStepsPerPeriod - 1) / kStepsPerPeriod) * kStepsPerPeriod;
    RankSeriesState state;
    DegradationState degradation;
    bool detected = false, fp = false, confirmed = false;
    for (int64_t upto = kFirstRound; upto <= s.steps; upto += kStepsPerPeriod) {
      NodeRound round = RunNodeRound(state, testing::InputUpTo(data, upto), params, 1.3);
      state = std::move(round.next);
      if (round.outcome != NodeRoundOutcome::kRan) continue;
      const bool after_onset = c.faulty && upto >= onset_round_end;
      if (round.result.is_slow && !detected) {
        if (!after_onset) {
          fp = true;
        } else {
          detected = true;
          out.delays.push_back(static_cast<int>((upto - onset_round_end) / kStepsPerPeriod));
          const bool ok = round.result.slow_calculate_ranks == c.calc &&
                          round.result.slow_communication_domains == c.domains;
          if (ok) ++out.localized;
        }
      }
      ClusterResult cluster = MergeNodeResults({round.result}, global);
      DegradationStep step = AdvanceDegradation(degradation, cluster);
      degradation = step.next;
      for (const auto& a : step.actions) {
        if (a.kind == DegradationActionKind::kLogConfirmed && !confirmed && after_onset) {
          confirmed = true;
          out.confirm_delays.push_back(
              static_cast<int>((upto - onset_round_end) / kStepsPerPeriod));
        }
      }
    }
    out.detected += detected;
    out.false_positive += fp;
    out.confirmed += confirmed;
  }
  return out;
}

std::string Stats(std::vector<int> v) {
  if (v.empty()) return "–";
  std::sort(v.begin(), v.end());
  double mean = 0;
  for (int x : v) mean += x;
  mean /= static_cast<double>(v.size());
  const int p95 =
      v[std::min(v.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(v.size())))];
  return absl::StrFormat("%.2f / %d / %d", mean, p95, v.back());
}

std::string Pct(int n) { return absl::StrFormat("%.1f %%", 100.0 * n / kRuns); }

TEST(DiagnosisAccuracy, SyntheticCasesMeetTheBars) {
  auto scenario = [](Fault f, double magnitude, double noise) {
    Scenario s;
    s.fault = f;
    s.magnitude = magnitude;
    s.noise = noise;
    s.slow_rank = 2;
    return s;
  };
  const std::vector<Case> cases = {
      {"steady, 1 % noise", scenario(Fault::kNone, 0, 0.01), false, {}, {}},
      {"steady, 8 % noise", scenario(Fault::kNone, 0, 0.08), false, {}, {}},
      {"single spike ×5 on one rank", scenario(Fault::kSpike, 0, 0.01), false, {}, {}},
      {"step change +50 %, 1 % noise", scenario(Fault::kStepChange, 0.5, 0.01), true, {}, {}},
      {"step change +40 %, 5 % noise", scenario(Fault::kStepChange, 0.4, 0.05), true, {}, {}},
      {"step change +35 %, 5 % noise", scenario(Fault::kStepChange, 0.35, 0.05), true, {}, {}},
      {"step change +20 % (below p = 30 %)", scenario(Fault::kStepChange, 0.2, 0.01), true, {}, {}},
      {"slow computing card (rank 2), +50 %", scenario(Fault::kSlowCard, 0.5, 0.02), true, {2}, {}},
      {"slow TP domain (ranks 0–3), +50 %",
       scenario(Fault::kSlowDomain, 0.5, 0.02),
       true,
       {},
       {{0, 1, 2, 3}}},
  };
  std::printf(
      "\n| Case | Runs | Detected | False positives | Localized | Delay (periods) mean / p95 / max "
      "| Public fault | Fault delay mean / p95 / max |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  uint64_t seed = 1;
  std::vector<CaseResult> results;
  for (const Case& c : cases) {
    CaseResult r = RunCase(c, seed++);
    const bool localizes = !c.calc.empty() || !c.domains.empty();
    std::printf(
        "| %s | %d | %s | %s | %s | %s | %s | %s |\n", c.name.c_str(), kRuns,
        c.faulty ? Pct(r.detected).c_str() : "–", Pct(r.false_positive).c_str(),
        localizes
            ? absl::StrFormat("%.1f %%", r.detected ? 100.0 * r.localized / r.detected : 0).c_str()
            : "–",
        Stats(r.delays).c_str(), c.faulty ? Pct(r.confirmed).c_str() : "–",
        Stats(r.confirm_delays).c_str());
    results.push_back(std::move(r));
  }
  // Bars.
  EXPECT_EQ(results[0].false_positive, 0);
  EXPECT_EQ(results[2].false_positive, 0);
  EXPECT_GE(results[3].detected, kRuns * 99 / 100);
  EXPECT_GE(results[7].detected, kRuns * 99 / 100);
  EXPECT_GE(results[7].localized, results[7].detected * 95 / 100);
  EXPECT_GE(results[8].localized, results[8].detected * 95 / 100);
  EXPECT_LE(results[6].detected, kRuns / 100);
}

}  // namespace accuracy_test
}  // namespace clusterd::diagnosis
