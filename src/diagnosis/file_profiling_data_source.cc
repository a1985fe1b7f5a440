#include "diagnosis/file_profiling_data_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "diagnosis/profiling_data.h"
#include "diagnosis/rank_data_reader.h"

namespace clusterd::diagnosis {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadFileCapped(const fs::path& path, size_t max_bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat(path.string(), ": missing"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat(path.string(), ": cannot open"));
  const auto size = fs::file_size(path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat(path.string(), ": ", ec.message()));
  if (size <= max_bytes) {
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Too big: the header line, then the newest max_bytes from the first whole line on.
  std::string header;
  std::getline(in, header);
  in.seekg(static_cast<std::streamoff>(size - max_bytes));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string tail = ss.str();
  const size_t nl = tail.find('\n');
  tail = nl == std::string::npos ? "" : tail.substr(nl + 1);
  return header + "\n" + tail;
}

}  // namespace

FileProfilingDataSource::FileProfilingDataSource(std::string root, size_t max_file_bytes)
    : root_(std::move(root)), max_file_bytes_(max_file_bytes) {}

std::string FileProfilingDataSource::RankDir(const std::string& job_id, int64_t rank) const {
  return (fs::path(root_) / job_id / std::to_string(rank)).string();
}

std::vector<int64_t> FileProfilingDataSource::Ranks(const std::string& job_id) {
  std::vector<int64_t> ranks;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / job_id, ec)) {
    int64_t r = 0;
    if (entry.is_directory() && absl::SimpleAtoi(entry.path().filename().string(), &r)) {
      ranks.push_back(r);
    }
  }
  return ranks;
}

bool FileProfilingDataSource::HasParallelGroups(const std::string& job_id, int64_t rank) {
  std::error_code ec;
  return fs::exists(fs::path(RankDir(job_id, rank)) / std::string(kParallelGroupFile), ec);
}

absl::StatusOr<ProfilingText> FileProfilingDataSource::ParallelGroups(const std::string& job_id,
                                                                      int64_t rank) {
  const fs::path path = fs::path(RankDir(job_id, rank)) / std::string(kParallelGroupFile);
  absl::StatusOr<std::string> text = ReadFileCapped(path, max_file_bytes_);
  if (!text.ok()) return text.status();
  return ProfilingText{path.string(), std::move(*text)};
}

std::unique_ptr<RankProfileReader> FileProfilingDataSource::OpenRank(const std::string& job_id,
                                                                     int64_t rank,
                                                                     size_t max_samples) {
  return std::make_unique<RankDataReader>(RankDir(job_id, rank), rank, max_samples);
}

}  // namespace clusterd::diagnosis
