#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace clusterd::diagnosis {

// Spatial (homogenization) clustering of jobs-ranktable-diagnosis.md §6.6. Pure.

// One two-cluster split of `values`: the positions (into `values`) of the low cluster when the
// largest gap between sorted neighbours is at least half the range and mean(high)/mean(low) > D;
// nullopt otherwise.
std::optional<std::vector<size_t>> SplitLowCluster(const std::vector<double>& values, double d);

// The anomalous positions of one column: split repeatedly on the low values until no split is
// found, keeping the last low cluster. Positions refer to `values` (the original reports the
// positions of a second split inside the sub-list; see docs/compatibility.md).
std::optional<std::vector<size_t>> AbnormalPositions(const std::vector<double>& values, double d);

// The slow computing ranks of one TP group. `series[i]` holds the last K ZP_device values of
// `ranks[i]` (aligned by step); fewer than K values in any series, or columns that disagree,
// give nullopt.
std::optional<std::vector<int64_t>> SlowRanksBySpatialClustering(
    const std::vector<int64_t>& ranks, const std::vector<std::vector<double>>& series, int64_t k,
    double d);

}  // namespace clusterd::diagnosis
