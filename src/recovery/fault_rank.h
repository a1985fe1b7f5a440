#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::recovery {

// One faulty global rank (§5.5): type 0 on-chip memory (UCE), 1 other, 2 network (HCCL).
// On the wire both fields are decimal strings.
struct FaultRank {
  int64_t rank = 0;
  int type = 1;
  bool operator==(const FaultRank&) const = default;
};

// Types 0 and 2 (and, on the software path, anything but 1: quirk 10) are the retry class.
bool IsRetryClass(const FaultRank& fault);

// Parses a wire FaultRank. Both fields must be decimal integers: clients parse them with an
// integer parser, so anything else would be echoed into a signal they cannot read.
absl::StatusOr<FaultRank> ParseFaultRank(std::string_view rank_id, std::string_view fault_type);

// §8.4 per-rank de-duplication: one entry per rank; a type-1 entry is never replaced, a
// type-0/2 entry is replaced by a later entry for the same rank. The reference's order is
// undefined; ours is ascending rank, so signals and golden tests are stable.
std::vector<FaultRank> DedupByRank(const std::vector<FaultRank>& faults);

// The two fault caches of a cycle (§6.2, §8.4).
struct FaultCaches {
  std::vector<FaultRank> retry;   // types other than 1
  std::vector<FaultRank> normal;  // type 1 (and retry faults moved here)
  bool operator==(const FaultCaches&) const = default;

  // §8.4 merge: de-duplicate the incoming list, append type 1 to normal and everything else
  // to retry, then de-duplicate each cache. A rank can end up in both caches.
  void Merge(const std::vector<FaultRank>& incoming);
  // Moves every retry-class fault into the normal cache (types kept) and de-duplicates.
  void MoveRetryToNormal();
  bool Empty() const { return retry.empty() && normal.empty(); }
  // Retry cache then normal cache (the stop signal's faultRanks, §5.6).
  std::vector<FaultRank> All() const;
  // The retry cache holds both type 0 and type 2.
  bool RetryMixesTypes() const;
};

// Pod rank of a global rank for D NPUs per pod (§0). D < 1 is treated as 1.
int64_t PodRankOf(int64_t rank, int npus_per_pod);
// expand-to-pod(r): every rank of r's pod, as type 1.
std::vector<FaultRank> ExpandToPod(int64_t rank, int npus_per_pod);
// Distinct pod ranks of `faults`, ascending.
std::vector<int64_t> PodRanksOf(const std::vector<FaultRank>& faults, int npus_per_pod);

// The platform-annotation form (§9.6) "rank:type,rank:type". FormatRankTypeList writes the
// de-duplicated list; ParseRankTypeList skips malformed items (not exactly one ':', or parts
// that are not integers).
std::string FormatRankTypeList(const std::vector<FaultRank>& faults);
std::vector<FaultRank> ParseRankTypeList(std::string_view text);

}  // namespace clusterd::recovery
