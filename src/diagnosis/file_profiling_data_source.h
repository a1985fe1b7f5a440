#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diagnosis/profiling_data_source.h"

namespace clusterd::diagnosis {

// The node-side layout of §5.5/§6.3: <root>/<jobId>/<rank>/{steptime.csv,comm.csv,
// parallel_group.json}. The CSVs are read incrementally by RankDataReader; parallel_group.json
// is read whole up to `max_file_bytes` (a larger file gives its first line and the newest
// `max_file_bytes` from the first whole line on).
class FileProfilingDataSource final : public ProfilingDataSource {
 public:
  FileProfilingDataSource(std::string root, size_t max_file_bytes);

  std::vector<int64_t> Ranks(const std::string& job_id) override;
  bool HasParallelGroups(const std::string& job_id, int64_t rank) override;
  absl::StatusOr<ProfilingText> ParallelGroups(const std::string& job_id, int64_t rank) override;
  std::unique_ptr<RankProfileReader> OpenRank(const std::string& job_id, int64_t rank,
                                              size_t max_samples) override;

  const std::string& root() const { return root_; }

 private:
  std::string RankDir(const std::string& job_id, int64_t rank) const;

  const std::string root_;
  const size_t max_file_bytes_;
};

}  // namespace clusterd::diagnosis
