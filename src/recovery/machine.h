#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "recovery/command.h"
#include "recovery/event.h"
#include "recovery/job_recovery.h"

namespace clusterd::recovery {

// The result of one step of a job's recovery controller.
struct Step {
  JobRecovery next;
  std::vector<Command> commands;
};

// The per-job recovery state machine (recovery-protocol.md §6-§14), as a pure function: no I/O,
// no threads, no clock reads, no randomness. `now` is the only time it knows. The executor
// carries out `commands` in order and feeds back their outcomes (SignalWritten, WriteDone,
// TimerFired) as further events.
Step Advance(const JobRecovery& current, const Event& event, absl::Time now);

// The commands a freshly restored controller (RecoveryRecord) needs before any event: re-arm
// its timers and re-issue the store write it was waiting for. The awaited signal, if any, is
// re-sent only when the client subscribes again (see docs/compatibility-recovery.md).
std::vector<Command> ResumeCommands(const JobRecovery& restored);

// The keep-alive the stream sends every 5 s, carrying the current uuid (§5.6).
Signal KeepAlive(const JobRecovery& job);

// A cycle id in the reference's format, `<UnixNano as upper-case hex>-<32 lower-case hex>`,
// derived from the job, the time and a counter instead of random bytes so that a trace replays
// byte for byte. Opaque to clients.
std::string MakeUuid(std::string_view job_id, absl::Time now, uint64_t counter);

// The reply text of an accepted Report* (§2.3): "jobId=<id>, uuid=<uuid>, receive <what>".
std::string ReportReceivedInfo(std::string_view job_id, std::string_view uuid,
                               std::string_view what);
// The 599 text for a report still blocked when the controller resets.
std::string ChanClosedInfo(std::string_view job_id, std::string_view uuid);

}  // namespace clusterd::recovery
