#pragma once

#include "recover.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /Recover/*: process-level recovery with TaskD/MindIO clients (recovery-protocol.md §2).
// HealthCheck is served here; the recovery methods are wired to the recovery controller.
class RecoverService final : public ::Recover::CallbackService, private GatedService {
 public:
  explicit RecoverService(UnaryGate& gate) : GatedService(gate) {}

  grpc::ServerUnaryReactor* Init(grpc::CallbackServerContext* ctx, const ::ClientInfo* request,
                                 ::Status* response) override;
  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx, const ::ClientInfo* request,
                                     ::Status* response) override;
  grpc::ServerWriteReactor<::ProcessManageSignal>* SubscribeProcessManageSignal(
      grpc::CallbackServerContext* ctx, const ::ClientInfo* request) override;
  grpc::ServerUnaryReactor* ReportStopComplete(grpc::CallbackServerContext* ctx,
                                               const ::StopCompleteRequest* request,
                                               ::Status* response) override;
  grpc::ServerUnaryReactor* ReportRecoverStrategy(grpc::CallbackServerContext* ctx,
                                                  const ::RecoverStrategyRequest* request,
                                                  ::Status* response) override;
  grpc::ServerUnaryReactor* ReportRecoverStatus(grpc::CallbackServerContext* ctx,
                                                const ::RecoverStatusRequest* request,
                                                ::Status* response) override;
  grpc::ServerUnaryReactor* ReportProcessFault(grpc::CallbackServerContext* ctx,
                                               const ::ProcessFaultRequest* request,
                                               ::Status* response) override;
  grpc::ServerUnaryReactor* SwitchNicTrack(grpc::CallbackServerContext* ctx,
                                           const ::SwitchNics* request, ::Status* response) override;
  grpc::ServerWriteReactor<::SwitchNicResponse>* SubscribeSwitchNicSignal(
      grpc::CallbackServerContext* ctx, const ::SwitchNicRequest* request) override;
  grpc::ServerWriteReactor<::SwitchRankList>* SubscribeNotifySwitch(
      grpc::CallbackServerContext* ctx, const ::ClientInfo* request) override;
  grpc::ServerUnaryReactor* ReplySwitchNicResult(grpc::CallbackServerContext* ctx,
                                                 const ::SwitchResult* request,
                                                 ::Status* response) override;
  grpc::ServerUnaryReactor* HealthCheck(grpc::CallbackServerContext* ctx,
                                        const ::ClientInfo* request, ::Status* response) override;
  grpc::ServerUnaryReactor* StressTest(grpc::CallbackServerContext* ctx,
                                       const ::StressTestParam* request,
                                       ::Status* response) override;
  grpc::ServerWriteReactor<::StressTestResponse>* SubscribeStressTestResponse(
      grpc::CallbackServerContext* ctx, const ::StressTestRequest* request) override;
  grpc::ServerWriteReactor<::StressTestRankParams>* SubscribeNotifyExecStressTest(
      grpc::CallbackServerContext* ctx, const ::ClientInfo* request) override;
  grpc::ServerUnaryReactor* ReplyStressTestResult(grpc::CallbackServerContext* ctx,
                                                  const ::StressTestResult* request,
                                                  ::Status* response) override;
};

}  // namespace clusterd::server
