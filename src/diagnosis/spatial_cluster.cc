#include "diagnosis/spatial_cluster.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace clusterd::diagnosis {

std::optional<std::vector<size_t>> SplitLowCluster(const std::vector<double>& values, double d) {
  const size_t m = values.size();
  if (m < 2) return std::nullopt;
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  // k*: the first index of the strictly largest gap.
  size_t best = m;
  double best_gap = 0;
  for (size_t k = 0; k + 1 < m; ++k) {
    const double gap = values[order[k + 1]] - values[order[k]];
    if (gap > best_gap) {
      best_gap = gap;
      best = k;
    }
  }
  if (best == m) return std::nullopt;
  const double range = values[order[m - 1]] - values[order[0]];
  if (best_gap < range / 2) return std::nullopt;
  double low = 0, high = 0;
  for (size_t i = 0; i <= best; ++i) low += values[order[i]];
  for (size_t i = best + 1; i < m; ++i) high += values[order[i]];
  low /= static_cast<double>(best + 1);
  high /= static_cast<double>(m - best - 1);
  if (low == 0) return std::nullopt;
  if (!(high / low > d)) return std::nullopt;
  std::vector<size_t> out(order.begin(), order.begin() + static_cast<long>(best) + 1);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::vector<size_t>> AbnormalPositions(const std::vector<double>& values, double d) {
  std::optional<std::vector<size_t>> last;
  std::vector<size_t> positions(values.size());
  std::iota(positions.begin(), positions.end(), 0);
  std::vector<double> current = values;
  while (true) {
    auto split = SplitLowCluster(current, d);
    if (!split) break;
    std::vector<size_t> mapped;
    std::vector<double> sub;
    for (size_t i : *split) {
      mapped.push_back(positions[i]);
      sub.push_back(current[i]);
    }
    last = mapped;
    positions = std::move(mapped);
    current = std::move(sub);
  }
  return last;
}

std::optional<std::vector<int64_t>> SlowRanksBySpatialClustering(
    const std::vector<int64_t>& ranks, const std::vector<std::vector<double>>& series, int64_t k,
    double d) {
  if (ranks.size() != series.size() || ranks.size() < 2 || k < 1) return std::nullopt;
  for (const auto& s : series) {
    if (static_cast<int64_t>(s.size()) < k) return std::nullopt;
  }
  std::vector<std::optional<std::vector<size_t>>> columns;
  for (int64_t j = 0; j < k; ++j) {
    std::vector<double> column;
    for (const auto& s : series) column.push_back(s[s.size() - static_cast<size_t>(k) + j]);
    columns.push_back(AbnormalPositions(column, d));
  }
  const bool any =
      std::any_of(columns.begin(), columns.end(), [](const auto& c) { return c.has_value(); });
  if (!any) return std::nullopt;
  std::set<size_t> inter;
  bool init = false;
  for (const auto& c : columns) {
    if (!c) return std::nullopt;  // some columns have an anomaly, this one none
    std::set<size_t> cs(c->begin(), c->end());
    if (!init) {
      inter = cs;
      init = true;
    } else {
      std::set<size_t> next;
      std::set_intersection(inter.begin(), inter.end(), cs.begin(), cs.end(),
                            std::inserter(next, next.begin()));
      inter = std::move(next);
    }
  }
  for (const auto& c : columns) {
    for (size_t i : *c) {
      if (!inter.count(i)) return std::nullopt;  // columns disagree
    }
  }
  if (inter.empty()) return std::nullopt;
  std::vector<int64_t> out;
  for (size_t i : inter) out.push_back(ranks[i]);
  return out;
}

}  // namespace clusterd::diagnosis
