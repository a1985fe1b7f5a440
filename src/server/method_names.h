#pragma once

#include "absl/strings/string_view.h"
#include <string_view>

// Full gRPC method paths, spelled once. Package-less services keep paths without a package.
namespace clusterd::server::method {

inline constexpr absl::string_view kRecoverInit = "/Recover/Init";
inline constexpr absl::string_view kRecoverRegister = "/Recover/Register";
inline constexpr absl::string_view kRecoverSubscribeProcessManageSignal =
    "/Recover/SubscribeProcessManageSignal";
inline constexpr absl::string_view kRecoverReportStopComplete = "/Recover/ReportStopComplete";
inline constexpr absl::string_view kRecoverReportRecoverStrategy = "/Recover/ReportRecoverStrategy";
inline constexpr absl::string_view kRecoverReportRecoverStatus = "/Recover/ReportRecoverStatus";
inline constexpr absl::string_view kRecoverReportProcessFault = "/Recover/ReportProcessFault";
inline constexpr absl::string_view kRecoverSwitchNicTrack = "/Recover/SwitchNicTrack";
inline constexpr absl::string_view kRecoverSubscribeSwitchNicSignal =
    "/Recover/SubscribeSwitchNicSignal";
inline constexpr absl::string_view kRecoverSubscribeNotifySwitch = "/Recover/SubscribeNotifySwitch";
inline constexpr absl::string_view kRecoverReplySwitchNicResult = "/Recover/ReplySwitchNicResult";
inline constexpr absl::string_view kRecoverHealthCheck = "/Recover/HealthCheck";
inline constexpr absl::string_view kRecoverStressTest = "/Recover/StressTest";
inline constexpr absl::string_view kRecoverSubscribeStressTestResponse =
    "/Recover/SubscribeStressTestResponse";
inline constexpr absl::string_view kRecoverSubscribeNotifyExecStressTest =
    "/Recover/SubscribeNotifyExecStressTest";
inline constexpr absl::string_view kRecoverReplyStressTestResult = "/Recover/ReplyStressTestResult";

inline constexpr absl::string_view kConfigRegister = "/config.Config/Register";
inline constexpr absl::string_view kConfigSubscribeRankTable = "/config.Config/SubscribeRankTable";

inline constexpr absl::string_view kFaultRegister = "/fault.Fault/Register";
inline constexpr absl::string_view kFaultSubscribeFaultMsgSignal = "/fault.Fault/SubscribeFaultMsgSignal";
inline constexpr absl::string_view kFaultGetFaultMsgSignal = "/fault.Fault/GetFaultMsgSignal";

inline constexpr absl::string_view kJobRegister = "/job.Job/Register";
inline constexpr absl::string_view kJobSubscribeJobSummarySignal = "/job.Job/SubscribeJobSummarySignal";
inline constexpr absl::string_view kJobSubscribeJobSummarySignalList =
    "/job.Job/SubscribeJobSummarySignalList";

inline constexpr absl::string_view kDataTraceModify =
    "/TrainingDataTrace/ModifyTrainingDataTraceSwitch";
inline constexpr absl::string_view kDataTraceGet = "/TrainingDataTrace/GetTrainingDataTraceSwitch";
inline constexpr absl::string_view kDataTraceSubscribe = "/TrainingDataTrace/SubscribeDataTraceSwitch";

inline constexpr absl::string_view kPubFaultSend = "/PubFault/SendPublicFault";

}  // namespace clusterd::server::method
