#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnosis/profiling_data_source.h"
#include "diagnosis/slow_node_algorithm.h"

namespace clusterd::diagnosis {

// Incremental reader of one rank's `steptime.csv` and `comm.csv` (§6.3). The node-side parser
// only appends whole lines, so each Refresh parses just the complete lines added since the last
// one and keeps the newest `max_samples` samples per series: a round costs what was appended,
// not the whole history. A file that shrank or was replaced (new inode) is read again from the
// start and its cached series dropped; a vanished file empties its series. The unterminated last
// line is left for the next Refresh.
class RankDataReader final : public RankProfileReader {
 public:
  RankDataReader(std::string dir, int64_t rank, size_t max_samples);

  // Reads what was appended. Problems (unreadable or malformed files) are appended to
  // `problems`; the data read so far stay.
  const RankProfile& Refresh(std::vector<std::string>* problems) override;
  const RankProfile& profile() const { return profile_; }

 private:
  struct Cursor {
    uint64_t offset = 0;
    uint64_t inode = 0;
    std::string header;
  };
  // The header plus the complete lines appended since `cursor` ("" when nothing new);
  // `restarted` when the file was rewritten; `missing` when it does not exist.
  std::string ReadAppended(const std::string& path, Cursor& cursor, bool& restarted, bool& missing,
                           std::vector<std::string>* problems);
  void Trim(Series& s) const;

  std::string dir_;
  size_t max_samples_;
  Cursor step_cursor_, comm_cursor_;
  RankProfile profile_;
};

}  // namespace clusterd::diagnosis
