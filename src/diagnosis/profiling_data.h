#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::diagnosis {

// The per-rank files of the node-side data pipeline (jobs-ranktable-diagnosis.md §6.3):
// `steptime.csv`, `comm.csv` and `parallel_group.json` in `<root>/<jobId>/<rank>/`.
inline constexpr std::string_view kStepTimeFile = "steptime.csv";
inline constexpr std::string_view kCommFile = "comm.csv";
inline constexpr std::string_view kParallelGroupFile = "parallel_group.json";

// One value of a series at a step.
struct Sample {
  int64_t step = 0;
  double value = 0;
  bool operator==(const Sample&) const = default;
};
using Series = std::vector<Sample>;

// The series the temporal detector watches (§6.4).
enum class SeriesKind { kStepTime, kZpDevice, kPpDevice, kZpHost, kDataloaderHost };
inline constexpr SeriesKind kAllSeries[] = {SeriesKind::kStepTime, SeriesKind::kZpDevice,
                                            SeriesKind::kPpDevice, SeriesKind::kZpHost,
                                            SeriesKind::kDataloaderHost};
std::string_view SeriesName(SeriesKind kind);  // "stepTime", "ZP_device", ...

// What a parse kept and dropped; the caller logs and counts the drops.
struct ParseStats {
  int rows = 0;            // data rows seen
  int skipped_values = 0;  // 0, ±Inf, NaN or max-float values
  int malformed_rows = 0;  // wrong field count or unparsable numbers (a truncated last line)
};

// steptime.csv: header `step time,durations`, rows `<step>,<ns>`. Values 0, ±Inf and
// ≥ max-float are skipped. Rows that do not parse (a truncated last line) are skipped and
// counted. A missing header is InvalidArgument; empty text is an empty series.
absl::StatusOr<Series> ParseStepTimeCsv(std::string_view text, ParseStats* stats = nullptr);

// comm.csv: `step_index,ZP_device,ZP_host,PP_device,PP_host,dataloader_host` (column names
// matched case-insensitively, ignoring underscores, in any order; missing columns give empty
// series). Each series keeps its own valid values.
struct CommSeries {
  Series zp_device, zp_host, pp_device, pp_host, dataloader_host;
  const Series* Get(SeriesKind kind) const;  // nullptr for kStepTime
};
absl::StatusOr<CommSeries> ParseCommCsv(std::string_view text, ParseStats* stats = nullptr);

// parallel_group.json: {"<key>": {"group_name", "group_rank", "global_ranks"}}.
struct ParallelGroup {
  std::string key;
  std::string group_name;  // tp, pp, dp, cp, exp, ...
  int64_t group_rank = 0;
  std::vector<int64_t> global_ranks;
  bool operator==(const ParallelGroup&) const = default;
};
// Groups ordered by the number after the last '_' of their key (keys without one last, by name).
struct ParallelGroups {
  std::vector<ParallelGroup> groups;

  // Distinct groups named `name` (same global_ranks counted once), in key order.
  std::vector<std::vector<int64_t>> Distinct(std::string_view name) const;
  bool HasCpOrExp() const;
  // Adds the groups of `other` whose key is not yet present (the merge of §6.3/§6.2 step 4).
  void Merge(const ParallelGroups& other);
};
absl::StatusOr<ParallelGroups> ParseParallelGroups(std::string_view text, std::string_view what);

// "%.2f%%" of 100·d (d ≤ 0 gives "0.0%"), the degradationLevel string of §6.5.
std::string DegradationLevel(double d);

}  // namespace clusterd::diagnosis
