#include "recovery/event.h"

namespace clusterd::recovery {

std::string_view EventName(const Event& event) {
  static constexpr std::string_view kNames[] = {"Subscribed",
                                                "StreamClosed",
                                                "JobDeleted",
                                                "ProcessFaultReported",
                                                "StopCompleteReported",
                                                "RecoverStrategyReported",
                                                "RecoverStatusReported",
                                                "HardwareFaultsPublished",
                                                "SignalWritten",
                                                "WriteDone",
                                                "TimerFired",
                                                "JobViewChanged",
                                                "SwitchNicRequested",
                                                "SwitchNicResultReplied",
                                                "StressTestRequested",
                                                "StressTestResultReplied"};
  static_assert(std::size(kNames) == std::variant_size_v<Event>);
  return kNames[event.index()];
}

}  // namespace clusterd::recovery
