#pragma once

#include "absl/strings/string_view.h"

namespace clusterd::auth {

// The permissions a policy rule grants (docs/security.md lists which call needs which).
inline constexpr absl::string_view kPermJobAct =
    "job:act";  // act for any job (every Recover method, subscriptions)
inline constexpr absl::string_view kPermPubFaultSend =
    "pubfault:send";  // resources: sender names (CCAE, ...)
inline constexpr absl::string_view kPermStressTest = "stresstest";
inline constexpr absl::string_view kPermNicTrackSwitch = "nictrack:switch";
inline constexpr absl::string_view kPermDataTraceWrite = "datatrace:write";  // resources: jobNsName
inline constexpr absl::string_view kPermRead =
    "read";  // job summaries, all-job fault streams, /api/v1
inline constexpr absl::string_view kPermInject = "inject";  // npu-agent's gRPC fault source
inline constexpr absl::string_view kPermAll = "*";

}  // namespace clusterd::auth
