#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnosis/feat_conf.h"
#include "diagnosis/profiling_data.h"

namespace clusterd::diagnosis {

// Which statistics the detector computes (docs/compatibility.md):
//  kIntended   the baseline samples are not fed to the running update a second time, and the
//              running deviation is Welford's;
//  kReference  the original engine's arithmetic (baseline samples counted twice, deviation
//              updated with (v − μ')²), to reproduce its numbers (the §6.8 trace).
enum class StatisticsMode { kIntended, kReference };

struct DetectorParams {
  int64_t normal_number = 20;  // N
  int64_t consecutive = 3;     // K
  double degradation = 0.3;    // p
  int64_t n_sigma = 3;         // used only when p = 0 (which validation forbids)
  StatisticsMode mode = StatisticsMode::kIntended;

  static DetectorParams FromFeatConf(const FeatConf& conf);
};

// How a series' new samples are found (§6.4): stepTime takes the rows whose step is greater than
// the last detected one; the comm.csv series take the rows after the row of the last detected
// step, or all rows when that step is gone (file rewritten).
enum class IncrementRule { kByStepValue, kAfterLastRow };
IncrementRule IncrementRuleOf(SeriesKind kind);

// State per (job, rank, series).
struct SeriesState {
  double mean = 0;             // μ; 0 = no baseline yet
  double sigma = 0;            // σ (population)
  int64_t count = 0;           // n, the samples behind μ and σ
  int64_t last_step = 0;       // newest step detected; 0 = never
  int not_updated_rounds = 0;  // consecutive rounds without a new step (stepTime)
  bool operator==(const SeriesState&) const = default;
};

// The trimmed baseline of §6.4 from the first N values: sort, trim t = K from each end if
// N ≥ 4K else 3 (less when N is too small to keep a value), mean and population deviation.
SeriesState LearnBaseline(const std::vector<double>& first_n, const DetectorParams& params);

// U(μ): μ·(1 + p), or μ + s·σ when p = 0 (s = nSigma, 3 when 0).
double UpperThreshold(const SeriesState& state, const DetectorParams& params);

enum class DetectOutcome {
  kDetected,       // the scan ran; `slow` says the verdict
  kTooFewSamples,  // first detection needs N + K valid samples; later ones K (with history)
  kNotUpdated,     // no new step since the last round
};

struct Detection {
  DetectOutcome outcome = DetectOutcome::kTooFewSamples;
  bool slow = false;
  double degradation = 0;      // mean(last K of x) / μ − 1, when slow
  std::vector<double> x;       // the scanned vector
  int history = 0;             // h: already-detected samples prepended to x
  std::vector<int> anomalies;  // A: indices into x above U(μ)
  // The newest step is stale for the 30th round in a row (the "not update or training complete
  // or blocked" error).
  bool stalled = false;
};

struct DetectStep {
  SeriesState next;
  Detection detection;
};

inline constexpr int kNotUpdatedRoundsBeforeError = 30;

// One round of the temporal detector (§6.4) on a series' valid samples in file order. Pure.
DetectStep DetectSeries(const SeriesState& state, const Series& samples, IncrementRule rule,
                        const DetectorParams& params);

// The decision of §6.4 on an anomaly list: |A| ≥ K, the newest sample is anomalous, and the last
// K anomalies are consecutive.
bool IsSlowDecision(const std::vector<int>& anomalies, size_t x_size, int64_t k);

}  // namespace clusterd::diagnosis
