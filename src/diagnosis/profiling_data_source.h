#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "diagnosis/slow_node_algorithm.h"

namespace clusterd::diagnosis {

// One input object of the slow-node pipeline, with the name its problems are reported under
// (a path for files, so the log lines and the view's reason name the file as before).
struct ProfilingText {
  std::string name;
  std::string text;
};

// The step-time and communication series of one rank, read incrementally: each Refresh adds what
// the rank wrote since the last one and keeps the newest samples (the cost of a round is what
// was appended, not the history).
class RankProfileReader {
 public:
  virtual ~RankProfileReader() = default;
  // Problems (unreadable or malformed data) are appended to `problems` (may be null); the data
  // read so far stay.
  virtual const RankProfile& Refresh(std::vector<std::string>* problems) = 0;
};

// Where SlowNodeController gets the ranks' profiling data of a job (§6.3). The decision loop
// asks only this, so its tests feed data from memory; the node-side file layout
// (<root>/<jobId>/<rank>/...) is FileProfilingDataSource's business.
class ProfilingDataSource {
 public:
  virtual ~ProfilingDataSource() = default;
  // The ranks that have written data for the job (the layout when neither the FeatConf nor the
  // job names them). Unreadable: empty, the ranks appear on a later poll.
  virtual std::vector<int64_t> Ranks(const std::string& job_id) = 0;
  // Whether the rank has written its parallel-group info (initial profiling waits for it).
  virtual bool HasParallelGroups(const std::string& job_id, int64_t rank) = 0;
  // The rank's parallel_group.json as written; NotFound when it has none, other errors name
  // the object.
  virtual absl::StatusOr<ProfilingText> ParallelGroups(const std::string& job_id, int64_t rank) = 0;
  // A reader of the rank's series keeping `max_samples` per series.
  virtual std::unique_ptr<RankProfileReader> OpenRank(const std::string& job_id, int64_t rank,
                                                      size_t max_samples) = 0;
};

}  // namespace clusterd::diagnosis
