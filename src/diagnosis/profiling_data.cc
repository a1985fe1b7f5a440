#include "diagnosis/profiling_data.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/json_util.h"
#include "common/sv.h"

namespace clusterd::diagnosis {
namespace {

// Lines of a CSV text. An unterminated last line is still being written (the parser appends
// whole lines), so it is dropped and reported through `truncated`.
std::vector<absl::string_view> Lines(std::string_view text, bool& truncated) {
  std::vector<absl::string_view> lines = absl::StrSplit(Sv(text), '\n');
  truncated = false;
  if (!lines.empty()) {
    if (!lines.back().empty()) truncated = true;
    lines.pop_back();  // "" after the final '\n', or the unterminated tail
  }
  for (auto& l : lines) l = absl::StripTrailingAsciiWhitespace(l);
  return lines;
}

// Column names match case-insensitively, ignoring underscores and spaces.
std::string NormalizeColumn(absl::string_view name) {
  std::string out;
  for (char c : absl::StripAsciiWhitespace(name)) {
    if (c == '_' || c == ' ') continue;
    out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool ValidValue(double v) { return std::isfinite(v) && v > 0 && v < DBL_MAX; }

}  // namespace

std::string_view SeriesName(SeriesKind kind) {
  switch (kind) {
    case SeriesKind::kStepTime:
      return "stepTime";
    case SeriesKind::kZpDevice:
      return "ZP_device";
    case SeriesKind::kPpDevice:
      return "PP_device";
    case SeriesKind::kZpHost:
      return "ZP_host";
    case SeriesKind::kDataloaderHost:
      return "dataloader_host";
  }
  return "?";
}

const Series* CommSeries::Get(SeriesKind kind) const {
  switch (kind) {
    case SeriesKind::kZpDevice:
      return &zp_device;
    case SeriesKind::kPpDevice:
      return &pp_device;
    case SeriesKind::kZpHost:
      return &zp_host;
    case SeriesKind::kDataloaderHost:
      return &dataloader_host;
    case SeriesKind::kStepTime:
      return nullptr;
  }
  return nullptr;
}

absl::StatusOr<Series> ParseStepTimeCsv(std::string_view text, ParseStats* stats) {
  ParseStats local;
  ParseStats& s = stats ? *stats : local;
  bool truncated = false;
  std::vector<absl::string_view> lines = Lines(text, truncated);
  if (truncated) ++s.malformed_rows;
  Series out;
  if (lines.empty()) return out;
  std::vector<absl::string_view> header = absl::StrSplit(lines[0], ',');
  if (header.size() != 2 || NormalizeColumn(header[0]) != "steptime") {
    return absl::InvalidArgumentError(
        absl::StrCat("steptime.csv: header is not \"step time,durations\": \"", lines[0], "\""));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    ++s.rows;
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ',');
    int64_t step = 0;
    double v = 0;
    if (f.size() != 2 || !absl::SimpleAtoi(absl::StripAsciiWhitespace(f[0]), &step) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(f[1]), &v)) {
      ++s.malformed_rows;
      continue;
    }
    if (!ValidValue(v)) {
      ++s.skipped_values;
      continue;
    }
    out.push_back({step, v});
  }
  return out;
}

absl::StatusOr<CommSeries> ParseCommCsv(std::string_view text, ParseStats* stats) {
  ParseStats local;
  ParseStats& s = stats ? *stats : local;
  bool truncated = false;
  std::vector<absl::string_view> lines = Lines(text, truncated);
  if (truncated) ++s.malformed_rows;
  CommSeries out;
  if (lines.empty()) return out;
  std::vector<absl::string_view> header = absl::StrSplit(lines[0], ',');
  int step_col = -1;
  std::vector<std::pair<int, Series*>> cols;
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string name = NormalizeColumn(header[c]);
    const int ci = static_cast<int>(c);
    if (name == "stepindex") step_col = ci;
    if (name == "zpdevice") cols.push_back({ci, &out.zp_device});
    if (name == "zphost") cols.push_back({ci, &out.zp_host});
    if (name == "ppdevice") cols.push_back({ci, &out.pp_device});
    if (name == "pphost") cols.push_back({ci, &out.pp_host});
    if (name == "dataloaderhost") cols.push_back({ci, &out.dataloader_host});
  }
  if (step_col < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("comm.csv: header has no step_index column: \"", lines[0], "\""));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    ++s.rows;
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ',');
    int64_t step = 0;
    if (f.size() != header.size() ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(f[step_col]), &step)) {
      ++s.malformed_rows;
      continue;
    }
    for (auto& [col, series] : cols) {
      double v = 0;
      if (!absl::SimpleAtod(absl::StripAsciiWhitespace(f[col]), &v) || !ValidValue(v)) {
        ++s.skipped_values;
        continue;
      }
      series->push_back({step, v});
    }
  }
  return out;
}

