#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "recover.grpc.pb.h"
#include "server/gated_service.h"
#include "server/recovery_bridge.h"

namespace clusterd::server {

// /Recover/*: process-level recovery with TaskD/MindIO clients (recovery-protocol.md §2),
// wired to the recovery controller through a RecoveryBridge.
//
// Init and Register answer at once (§2.3). The reports (Report*, ReplySwitchNicResult,
// ReplyStressTestResult, SwitchNicTrack, StressTest) are parsed here, posted to the job's strand
// with a ticket, and answered when the controller replies to the ticket (a report blocked on a
// full mailbox is answered later, §6.5). The five server streams are StreamChannels registered
// in the bridge's RecoverySink. Bad input (unknown job, malformed ranks or extraParams, ranks
// outside the job's world size, strings over their bounds, failed §12/§13 checks) gets the
// spec's code, or a clear non-zero code, a log line and
// clusterd_recover_rejected_total{method,reason}; nothing here can wedge a job.
class RecoverService final : public ::Recover::CallbackService, private GatedService {
 public:
  using GatedService::SetAuthorizer;
  using GatedService::SetHandlerPool;
  // Codes the spec leaves open: a report whose faultRanks are not decimal integers.
  static constexpr int32_t kCodeInvalidRequest = 409;  // InvalidReqParam (§4.3)

  RecoverService(UnaryGate& gate, RecoveryBridge& bridge)
      : GatedService(gate), gate_(gate), bridge_(bridge) {}

  // Ends every Recover stream (server shutdown).
  void CloseStreams();

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
                                           const ::SwitchNics* request,
                                           ::Status* response) override;
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

 private:
  using Post = std::function<absl::Status(uint64_t ticket)>;
  // A unary call answered by the controller: gate, then `post` with a fresh ticket. A post that
  // fails (the job has no controller) answers `unregistered_code` at once.
  grpc::ServerUnaryReactor* Deferred(grpc::CallbackServerContext* ctx, absl::string_view method,
                                     const std::string& job_id, ::Status* response, Post post,
                                     auth::Principal who);
  // Deferred for a report: `event` gets the fresh ticket and goes to the job's controller.
  template <typename Event>
  grpc::ServerUnaryReactor* PostReport(grpc::CallbackServerContext* ctx, absl::string_view method,
                                       const std::string& job_id, ::Status* response, Event event,
                                       auth::Principal who);
  // A refusal by the authorizer: the call's gRPC status, counted as rejected (the caller's
  // state and the job's are untouched).
  grpc::ServerUnaryReactor* Denied(grpc::CallbackServerContext* ctx, absl::string_view method,
                                   const absl::Status& why);
  // Answers at once with a Status (after the gate).
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* ctx, absl::string_view method,
                                   ::Status* response, int32_t code, std::string info);
  // A result stream of an O&M operation: for the operator holding `permission` on the job.
  absl::Status OmResultAllowed(const grpc::ServerContextBase& ctx, absl::string_view method,
                               absl::string_view permission, const std::string& job_id);
  bool Admit(grpc::CallbackServerContext* ctx, absl::string_view method,
             grpc::ServerUnaryReactor** refused);
  // CheckRequestBounds, also counted in clusterd_recover_rejected_total{reason="field_too_long"}.
  // The caller answers the protocol's invalid-parameter code (409, or 413 for the §12/§13
  // methods) or, on a stream, the gRPC status.
  absl::Status Bounded(absl::string_view method, const google::protobuf::Message& request);
  // The result stream of an O&M operation (§12 NIC switch, §13 stress test): refused unless the
  // job is registered and runs that operation (`kind`, named `operation` in the refusal), else
  // the channel `open` returns for the job.
  template <typename Message, typename Channel>
  grpc::ServerWriteReactor<Message>* OmResultStream(
      absl::string_view method, const std::string& job_id, recovery::OmKind kind,
      absl::string_view operation,
      std::shared_ptr<Channel> (RecoverySink::*open)(const std::string&));

  UnaryGate& gate_;
  RecoveryBridge& bridge_;
};

// Counts a refused or malformed Recover request: clusterd_recover_rejected_total{method,reason}.
void CountRecoverRejected(absl::string_view method, absl::string_view reason);

}  // namespace clusterd::server
