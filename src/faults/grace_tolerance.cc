#include "faults/grace_tolerance.h"

#include <algorithm>

#include "faults/health.h"

namespace clusterd::faults {

GraceJobTracker::GraceJobTracker(GraceTolerance config, bool reset_without_persistence)
    : config_(config), reset_without_persistence_(reset_without_persistence) {}

void GraceJobTracker::Fail(Rank& rank, GraceCommands& out) {
  rank.stage = Stage::kFailed;
  rank.policy = std::string(model::kPolicyIsolate);
  out.write_reset_config = true;
  out.isolate.push_back(rank.view.npu_id);
}

GraceCommands GraceJobTracker::Advance(const std::vector<GraceNpuView>& npus,
                                       const std::vector<GraceResetOutcome>& outcomes,
                                       int64_t now_ms) {
  GraceCommands out;
  // New faults. A fault on an NPU whose earlier episode ended starts a new RankList: the
  // recovered and failed entries of the previous episode are dropped.
  for (const GraceNpuView& view : npus) {
    const std::string_view policy = ResetPolicyFor(view.level);
    if (policy == model::kPolicyEmpty) continue;
    auto it = std::find_if(ranks_.begin(), ranks_.end(),
                           [&](const Rank& r) { return r.view.npu_id == view.npu_id; });
    if (it != ranks_.end() && it->stage != Stage::kRecovered) continue;
    if (std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& r) {
          return r.stage == Stage::kRecovered || r.stage == Stage::kFailed;
        })) {
      ranks_.clear();
      it = ranks_.end();
    }
    if (it != ranks_.end()) ranks_.erase(it);
    Rank rank;
    rank.view = view;
    rank.since_ms = now_ms;
    rank.policy = rank.initial_policy = std::string(policy);
    ranks_.push_back(std::move(rank));
    out.write_reset_config = true;
  }

  for (Rank& rank : ranks_) {
    auto view = std::find_if(npus.begin(), npus.end(),
                             [&](const GraceNpuView& v) { return v.npu_id == rank.view.npu_id; });
    const bool fault_gone =
        view == npus.end() || ResetPolicyFor(view->level) == model::kPolicyEmpty;
    if (!fault_gone) {
      rank.view.error_codes = view->error_codes;
      rank.view.error_code_hex = view->error_code_hex;
      rank.view.fault_since_ms = view->fault_since_ms;
      rank.view.ring_idle = view->ring_idle;
      rank.view.level = view->level;
    }
    auto outcome = std::find_if(outcomes.begin(), outcomes.end(), [&](const GraceResetOutcome& o) {
      return o.npu_id == rank.view.npu_id;
    });
    // A stage change may let the next stage act at once (read time over -> reset now).
    while (
        StepRank(rank, fault_gone, outcome == outcomes.end() ? nullptr : &*outcome, now_ms, out)) {
    }
  }
  return out;
}

bool GraceJobTracker::StepRank(Rank& rank, bool fault_gone, const GraceResetOutcome* outcome,
                               int64_t now_ms, GraceCommands& out) {
  const Stage before = rank.stage;
  switch (rank.stage) {
    case Stage::kWaitRead:
      if (now_ms - rank.since_ms < config_.wait_process_read_cm_s * 1000) break;
      rank.since_ms = now_ms;
      if (rank.policy == model::kPolicyIsolate) {
        Fail(rank, out);
      } else if (rank.policy == model::kPolicyRestartRequest ||
                 rank.policy == model::kPolicyRestart) {
        rank.stage = Stage::kSelfHeal;
      } else {
        rank.stage = Stage::kWaitReset;
      }
      break;
    case Stage::kSelfHeal:
      if (fault_gone) {
        rank.stage = Stage::kRecovered;
        out.write_reset_config = true;
      } else if (now_ms - rank.since_ms >= config_.wait_fault_self_healing_s * 1000) {
        rank.policy = std::string(model::kPolicyReset);  // did not heal: reset the chip
        rank.stage = Stage::kWaitReset;
        rank.since_ms = now_ms;
        out.write_reset_config = true;
      }
      break;
    case Stage::kWaitReset: {
      if (fault_gone) {
        rank.stage = Stage::kRecovered;
        out.write_reset_config = true;
        break;
      }
      const bool persisted =
          reset_without_persistence_ || now_ms - rank.view.fault_since_ms > kPersistBeforeResetMs;
      if (persisted && rank.view.ring_idle) {
        rank.stage = Stage::kResetting;
        rank.since_ms = now_ms;
        out.hot_reset.push_back(rank.view.npu_id);
      }
      break;
    }
    case Stage::kResetting:
      if (outcome != nullptr) {
        if (outcome->success) {
          rank.stage = Stage::kRecovered;
          out.write_reset_config = true;
        } else {
          Fail(rank, out);
        }
      } else if (now_ms - rank.since_ms > config_.wait_device_reset_s * 1000) {
        Fail(rank, out);
      }
      break;
    case Stage::kRecovered:
    case Stage::kFailed:
      break;
  }
  return rank.stage != before && rank.stage != Stage::kRecovered && rank.stage != Stage::kFailed;
}

std::vector<model::TaskDevInfo> GraceJobTracker::RankList() const {
  std::vector<model::TaskDevInfo> list;
  for (const Rank& rank : ranks_) {
    model::TaskDevInfo d;
    d.rank_id = rank.view.rank_id;
    d.logic_id = rank.view.npu_id;
    d.status = std::string(rank.stage == Stage::kRecovered ? model::kRankStatusRecovered
                           : rank.stage == Stage::kFailed  ? model::kRankStatusFailed
                                                           : model::kRankStatusUnrecovered);
    d.policy = rank.policy;
    d.initial_policy = rank.initial_policy;
    d.error_code = rank.view.error_codes;
    d.error_code_hex = rank.view.error_code_hex;
    list.push_back(std::move(d));
  }
  std::sort(list.begin(), list.end(), [](const model::TaskDevInfo& a, const model::TaskDevInfo& b) {
    return a.rank_id < b.rank_id;
  });
  return list;
}

std::optional<int64_t> GraceJobTracker::NextDeadlineMs() const {
  std::optional<int64_t> best;
  auto consider = [&best](int64_t t) {
    if (!best.has_value() || t < *best) best = t;
  };
  for (const Rank& rank : ranks_) {
    switch (rank.stage) {
      case Stage::kWaitRead:
        consider(rank.since_ms + config_.wait_process_read_cm_s * 1000);
        break;
      case Stage::kSelfHeal:
        consider(rank.since_ms + config_.wait_fault_self_healing_s * 1000);
        break;
      case Stage::kWaitReset:
        if (!reset_without_persistence_) {
          consider(rank.view.fault_since_ms + kPersistBeforeResetMs + 1);
        }
        break;
      case Stage::kResetting:
        consider(rank.since_ms + config_.wait_device_reset_s * 1000 + 1);
        break;
      default:
        break;
    }
  }
  return best;
}

std::vector<int> ResetRing(int npu_id, int num_npus, int ring_size) {
  ring_size = std::max(1, ring_size);
  const int first = (npu_id / ring_size) * ring_size;
  std::vector<int> ring;
  for (int i = first; i < std::min(first + ring_size, num_npus); ++i) ring.push_back(i);
  return ring;
}

}  // namespace clusterd::faults
