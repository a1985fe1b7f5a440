#include "recovery/command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/canonical_json.h"
#include "common/sv.h"

namespace clusterd::recovery {
namespace {

std::string Ranks(const std::vector<int64_t>& ranks) { return absl::StrJoin(ranks, ","); }

struct Printer {
  std::string operator()(const SendSignal& c) const {
    return absl::StrCat("SendSignal#", c.id, c.await_result ? "" : "(no wait)", " ",
                        DebugString(c.signal));
  }
  std::string operator()(const PushSwitchRankList& c) const {
    return absl::StrCat("PushSwitchRankList#", c.id, " ranks=[", Ranks(c.params.ranks), "]");
  }
  std::string operator()(const PushStressTestParams& c) const {
    return absl::StrCat("PushStressTestParams#", c.id, " ranks=", c.params.size());
  }
  std::string operator()(const OmMessage& c) const {
    return absl::StrCat("OmMessage(", c.kind == OmKind::kStressTest ? "stress" : "nic", ") ",
                        c.text);
  }
  std::string operator()(const WriteResetConfig& c) const {
    return absl::StrCat("WriteResetConfig#", c.id, " ", Sv(ResetOperationName(c.op)), " ranks=[",
                        Ranks(c.ranks), "] restartFaultProcess=", c.restart_fault_process,
                        " attempts=", c.attempts);
  }
  std::string operator()(const PatchPodGroup& c) const {
    return absl::StrCat("PatchPodGroup#", c.id, " ", CanonicalJson(c.patch));
  }
  std::string operator()(const PatchPod& c) const {
    return absl::StrCat("PatchPod ", c.pod_name, " ", CanonicalJson(c.patch));
  }
  std::string operator()(const PatchNode& c) const {
    return absl::StrCat("PatchNode ", c.node, " ", CanonicalJson(c.patch));
  }
  std::string operator()(const UpdateFaultJobInfo& c) const {
    return absl::StrCat("UpdateFaultJobInfo ", c.remove ? "remove" : "record", " pods=[",
                        Ranks(c.pod_ranks), "] after ", absl::FormatDuration(c.delay));
  }
  std::string operator()(const ArmTimer& c) const {
    return absl::StrCat("ArmTimer ", Sv(TimerKindName(c.kind)), " at ",
                        absl::FormatTime(absl::RFC3339_full, c.at, absl::UTCTimeZone()));
  }
  std::string operator()(const ReplyReport& c) const {
    return absl::StrCat("ReplyReport#", c.ticket, " {", c.code, ", \"", c.info, "\"}");
  }
  std::string operator()(const ReportRetryFaults& c) const {
    return absl::StrCat("ReportRetryFaults n=", c.faults.size());
  }
  std::string operator()(const ReportNotRetryable& c) const {
    return absl::StrCat("ReportNotRetryable pods=[", Ranks(c.pod_ranks), "]");
  }
  std::string operator()(const IgnoreStressTestFaults& c) const {
    return absl::StrCat("IgnoreStressTestFaults ", c.ignore, " [", absl::StrJoin(c.nodes, ","),
                        "]");
  }
  std::string operator()(const EndStreams& c) const {
    return absl::StrCat("EndStreams keep=", c.keep_stream_id);
  }
  std::string operator()(const ForgetJob&) const { return "ForgetJob"; }
  std::string operator()(const Note& c) const {
    return absl::StrCat("Note(", c.kind, ") ", c.message);
  }
};

}  // namespace

std::string DebugString(const Command& command) { return std::visit(Printer{}, command); }

}  // namespace clusterd::recovery