namespace {

// Sort key of a group key: the number after its last '_' (keys without one sort last).
std::pair<int64_t, std::string> GroupOrder(const std::string& key) {
  const size_t pos = key.rfind('_');
  int64_t n = 0;
  if (pos != std::string::npos && absl::SimpleAtoi(absl::string_view(key).substr(pos + 1), &n)) {
    return {n, key};
  }
  return {INT64_MAX, key};
}

}  // namespace

std::vector<std::vector<int64_t>> ParallelGroups::Distinct(std::string_view name) const {
  std::vector<std::vector<int64_t>> out;
  std::set<std::vector<int64_t>> seen;
  for (const ParallelGroup& g : groups) {
    if (g.group_name != name) continue;
    if (seen.insert(g.global_ranks).second) out.push_back(g.global_ranks);
  }
  return out;
}

bool ParallelGroups::HasCpOrExp() const {
  return std::any_of(groups.begin(), groups.end(), [](const ParallelGroup& g) {
    return g.group_name == "cp" || g.group_name == "exp";
  });
}

void ParallelGroups::Merge(const ParallelGroups& other) {
  for (const ParallelGroup& g : other.groups) {
    const bool known = std::any_of(groups.begin(), groups.end(),
                                   [&](const ParallelGroup& h) { return h.key == g.key; });
    if (!known) groups.push_back(g);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const ParallelGroup& a, const ParallelGroup& b) {
                     return GroupOrder(a.key) < GroupOrder(b.key);
                   });
}

absl::StatusOr<ParallelGroups> ParseParallelGroups(std::string_view text, std::string_view what) {
  auto parsed = ParseJson(text, what);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": not a JSON object"));
  }
  ParallelGroups out;
  for (auto it = parsed->begin(); it != parsed->end(); ++it) {
    const auto& v = it.value();
    auto fail = [&](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(what), ": group \"", it.key(), "\": ", Sv(why)));
    };
    if (!v.is_object()) return fail("not an object");
    ParallelGroup g;
    g.key = it.key();
    if (v.contains("group_name")) {
      if (!v["group_name"].is_string()) return fail("group_name is not a string");
      g.group_name = v["group_name"].get<std::string>();
    }
    if (v.contains("group_rank") && v["group_rank"].is_number_integer()) {
      g.group_rank = v["group_rank"].get<int64_t>();
    }
    if (v.contains("global_ranks")) {
      if (!v["global_ranks"].is_array()) return fail("global_ranks is not an array");
      for (const auto& r : v["global_ranks"]) {
        if (!r.is_number_integer()) return fail("global_ranks holds a non-integer");
        g.global_ranks.push_back(r.get<int64_t>());
      }
    }
    out.groups.push_back(std::move(g));
  }
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const ParallelGroup& a, const ParallelGroup& b) {
                     return GroupOrder(a.key) < GroupOrder(b.key);
                   });
  return out;
}

std::string DegradationLevel(double d) {
  if (!(d > 0)) return "0.0%";
  return absl::StrFormat("%.2f%%", 100 * d);
}

}  // namespace clusterd::diagnosis
