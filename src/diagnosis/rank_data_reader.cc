#include "diagnosis/rank_data_reader.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/metrics.h"

namespace clusterd::diagnosis {
namespace {

// Largest chunk read in one Refresh; the rest comes next round.
constexpr uint64_t kMaxChunk = 64ULL << 20;

// Values skipped (0, ±Inf, NaN, max-float) and rows that do not parse, by file.
void Count(std::string_view file, const ParseStats& stats) {
  auto& reg = MetricsRegistry::Default();
  constexpr std::string_view kName = "clusterd_diagnosis_bad_input_total";
  constexpr std::string_view kHelp =
      "Slow-node inputs rejected or skipped (FeatConf, profiling files).";
  if (stats.skipped_values > 0) {
    reg.GetCounter(kName, kHelp, {{"kind", std::string(file) + "-value"}})
        .Increment(static_cast<uint64_t>(stats.skipped_values));
  }
  if (stats.malformed_rows > 0) {
    reg.GetCounter(kName, kHelp, {{"kind", std::string(file) + "-row"}})
        .Increment(static_cast<uint64_t>(stats.malformed_rows));
  }
}

void Append(Series& to, Series&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

RankDataReader::RankDataReader(std::string dir, int64_t rank, size_t max_samples)
    : dir_(std::move(dir)), max_samples_(std::max<size_t>(max_samples, 1)) {
  profile_.rank = rank;
}

std::string RankDataReader::ReadAppended(const std::string& path, Cursor& cursor, bool& restarted,
                                         bool& missing, std::vector<std::string>* problems) {
  restarted = false;
  missing = false;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    missing = true;
    if (cursor.offset != 0 || !cursor.header.empty()) restarted = true;
    cursor = {};
    return "";
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t inode = static_cast<uint64_t>(st.st_ino);
  if (inode != cursor.inode || size < cursor.offset) {
    if (cursor.offset != 0) restarted = true;
    cursor = {};
    cursor.inode = inode;
  }
  if (size == cursor.offset) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (problems) problems->push_back(absl::StrCat(path, ": cannot open"));
    return "";
  }
  in.seekg(static_cast<std::streamoff>(cursor.offset));
  std::string chunk(std::min(size - cursor.offset, kMaxChunk), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  const size_t last_nl = chunk.rfind('\n');
  if (last_nl == std::string::npos) return "";  // no complete line yet
  chunk.resize(last_nl + 1);
  cursor.offset += chunk.size();
  if (cursor.header.empty()) {
    const size_t nl = chunk.find('\n');
    cursor.header = chunk.substr(0, nl);
    chunk.erase(0, nl + 1);
  }
  return absl::StrCat(cursor.header, "\n", chunk);
}

void RankDataReader::Trim(Series& s) const {
  if (s.size() > max_samples_) s.erase(s.begin(), s.end() - static_cast<long>(max_samples_));
}

const RankProfile& RankDataReader::Refresh(std::vector<std::string>* problems) {
  namespace fs = std::filesystem;
  bool restarted = false, missing = false;
  const std::string step_path = (fs::path(dir_) / std::string(kStepTimeFile)).string();
  std::string text = ReadAppended(step_path, step_cursor_, restarted, missing, problems);
  if (restarted || missing) profile_.step_time.clear();
  if (!text.empty()) {
    ParseStats stats;
    auto series = ParseStepTimeCsv(text, &stats);
    Count("steptime", stats);
    if (series.ok()) {
      Append(profile_.step_time, std::move(*series));
      Trim(profile_.step_time);
    } else if (problems) {
      problems->push_back(absl::StrCat("rank ", profile_.rank, ": ", series.status().message()));
    }
  }
  const std::string comm_path = (fs::path(dir_) / std::string(kCommFile)).string();
  text = ReadAppended(comm_path, comm_cursor_, restarted, missing, problems);
  if (missing) {
    profile_.comm.reset();
  } else if (restarted || !profile_.comm) {
    profile_.comm = CommSeries{};
  }
  if (!text.empty()) {
    ParseStats stats;
    auto comm = ParseCommCsv(text, &stats);
    Count("comm", stats);
    if (comm.ok()) {
      CommSeries& c = *profile_.comm;
      Append(c.zp_device, std::move(comm->zp_device));
      Append(c.zp_host, std::move(comm->zp_host));
      Append(c.pp_device, std::move(comm->pp_device));
      Append(c.pp_host, std::move(comm->pp_host));
      Append(c.dataloader_host, std::move(comm->dataloader_host));
      for (Series* s : {&c.zp_device, &c.zp_host, &c.pp_device, &c.pp_host, &c.dataloader_host}) {
        Trim(*s);
      }
    } else if (problems) {
      problems->push_back(absl::StrCat("rank ", profile_.rank, ": ", comm.status().message()));
    }
  }
  return profile_;
}

}  // namespace clusterd::diagnosis
