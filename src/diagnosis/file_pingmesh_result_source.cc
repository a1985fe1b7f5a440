#include "diagnosis/file_pingmesh_result_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "diagnosis/super_pod_topology.h"

namespace clusterd::diagnosis {
namespace {

namespace fs = std::filesystem;

constexpr char kCathelperFileName[] = "cathelper.conf";
constexpr size_t kMaxCathelperBytes = 1 << 20;

absl::StatusOr<std::string> ReadFile(const fs::path& path, size_t max_bytes) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    const std::string message = absl::StrCat(path.string(), ": ", ec.message());
    return ec == std::errc::no_such_file_or_directory ? absl::NotFoundError(message)
                                                      : absl::UnavailableError(message);
  }
  if (size > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path.string(), ": larger than ", max_bytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat(path.string(), ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsPingResultFile(const std::string& name) {
  return absl::EndsWith(name, ".csv") || absl::EndsWith(name, ".csv-bak");
}

}  // namespace

FilePingmeshResultSource::FilePingmeshResultSource(std::string root, size_t max_file_bytes)
    : root_(std::move(root)), max_file_bytes_(max_file_bytes) {}

std::string FilePingmeshResultSource::PodDir(const std::string& super_pod_id) const {
  const std::string name = absl::StrCat(Sv(kSuperPodPrefix), super_pod_id);
  return (fs::path(root_) / "cluster" / name).string();
}

absl::StatusOr<std::string> FilePingmeshResultSource::Cathelper(const std::string& super_pod_id) {
  return ReadFile(fs::path(PodDir(super_pod_id)) / kCathelperFileName, kMaxCathelperBytes);
}

bool FilePingmeshResultSource::HasTopology(const std::string& super_pod_id) {
  std::error_code ec;
  return fs::exists(
      fs::path(PodDir(super_pod_id)) / absl::StrCat(Sv(kSuperPodPrefix), super_pod_id, ".json"),
      ec);
}

absl::StatusOr<std::vector<PingResultFile>> FilePingmeshResultSource::PingResults(
    const std::string& super_pod_id) {
  const fs::path dir = PodDir(super_pod_id);
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat(dir.string(), ": ", ec.message()));
  std::vector<fs::path> paths;
  for (const auto& entry : it) {
    // An entry whose type cannot be read (rotated away meanwhile) is not a result to read.
    std::error_code type_ec;
    if (entry.is_regular_file(type_ec) && IsPingResultFile(entry.path().filename().string())) {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<PingResultFile> files;
  files.reserve(paths.size());
  for (const fs::path& path : paths) {
    files.push_back({path.string(), ReadFile(path, max_file_bytes_)});
  }
  return files;
}

}  // namespace clusterd::diagnosis
