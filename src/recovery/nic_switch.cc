// §12 NIC switch, and the pause / continue steps it shares with the stress test (§13).

#include "absl/strings/str_cat.h"
#include "common/sv.h"
#include "recovery/machine_run.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {

void MachineRun::Om(std::string text) {
  Emit(OmMessage{s_.om == OmKind::kStressTest ? OmKind::kStressTest : OmKind::kSwitchNic,
                 std::move(text)});
}

void MachineRun::On(const SwitchNicRequested& e) {
  if (s_.state != State::kInit) {
    return Reply(e.ticket, kCodeOmIsRunning,
                 absl::StrCat("jobId=", s_.job_id, " is recovering (state ",
                              Sv(StateName(s_.state)), "), switch nic refused"));
  }
  s_.om = OmKind::kSwitchNic;
  s_.nic = e.params;
  s_.nic_recorded = true;
  Reply(e.ticket, kCodeOk, std::string(kInfoSwitchNicDistributed));
  Raise(MachineEvent::kStartSwitchNic);
}

void MachineRun::EntryPause() {
  s_.uuid = NewUuid();
  Send(PauseSignal(s_.job_id, s_.uuid, s_.om == OmKind::kStressTest ? kStressPauseTimeout : 0));
}

void MachineRun::EntryWaitPause() { EntryWaitReport(); }

void MachineRun::OnPauseReport(const StopReport& report) {
  if (report.code == kCodeClientError) {
    Om(std::string(kOmPauseTrainFailed));
    return Raise(MachineEvent::kProcessPauseFail);
  }
  Raise(s_.om == OmKind::kStressTest ? MachineEvent::kStressTestRecvPause
                                     : MachineEvent::kSwitchNicRecvPause);
}

void MachineRun::EntryNotifySwitchNic() {
  const uint64_t id = NextId();
  Emit(PushSwitchRankList{id, s_.job_id, s_.nic});
  AwaitPush(id);
}

void MachineRun::EntryWaitSwitchNic() { EntryWaitReport(); }

void MachineRun::EntryContinue() {
  Send(ChangeStrategySignal(s_.job_id, s_.uuid, std::string(kStrategyContinue), s_.caches.normal,
                            PodRanksOf(s_.caches.normal, s_.view.npus_per_pod)));
}

void MachineRun::EntryWaitContinue() { EntryWaitReport(); }

void MachineRun::OnContinueReport(const StatusReport& report) {
  if (report.code == kCodeClientError) {
    Om(std::string(kOmContinueTrainFailed));
    return Raise(MachineEvent::kContinueTrainFail);
  }
  Raise(s_.om == OmKind::kStressTest ? MachineEvent::kStressTestRecvContinue
                                     : MachineEvent::kSwitchNicRecvContinue);
}

void MachineRun::EntryOmFinish() {
  if (s_.om == OmKind::kSwitchNic) Om(std::string(kOmSwitchNicFinish));
  Reset("OM operation finished");
}

}  // namespace clusterd::recovery
