// §13 stress test.

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/canonical_json.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

std::vector<std::string> NodesOf(const StressParams& params) {
  std::vector<std::string> nodes;
  for (const auto& [node, _] : params) nodes.push_back(node);
  return nodes;
}

// The result map as Go's encoding/json renders the StressTestResult proto (omitempty fields).
std::string ResultJson(const StressResults& results) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [rank, ops] : results) {
    nlohmann::json rank_result = nlohmann::json::object();
    for (const auto& [op, r] : ops) {
      nlohmann::json entry = nlohmann::json::object();
      if (!r.code.empty()) entry["code"] = r.code;
      if (!r.result.empty()) entry["result"] = r.result;
      rank_result[op] = entry;
    }
    out[std::to_string(rank)]["rankResult"] = rank_result;
  }
  return CanonicalJson(out);
}

}  // namespace

void MachineRun::On(const StressTestRequested& e) {
  if (s_.state != State::kInit) {
    return Reply(e.ticket, kCodeOmIsRunning,
                 absl::StrCat("jobId=", s_.job_id, " is recovering (state ",
                              Sv(StateName(s_.state)), "), stress test refused"));
  }
  s_.om = OmKind::kStressTest;
  s_.stress = e.params;
  Reply(e.ticket, kCodeOk, std::string(kInfoStressTestDistributed));
  Raise(MachineEvent::kStartStressTest);
}

void MachineRun::EntryNotifyStressTest() {
  std::map<int64_t, std::vector<int64_t>> by_rank;
  for (const auto& [node, ranks] : s_.stress) {
    for (const auto& [rank, ops] : ranks) by_rank[rank] = ops;
  }
  const uint64_t id = NextId();
  Emit(PushStressTestParams{id, s_.job_id, std::move(by_rank)});
  AwaitPush(id);
}

void MachineRun::EntryWaitStressTest() {
  Emit(IgnoreStressTestFaults{NodesOf(s_.stress), true});
  s_.uuid = NewUuid();
  SendNoWait(StartAgentSignal(s_.job_id, s_.uuid, /*pause=*/true));
  WriteResetNoWait(ResetOperation::kNotifyFaultFlushing, {}, false);
  s_.stress_fault_reported = false;
  WaitIn(Phase::kStressWait, kReportWait);
  TryConsumeReports();
}

void MachineRun::OnStressStatus(const StatusReport& report) {
  // 406 means a fault happened during the test. Quirk 7: the reference ignores other codes and
  // may wait forever; every code counts as the fault report here.
  Om(std::string(kOmStressTestRecvFault));
  if (report.code != kCodeUnRecoverableRetryError) {
    AddNote("stress_status", absl::StrCat("RecoverStatus ", report.code,
                                          " during a stress test treated as a fault"));
  }
  s_.stress_fault_reported = true;
  WaitIn(Phase::kStressWait, kReportWait);
  TryConsumeReports();
}

void MachineRun::OnStressResult(const StressReport& report) {
  if (!s_.stress_fault_reported) WriteResetNoWait(ResetOperation::kClear, {}, false);
  s_.uuid = NewUuid();
  SendNoWait(StartAgentSignal(s_.job_id, s_.uuid, /*pause=*/false));
  Emit(IgnoreStressTestFaults{NodesOf(s_.stress), false});
  std::set<std::string> isolated;
  std::vector<FaultRank> faults;
  for (const auto& [rank, ops] : report.results) {
    for (const auto& [op, result] : ops) {
      if (result.code == kStressResultFaultFound) {
        for (const auto& [node, ranks] : s_.stress) {
          if (ranks.count(rank) > 0) isolated.insert(node);
        }
      } else if (result.code == kStressResultTimeout || result.code == kStressResultVoltageFailed) {
        faults.push_back({rank, kFaultTypeNormal});
      }
    }
  }
  faults = DedupByRank(faults);
  if (isolated.empty() && faults.empty() && !s_.stress_fault_reported) {
    Om(absl::StrCat(Sv(kOmStressTestFinishPrefix), ResultJson(report.results)));
    return Raise(MachineEvent::kReceiveReport);
  }
  if (!isolated.empty()) {
    Om(absl::StrCat(Sv(kOmStressTestIsolatePrefix), "[", absl::StrJoin(isolated, " "), "]"));
  }
  if (!faults.empty()) {
    Om(absl::StrCat(
        Sv(kOmStressTestTimeoutFaultPrefix), "[",
        absl::StrJoin(faults, " ",
                      [](std::string* out, const FaultRank& f) { absl::StrAppend(out, f.rank); }),
        "]"));
  }
  s_.stress_isolated.assign(isolated.begin(), isolated.end());
  MergeFaults(faults);
  Raise(MachineEvent::kStressTestFail);
}

void MachineRun::EntryStressFailStop() {
  std::vector<FaultRank> faults;
  for (const std::string& node : s_.stress_isolated) {
    const auto it = s_.stress.find(node);
    if (it != s_.stress.end()) {
      for (const auto& [rank, _] : it->second) faults.push_back({rank, kFaultTypeNormal});
    }
    Emit(PatchNode{node, NodeUnhealthyPatch(), 3});
  }
  MergeFaults(faults);
  EntryStop();
}

}  // namespace clusterd::recovery
