#include "server/recover_service.h"

#include "absl/strings/str_cat.h"
#include "server/method_names.h"

namespace clusterd::server {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

ServerUnaryReactor* RecoverService::Init(CallbackServerContext* ctx, const ::ClientInfo*,
                                         ::Status*) {
  return Unary(ctx, method::kRecoverInit, [] { return NotImplementedYet(method::kRecoverInit); });
}

ServerUnaryReactor* RecoverService::Register(CallbackServerContext* ctx, const ::ClientInfo*,
                                             ::Status*) {
  return Unary(ctx, method::kRecoverRegister,
               [] { return NotImplementedYet(method::kRecoverRegister); });
}

grpc::ServerWriteReactor<::ProcessManageSignal>* RecoverService::SubscribeProcessManageSignal(
    CallbackServerContext*, const ::ClientInfo*) {
  return RefuseStream<::ProcessManageSignal>(
      method::kRecoverSubscribeProcessManageSignal,
      NotImplementedYet(method::kRecoverSubscribeProcessManageSignal));
}

ServerUnaryReactor* RecoverService::ReportStopComplete(CallbackServerContext* ctx,
                                                       const ::StopCompleteRequest*, ::Status*) {
  return Unary(ctx, method::kRecoverReportStopComplete,
               [] { return NotImplementedYet(method::kRecoverReportStopComplete); });
}

ServerUnaryReactor* RecoverService::ReportRecoverStrategy(CallbackServerContext* ctx,
                                                          const ::RecoverStrategyRequest*,
                                                          ::Status*) {
  return Unary(ctx, method::kRecoverReportRecoverStrategy,
               [] { return NotImplementedYet(method::kRecoverReportRecoverStrategy); });
}

ServerUnaryReactor* RecoverService::ReportRecoverStatus(CallbackServerContext* ctx,
                                                        const ::RecoverStatusRequest*, ::Status*) {
  return Unary(ctx, method::kRecoverReportRecoverStatus,
               [] { return NotImplementedYet(method::kRecoverReportRecoverStatus); });
}

ServerUnaryReactor* RecoverService::ReportProcessFault(CallbackServerContext* ctx,
                                                       const ::ProcessFaultRequest*, ::Status*) {
  return Unary(ctx, method::kRecoverReportProcessFault,
               [] { return NotImplementedYet(method::kRecoverReportProcessFault); });
}

ServerUnaryReactor* RecoverService::SwitchNicTrack(CallbackServerContext* ctx, const ::SwitchNics*,
                                                   ::Status*) {
  return Unary(ctx, method::kRecoverSwitchNicTrack,
               [] { return NotImplementedYet(method::kRecoverSwitchNicTrack); });
}

grpc::ServerWriteReactor<::SwitchNicResponse>* RecoverService::SubscribeSwitchNicSignal(
    CallbackServerContext*, const ::SwitchNicRequest*) {
  return RefuseStream<::SwitchNicResponse>(
      method::kRecoverSubscribeSwitchNicSignal,
      NotImplementedYet(method::kRecoverSubscribeSwitchNicSignal));
}

grpc::ServerWriteReactor<::SwitchRankList>* RecoverService::SubscribeNotifySwitch(
    CallbackServerContext*, const ::ClientInfo*) {
  return RefuseStream<::SwitchRankList>(method::kRecoverSubscribeNotifySwitch,
                                        NotImplementedYet(method::kRecoverSubscribeNotifySwitch));
}

ServerUnaryReactor* RecoverService::ReplySwitchNicResult(CallbackServerContext* ctx,
                                                         const ::SwitchResult*, ::Status*) {
  return Unary(ctx, method::kRecoverReplySwitchNicResult,
               [] { return NotImplementedYet(method::kRecoverReplySwitchNicResult); });
}

ServerUnaryReactor* RecoverService::HealthCheck(CallbackServerContext* ctx,
                                                const ::ClientInfo* request, ::Status* response) {
  return Unary(ctx, method::kRecoverHealthCheck, [&] {
    response->set_code(0);
    // "HeathCheck" is the spelling real clients receive.
    response->set_info(absl::StrCat("jobId=", request->jobid(), ", receive HeathCheck"));
    return grpc::Status::OK;
  });
}

ServerUnaryReactor* RecoverService::StressTest(CallbackServerContext* ctx, const ::StressTestParam*,
                                               ::Status*) {
  return Unary(ctx, method::kRecoverStressTest,
               [] { return NotImplementedYet(method::kRecoverStressTest); });
}

grpc::ServerWriteReactor<::StressTestResponse>* RecoverService::SubscribeStressTestResponse(
    CallbackServerContext*, const ::StressTestRequest*) {
  return RefuseStream<::StressTestResponse>(
      method::kRecoverSubscribeStressTestResponse,
      NotImplementedYet(method::kRecoverSubscribeStressTestResponse));
}

grpc::ServerWriteReactor<::StressTestRankParams>* RecoverService::SubscribeNotifyExecStressTest(
    CallbackServerContext*, const ::ClientInfo*) {
  return RefuseStream<::StressTestRankParams>(
      method::kRecoverSubscribeNotifyExecStressTest,
      NotImplementedYet(method::kRecoverSubscribeNotifyExecStressTest));
}

ServerUnaryReactor* RecoverService::ReplyStressTestResult(CallbackServerContext* ctx,
                                                          const ::StressTestResult*, ::Status*) {
  return Unary(ctx, method::kRecoverReplyStressTestResult,
               [] { return NotImplementedYet(method::kRecoverReplyStressTestResult); });
}

}  // namespace clusterd::server
