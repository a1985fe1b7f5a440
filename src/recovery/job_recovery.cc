#include "recovery/job_recovery.h"

#include <array>

namespace clusterd::recovery {
namespace {

constexpr std::array<std::string_view, 23> kPhaseNames = {
    "none",           "awaitSignal",      "awaitWrite",        "waitReport",   "waitPlatStrategy",
    "flushDelay",     "raBlockWait",      "forceRelease",      "inPlaceWait",  "platResultWait",
    "resourceWait",   "rankTableWait",    "hcclDelay",         "recoverWait",  "inPlaceClearDelay",
    "listenSchedule", "restartAllDelay",  "faultRetryRunning", "scaleRunning", "scaleOutBackoff",
    "newPodWait",     "oldPodDeleteWait", "stressWait"};

constexpr std::array<std::string_view, 12> kWritePurposeNames = {
    "none",    "flushNotify", "confirmFault", "globalReset", "decideInPlace",   "recoverClear",
    "killPod", "restartAll",  "clear",        "dump",        "faultRetryPause", "faultRetryResume"};

constexpr std::array<std::string_view, 6> kTimerNames = {
    "step", "stepDeadline", "scheduleWatch", "scheduleCheck", "preExitGrace", "originRefresh"};

template <typename Enum, size_t N>
std::optional<Enum> ParseName(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (!names[i].empty() && names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view PhaseName(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }
std::optional<Phase> ParsePhase(std::string_view name) {
  return ParseName<Phase>(kPhaseNames, name);
}

std::string_view WritePurposeName(WritePurpose purpose) {
  return kWritePurposeNames[static_cast<int>(purpose)];
}
std::optional<WritePurpose> ParseWritePurpose(std::string_view name) {
  return ParseName<WritePurpose>(kWritePurposeNames, name);
}

std::string_view TimerKindName(TimerKind kind) { return kTimerNames[static_cast<int>(kind)]; }
std::optional<TimerKind> ParseTimerKind(std::string_view name) {
  return ParseName<TimerKind>(kTimerNames, name);
}

}  // namespace clusterd::recovery
