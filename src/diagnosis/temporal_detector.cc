#include "diagnosis/temporal_detector.h"

#include <algorithm>
#include <cmath>

namespace clusterd::diagnosis {

DetectorParams DetectorParams::FromFeatConf(const FeatConf& conf) {
  DetectorParams p;
  p.normal_number = conf.normal_number;
  p.consecutive = conf.n_consec_anomalies;
  p.degradation = conf.degradation_percentage;
  p.n_sigma = conf.n_sigma;
  return p;
}

IncrementRule IncrementRuleOf(SeriesKind kind) {
  return kind == SeriesKind::kStepTime ? IncrementRule::kByStepValue : IncrementRule::kAfterLastRow;
}

SeriesState LearnBaseline(const std::vector<double>& first_n, const DetectorParams& params) {
  std::vector<double> b = first_n;
  std::sort(b.begin(), b.end());
  const int64_t n = static_cast<int64_t>(b.size());
  int64_t t = n >= 4 * params.consecutive ? params.consecutive : 3;
  // Keep at least one value: with N < 7 a trim of 3 from each end would leave nothing.
  t = std::min<int64_t>(t, std::max<int64_t>(0, (n - 1) / 2));
  SeriesState s;
  const int64_t m = n - 2 * t;
  if (m <= 0) return s;
  double sum = 0;
  for (int64_t i = t; i < n - t; ++i) sum += b[i];
  s.mean = sum / static_cast<double>(m);
  double sq = 0;
  for (int64_t i = t; i < n - t; ++i) sq += (b[i] - s.mean) * (b[i] - s.mean);
  s.sigma = std::sqrt(sq / static_cast<double>(m));
  s.count = m;
  return s;
}

double UpperThreshold(const SeriesState& state, const DetectorParams& params) {
  if (params.degradation > 0) return state.mean * (1 + params.degradation);
  const double s = params.n_sigma == 0 ? 3.0 : static_cast<double>(params.n_sigma);
  return state.mean + s * state.sigma;
}

bool IsSlowDecision(const std::vector<int>& a, size_t x_size, int64_t k) {
  if (k < 1 || static_cast<int64_t>(a.size()) < k) return false;
  if (static_cast<size_t>(a.back()) + 1 != x_size) return false;
  return a.back() - a[a.size() - static_cast<size_t>(k)] + 1 == k;
}

DetectStep DetectSeries(const SeriesState& state, const Series& samples, IncrementRule rule,
                        const DetectorParams& params) {
  DetectStep out{state, {}};
  SeriesState& s = out.next;
  Detection& d = out.detection;
  const int64_t k = params.consecutive;
  const int64_t n_base = params.normal_number;
  const bool first = state.last_step == 0 && state.count == 0;

  size_t begin = 0;  // index of the first new sample
  int history = 0;
  if (first) {
    if (static_cast<int64_t>(samples.size()) < n_base + k) {
      d.outcome = DetectOutcome::kTooFewSamples;
      return out;
    }
    // The intended rule: the N baseline samples do not update the running statistics again.
    history = params.mode == StatisticsMode::kIntended ? static_cast<int>(n_base) : 0;
  } else if (rule == IncrementRule::kByStepValue) {
    if (samples.empty() || samples.back().step <= state.last_step) {
      s.not_updated_rounds = state.not_updated_rounds + 1;
      d.outcome = DetectOutcome::kNotUpdated;
      d.stalled = s.not_updated_rounds == kNotUpdatedRoundsBeforeError;
      return out;
    }
    while (begin < samples.size() && samples[begin].step <= state.last_step) ++begin;
    // Rows with a smaller step after a rewrite are left out below, as in the original.
  } else {
    size_t found = samples.size();
    for (size_t i = samples.size(); i-- > 0;) {
      if (samples[i].step == state.last_step) {
        found = i;
        break;
      }
    }
    begin = found == samples.size() ? 0 : found + 1;
    if (begin == samples.size()) {
      s.not_updated_rounds = state.not_updated_rounds + 1;
      d.outcome = DetectOutcome::kNotUpdated;
      return out;
    }
  }

  std::vector<double> x;
  if (first) {
    for (const Sample& v : samples) x.push_back(v.value);
  } else {
    std::vector<double> fresh;
    for (size_t i = begin; i < samples.size(); ++i) {
      if (rule == IncrementRule::kByStepValue && samples[i].step <= state.last_step) continue;
      fresh.push_back(samples[i].value);
    }
    if (static_cast<int64_t>(fresh.size()) < k) {
      const int64_t need = k - static_cast<int64_t>(fresh.size());
      if (static_cast<int64_t>(begin) < need) {
        d.outcome = DetectOutcome::kTooFewSamples;
        return out;
      }
      // Chronological order (the original prepends them newest first).
      for (size_t i = begin - static_cast<size_t>(need); i < begin; ++i) {
        x.push_back(samples[i].value);
      }
      history = static_cast<int>(need);
    }
    x.insert(x.end(), fresh.begin(), fresh.end());
  }
  s.not_updated_rounds = 0;
  s.last_step = samples.back().step;

  if (s.count == 0) {
    const SeriesState base = LearnBaseline(
        std::vector<double>(x.begin(), x.begin() + std::min<size_t>(x.size(), n_base)), params);
    s.mean = base.mean;
    s.sigma = base.sigma;
    s.count = base.count;
  }

  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (v > UpperThreshold(s, params)) {
      d.anomalies.push_back(static_cast<int>(i));
      continue;
    }
    if (static_cast<int>(i) + 1 <= history) continue;  // only new samples update
    const double n = static_cast<double>(s.count);
    const double mu_next = (n * s.mean + v) / (n + 1);
    double sum_sq = s.sigma * s.sigma * n;
    if (params.mode == StatisticsMode::kIntended) {
      sum_sq += (v - s.mean) * (v - mu_next);  // Welford
    } else {
      sum_sq += (v - mu_next) * (v - mu_next);
    }
    s.sigma = std::sqrt(std::max(0.0, sum_sq) / (n + 1));
    s.mean = mu_next;
    s.count += 1;
  }

  d.outcome = DetectOutcome::kDetected;
  d.history = history;
  d.slow = IsSlowDecision(d.anomalies, x.size(), k);
  if (d.slow && s.mean > 0) {
    double tail = 0;
    for (size_t i = x.size() - static_cast<size_t>(k); i < x.size(); ++i) tail += x[i];
    d.degradation = tail / static_cast<double>(k) / s.mean - 1;
  }
  d.x = std::move(x);
  return out;
}

}  // namespace clusterd::diagnosis
