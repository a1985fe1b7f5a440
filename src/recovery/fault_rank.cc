#include "recovery/fault_rank.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

bool IsRetryClass(const FaultRank& fault) { return fault.type != kFaultTypeNormal; }

absl::StatusOr<FaultRank> ParseFaultRank(std::string_view rank_id, std::string_view fault_type) {
  FaultRank out;
  const absl::string_view rank_text(rank_id.data(), rank_id.size());
  const absl::string_view type_text(fault_type.data(), fault_type.size());
  if (!absl::SimpleAtoi(rank_text, &out.rank) || out.rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rankId \"", rank_text, "\" is not a non-negative decimal integer"));
  }
  if (!absl::SimpleAtoi(type_text, &out.type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("faultType \"", type_text, "\" of rank ", out.rank, " is not an integer"));
  }
  return out;
}

std::vector<FaultRank> DedupByRank(const std::vector<FaultRank>& faults) {
  std::map<int64_t, int> by_rank;
  for (const FaultRank& f : faults) {
    auto [it, inserted] = by_rank.emplace(f.rank, f.type);
    if (!inserted && it->second != kFaultTypeNormal) it->second = f.type;
  }
  std::vector<FaultRank> out;
  out.reserve(by_rank.size());
  for (const auto& [rank, type] : by_rank) out.push_back({rank, type});
  return out;
}

void FaultCaches::Merge(const std::vector<FaultRank>& incoming) {
  for (const FaultRank& f : DedupByRank(incoming)) {
    (f.type == kFaultTypeNormal ? normal : retry).push_back(f);
  }
  normal = DedupByRank(normal);
  retry = DedupByRank(retry);
}

void FaultCaches::MoveRetryToNormal() {
  normal.insert(normal.end(), retry.begin(), retry.end());
  retry.clear();
  normal = DedupByRank(normal);
}

std::vector<FaultRank> FaultCaches::All() const {
  std::vector<FaultRank> out = retry;
  out.insert(out.end(), normal.begin(), normal.end());
  return out;
}

bool FaultCaches::RetryMixesTypes() const {
  bool uce = false;
  bool network = false;
  for (const FaultRank& f : retry) {
    uce |= f.type == kFaultTypeUce;
    network |= f.type == kFaultTypeNetwork;
  }
  return uce && network;
}

int64_t PodRankOf(int64_t rank, int npus_per_pod) { return rank / std::max(npus_per_pod, 1); }

std::vector<FaultRank> ExpandToPod(int64_t rank, int npus_per_pod) {
  const int d = std::max(npus_per_pod, 1);
  const int64_t first = PodRankOf(rank, d) * d;
  std::vector<FaultRank> out;
  out.reserve(d);
  for (int64_t r = first; r < first + d; ++r) out.push_back({r, kFaultTypeNormal});
  return out;
}

std::vector<int64_t> PodRanksOf(const std::vector<FaultRank>& faults, int npus_per_pod) {
  std::set<int64_t> pods;
  for (const FaultRank& f : faults) pods.insert(PodRankOf(f.rank, npus_per_pod));
  return {pods.begin(), pods.end()};
}

std::string FormatRankTypeList(const std::vector<FaultRank>& faults) {
  return absl::StrJoin(DedupByRank(faults), ",", [](std::string* out, const FaultRank& f) {
    absl::StrAppend(out, f.rank, ":", f.type);
  });
}

std::vector<FaultRank> ParseRankTypeList(std::string_view text) {
  std::vector<FaultRank> out;
  for (absl::string_view item :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    if (parts.size() != 2) continue;
    FaultRank f;
    if (!absl::SimpleAtoi(parts[0], &f.rank) || !absl::SimpleAtoi(parts[1], &f.type)) continue;
    if (f.rank < 0) continue;
    out.push_back(f);
  }
  return out;
}

}  // namespace clusterd::recovery
