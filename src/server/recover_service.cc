#include "server/recover_service.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "common/log.h"
#include "common/metrics.h"
#include "recovery/om_request.h"
#include "recovery/vocabulary.h"
#include "server/method_names.h"
#include "server/recover_convert.h"
#include "server/recover_stream.h"

namespace clusterd::server {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

namespace {

constexpr char kRecoverServiceLog[] = "recover-service";

bool IsSuccessCode(int32_t code) {
  return code == recovery::kCodeOk || code == recovery::kCodeSuccess;
}

std::string NotRegistered(const std::string& job_id) {
  // "registed" is the reference's spelling (§2.3).
  return absl::StrCat("jobId=", job_id, " not registed");
}

// A unary call answered later, by the controller's Reply(ticket, ...) (or at once when the post
// fails). The ticket is the only link: whoever takes it out of the sink finishes the call.
class DeferredReply final : public ServerUnaryReactor {
 public:
  DeferredReply(absl::string_view method, ::Status* response, RecoverySink& sink,
                auth::Principal who, std::string peer, std::string job_id)
      : method_(method),
        response_(response),
        sink_(sink),
        who_(std::move(who)),
        peer_(std::move(peer)),
        job_id_(std::move(job_id)) {}

  void Bind(uint64_t ticket) { ticket_ = ticket; }

  void Answer(int32_t code, const std::string& info) {
    response_->set_code(code);
    response_->set_info(info);
    auth::Audit(method_, who_, peer_, job_id_, IsSuccessCode(code) ? "ok" : "refused",
                absl::StrCat("code=", code));
    Finish(grpc::Status::OK);
  }

  void OnCancel() override {
    if (sink_.CancelTicket(ticket_)) {
      cancelled_ = true;
      CountRecoverRejected(method_, "client_gone");
      Finish(grpc::Status::CANCELLED);
    }
  }

  void OnDone() override {
    RecordRpc(method_, cancelled_ ? grpc::StatusCode::CANCELLED : grpc::StatusCode::OK);
    delete this;
  }

 private:
  absl::string_view method_;
  ::Status* response_;
  RecoverySink& sink_;
  const auth::Principal who_;
  const std::string peer_;
  const std::string job_id_;
  uint64_t ticket_ = 0;
  bool cancelled_ = false;
};

// A refusal in the protocol's own terms: Status{code, info} with gRPC OK.
grpc::Status Refuse(::Status* response, int32_t code, const absl::Status& why) {
  response->set_code(code);
  response->set_info(std::string(why.message()));
  return grpc::Status::OK;
}

absl::string_view FaultRankRejection(const absl::Status& error) {
  switch (error.code()) {
    case absl::StatusCode::kResourceExhausted:
      return "too_many_fault_ranks";
    case absl::StatusCode::kOutOfRange:
      return "rank_outside_world";
    default:
      return "malformed_fault_rank";
  }
}

grpc::Status StreamRefusal(const std::string& text) {
  return grpc::Status(grpc::StatusCode::UNKNOWN, text);
}

}  // namespace

template <typename Event>
grpc::ServerUnaryReactor* RecoverService::PostReport(grpc::CallbackServerContext* ctx,
                                                     absl::string_view method,
                                                     const std::string& job_id, ::Status* response,
                                                     Event event, auth::Principal who) {
  return Deferred(
      ctx, method, job_id, response,
      [this, job_id, event = std::move(event)](uint64_t ticket) mutable {
        event.ticket = ticket;
        return bridge_.executor().Post(job_id, std::move(event));
      },
      std::move(who));
}

ServerUnaryReactor* RecoverService::Denied(CallbackServerContext* ctx, absl::string_view method,
                                           const absl::Status& why) {
  CountRecoverRejected(method, absl::IsUnauthenticated(why) ? "unauthenticated" : "not_permitted");
  RecordRpc(method, static_cast<grpc::StatusCode>(why.code()));
  return FinishUnary(ctx, ToGrpcStatus(why));
}

template <typename Message, typename Channel>
grpc::ServerWriteReactor<Message>* RecoverService::OmResultStream(
    absl::string_view method, const std::string& job_id, recovery::OmKind kind,
    absl::string_view operation,
    std::shared_ptr<Channel> (RecoverySink::*open)(const std::string&)) {
  std::optional<recovery::JobRecovery> snap = bridge_.executor().Snapshot(job_id);
  if (!snap.has_value()) {
    CountRecoverRejected(method, "unregistered");
    return RefuseStream<Message>(method, StreamRefusal(NotRegistered(job_id)));
  }
  if (snap->om != kind) {
    CountRecoverRejected(method, "no_operation");
    return RefuseStream<Message>(
        method, StreamRefusal(absl::StrCat("jobId=", job_id, " has no ", operation, " operation")));
  }
  RecordRpc(method, grpc::StatusCode::OK);
  return new ChannelStream<Message>((bridge_.sink().*open)(job_id), nullptr);
}

void CountRecoverRejected(absl::string_view method, absl::string_view reason) {
  MetricsRegistry::Default()
      .GetCounter("clusterd_recover_rejected_total",
                  "Recover requests refused or answered with an error code, by method and reason.",
                  {{"method", std::string(method)}, {"reason", std::string(reason)}})
      .Increment();
}

void RecoverService::CloseStreams() { bridge_.sink().CloseAll(); }

absl::Status RecoverService::OmResultAllowed(const grpc::ServerContextBase& ctx,
                                             absl::string_view method, absl::string_view permission,
                                             const std::string& job_id) {
  absl::Status s = Permit(ctx, method, permission, job_id);
  if (!s.ok()) CountRecoverRejected(method, "not_permitted");
  return s;
}

bool RecoverService::Admit(CallbackServerContext* ctx, absl::string_view method,
                           ServerUnaryReactor** refused) {
  if (absl::Status admitted = gate_.Admit(method, ctx->peer()); !admitted.ok()) {
    RecordRpc(method, grpc::StatusCode::UNKNOWN);
    CountRecoverRejected(method, "qps");
    *refused = FinishUnary(ctx, ToGrpcStatus(admitted));
    return false;
  }
  return true;
}

absl::Status RecoverService::Bounded(absl::string_view method,
                                     const google::protobuf::Message& request) {
  absl::Status s = CheckRequestBounds(method, request);
  if (!s.ok()) {
    CountRecoverRejected(method,
                         absl::IsResourceExhausted(s) ? "message_too_large" : "field_too_long");
  }
  return s;
}

ServerUnaryReactor* RecoverService::Answer(CallbackServerContext* ctx, absl::string_view method,
                                           ::Status* response, int32_t code, std::string info) {
  response->set_code(code);
  response->set_info(std::move(info));
  RecordRpc(method, grpc::StatusCode::OK);
  return FinishUnary(ctx, grpc::Status::OK);
}

ServerUnaryReactor* RecoverService::Deferred(CallbackServerContext* ctx, absl::string_view method,
                                             const std::string& job_id, ::Status* response,
                                             Post post, auth::Principal who) {
  RecoverySink& sink = bridge_.sink();
  auto* reply = new DeferredReply(method, response, sink, std::move(who), ctx->peer(), job_id);
  const uint64_t ticket =
      sink.AddTicket([reply](int32_t code, const std::string& info) { reply->Answer(code, info); });
  reply->Bind(ticket);
  if (absl::Status posted = post(ticket); !posted.ok()) {
    if (sink.CancelTicket(ticket)) {
      CountRecoverRejected(method, "unregistered");
      LogInfo(kRecoverServiceLog, "report for a job without controller",
              {{"method", method}, {"job", job_id}});
      reply->Answer(recovery::kCodeUnRegistry, NotRegistered(job_id));
    }
  }
  return reply;
}

// ---- Init / Register ----

ServerUnaryReactor* RecoverService::Init(CallbackServerContext* ctx, const ::ClientInfo* request,
                                         ::Status* response) {
  return BlockingUnary(ctx, method::kRecoverInit, [this, ctx, request, response] {
    if (absl::Status s = Bounded(method::kRecoverInit, *request); !s.ok()) {
      return Refuse(response, kCodeInvalidRequest, s);
    }
    auth::Principal who;
    if (absl::Status s = ActForJob(*ctx, method::kRecoverInit, request->jobid(), &who); !s.ok()) {
      CountRecoverRejected(method::kRecoverInit, "not_permitted");
      return ToGrpcStatus(s);
    }
    RecoveryBridge::Answer a = bridge_.Init(request->jobid());
    AuditCall(*ctx, method::kRecoverInit, who, request->jobid(), a.code == 0 ? "ok" : "refused",
              absl::StrCat("code=", a.code));
    if (a.code != 0) {
      CountRecoverRejected(method::kRecoverInit,
                           a.code == recovery::kCodeProcessRecoverEnableOff ? "recovery_off"
                           : a.code == recovery::kCodeInvalidReqParam       ? "invalid_job_id"
                                                                            : "pod_group");
      LogInfo(kRecoverServiceLog, "Init refused",
              {{"job", request->jobid()}, {"code", a.code}, {"info", a.info}});
    }
    response->set_code(a.code);
    response->set_info(a.info);
    return grpc::Status::OK;
  });
}

ServerUnaryReactor* RecoverService::Register(CallbackServerContext* ctx,
                                             const ::ClientInfo* request, ::Status* response) {
  return BlockingUnary(ctx, method::kRecoverRegister, [this, ctx, request, response] {
    if (absl::Status s = Bounded(method::kRecoverRegister, *request); !s.ok()) {
      return Refuse(response, kCodeInvalidRequest, s);
    }
    auth::Principal who;
    if (absl::Status s = ActForJob(*ctx, method::kRecoverRegister, request->jobid(), &who);
        !s.ok()) {
      CountRecoverRejected(method::kRecoverRegister, "not_permitted");
      return ToGrpcStatus(s);
    }
    RecoveryBridge::Answer a = bridge_.Register(request->jobid());
    AuditCall(*ctx, method::kRecoverRegister, who, request->jobid(), a.code == 0 ? "ok" : "refused",
              absl::StrCat("code=", a.code));
    if (a.code != 0) {
      const char* reason = a.code == recovery::kCodeUnInit              ? "not_inited"
                           : a.code == recovery::kCodeJobNotExist       ? "unknown_job"
                           : a.code == recovery::kCodeOutOfMaxServeJobs ? "too_many_jobs"
                           : a.code == recovery::kCodeInvalidReqParam   ? "invalid_job_id"
                                                                        : "pod_group";
      CountRecoverRejected(method::kRecoverRegister, reason);
      LogInfo(kRecoverServiceLog, "Register refused",
              {{"job", request->jobid()}, {"code", a.code}, {"info", a.info}});
    }
    response->set_code(a.code);
    response->set_info(a.info);
    return grpc::Status::OK;
  });
}

// ---- the signal stream ----

grpc::ServerWriteReactor<::ProcessManageSignal>* RecoverService::SubscribeProcessManageSignal(
    CallbackServerContext* ctx, const ::ClientInfo* request) {
  const absl::string_view method = method::kRecoverSubscribeProcessManageSignal;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return RefuseStream<::ProcessManageSignal>(method, ToGrpcStatus(s));
  }
  const std::string job_id = request->jobid();
  // A subscription resets the job's controller (§2.3): only the job's own pods may open one.
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    CountRecoverRejected(method, "not_permitted");
    return RefuseStream<::ProcessManageSignal>(method, ToGrpcStatus(s));
  }
  if (!bridge_.executor().HasJob(job_id)) {
    CountRecoverRejected(method, "unregistered");
    return RefuseStream<::ProcessManageSignal>(method, StreamRefusal(NotRegistered(job_id)));
  }
  RecoverySink::OpenedStream opened = bridge_.sink().OpenSignalStream(job_id);
  RecoveryBridge& bridge = bridge_;
  const uint64_t stream_id = opened.stream_id;
  auto* reactor =
      new ChannelStream<::ProcessManageSignal>(opened.channel, [&bridge, job_id, stream_id](bool) {
        // Still registered: the client (or the transport) ended it, not a controller reset.
        if (bridge.sink().SignalStreamDone(job_id, stream_id)) {
          LogInfo(kRecoverServiceLog, "signal stream closed by the client",
                  {{"job", job_id}, {"stream", stream_id}});
          (void)bridge.executor().Post(job_id, recovery::StreamClosed{stream_id});
        }
      });
  if (absl::Status s = bridge_.executor().Post(job_id, recovery::Subscribed{stream_id}); !s.ok()) {
    // The job went away in between.
    bridge_.sink().SignalStreamDone(job_id, stream_id);
    opened.channel->Close(StreamRefusal(NotRegistered(job_id)));
    CountRecoverRejected(method, "unregistered");
    RecordRpc(method, grpc::StatusCode::UNKNOWN);
    return reactor;
  }
  LogInfo(kRecoverServiceLog, "signal stream opened",
          {{"job", job_id}, {"stream", stream_id}, {"role", request->role()}});
  AuditCall(*ctx, method, who, job_id, "ok", absl::StrCat("stream=", stream_id));
  bridge_.RepostFaults(job_id);
  RecordRpc(method, grpc::StatusCode::OK);
  return reactor;
}

// ---- reports ----

ServerUnaryReactor* RecoverService::ReportStopComplete(CallbackServerContext* ctx,
                                                       const ::StopCompleteRequest* request,
                                                       ::Status* response) {
  const absl::string_view method = method::kRecoverReportStopComplete;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, kCodeInvalidRequest, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  // §2.3 / quirk 18: a missing status counts as 0 (the machine decides).
  std::optional<int32_t> code;
  if (request->has_status()) code = request->status().code();
  return PostReport(ctx, method, job_id, response, recovery::StopCompleteReported{code},
                    std::move(who));
}

ServerUnaryReactor* RecoverService::ReportRecoverStrategy(CallbackServerContext* ctx,
                                                          const ::RecoverStrategyRequest* request,
                                                          ::Status* response) {
  const absl::string_view method = method::kRecoverReportRecoverStrategy;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, kCodeInvalidRequest, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  std::vector<std::string> strategies(request->strategies().begin(), request->strategies().end());
  return PostReport(ctx, method, job_id, response,
                    recovery::RecoverStrategyReported{std::move(strategies)}, std::move(who));
}

ServerUnaryReactor* RecoverService::ReportRecoverStatus(CallbackServerContext* ctx,
                                                        const ::RecoverStatusRequest* request,
                                                        ::Status* response) {
  const absl::string_view method = method::kRecoverReportRecoverStatus;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, kCodeInvalidRequest, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  recovery::RecoverStatusReported report;
  if (request->has_status()) report.code = request->status().code();
  report.strategy = request->strategy();
  int dropped = 0;
  report.isolate_rank_ids = ParseIsolateRanks(request->isolaterankids(), &dropped);
  if (dropped > 0) {
    CountRecoverRejected(method, "malformed_isolate_rank");
    LogWarn(kRecoverServiceLog, "isolateRankIds entries that are not ranks were dropped",
            {{"job", job_id}, {"dropped", dropped}});
  }
  return PostReport(ctx, method, job_id, response, std::move(report), std::move(who));
}

ServerUnaryReactor* RecoverService::ReportProcessFault(CallbackServerContext* ctx,
                                                       const ::ProcessFaultRequest* request,
                                                       ::Status* response) {
  const absl::string_view method = method::kRecoverReportProcessFault;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, kCodeInvalidRequest, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  if (!bridge_.executor().HasJob(job_id)) {
    CountRecoverRejected(method, "unregistered");
    return Answer(ctx, method, response, recovery::kCodeUnRegistry, NotRegistered(job_id));
  }
  // Ranks the job does not have are refused here: the controller would put every one of them on
  // the stream and note each pod it cannot find.
  absl::StatusOr<std::vector<recovery::FaultRank>> faults =
      ParseFaultRanks(request->faultranks(), bridge_.WorldSize(job_id));
  if (!faults.ok()) {
    CountRecoverRejected(method, FaultRankRejection(faults.status()));
    if (int64_t suppressed = 0; BadInputLog::Default().Admit(&suppressed)) {
      LogWarn(kRecoverServiceLog, "ReportProcessFault refused",
              {{"job", job_id}, {"error", faults.status()}, {"suppressed", suppressed}});
    }
    return Answer(
        ctx, method, response, kCodeInvalidRequest,
        absl::StrCat("jobId=", job_id, " invalid faultRanks: ", faults.status().message()));
  }
  return PostReport(ctx, method, job_id, response,
                    recovery::ProcessFaultReported{*std::move(faults)}, std::move(who));
}

// ---- NIC switch (§12) ----

ServerUnaryReactor* RecoverService::SwitchNicTrack(CallbackServerContext* ctx,
                                                   const ::SwitchNics* request,
                                                   ::Status* response) {
  const absl::string_view method = method::kRecoverSwitchNicTrack;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  // An O&M operation on a job (§12/§13) pauses its training: an operator's call.
  auth::Principal who;
  if (absl::Status s = Permit(*ctx, method, auth::kPermNicTrackSwitch, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  absl::StatusOr<recovery::NicSwitchParams> params =
      recovery::CheckSwitchNicRequest(NicOpsOf(*request), bridge_.Topology(job_id));
  if (!params.ok()) {
    CountRecoverRejected(method, "invalid_param");
    LogInfo(kRecoverServiceLog, "SwitchNicTrack refused",
            {{"job", job_id}, {"error", params.status()}});
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid,
                  std::string(params.status().message()));
  }
  return PostReport(ctx, method, job_id, response, recovery::SwitchNicRequested{*std::move(params)},
                    std::move(who));
}

grpc::ServerWriteReactor<::SwitchNicResponse>* RecoverService::SubscribeSwitchNicSignal(
    CallbackServerContext* ctx, const ::SwitchNicRequest* request) {
  if (absl::Status s = Bounded(method::kRecoverSubscribeSwitchNicSignal, *request); !s.ok()) {
    return RefuseStream<::SwitchNicResponse>(method::kRecoverSubscribeSwitchNicSignal,
                                             ToGrpcStatus(s));
  }
  // The result stream of an operator's NIC switch: for the operator that may ask for one.
  if (absl::Status s = OmResultAllowed(*ctx, method::kRecoverSubscribeSwitchNicSignal,
                                       auth::kPermNicTrackSwitch, request->jobid());
      !s.ok()) {
    return RefuseStream<::SwitchNicResponse>(method::kRecoverSubscribeSwitchNicSignal,
                                             ToGrpcStatus(s));
  }
  return OmResultStream<::SwitchNicResponse>(method::kRecoverSubscribeSwitchNicSignal,
                                             request->jobid(), recovery::OmKind::kSwitchNic,
                                             "switch nic", &RecoverySink::OpenSwitchOm);
}

grpc::ServerWriteReactor<::SwitchRankList>* RecoverService::SubscribeNotifySwitch(
    CallbackServerContext* ctx, const ::ClientInfo* request) {
  const absl::string_view method = method::kRecoverSubscribeNotifySwitch;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return RefuseStream<::SwitchRankList>(method, ToGrpcStatus(s));
  }
  const std::string job_id = request->jobid();
  if (absl::Status s = ActForJob(*ctx, method, job_id); !s.ok()) {
    CountRecoverRejected(method, "not_permitted");
    return RefuseStream<::SwitchRankList>(method, ToGrpcStatus(s));
  }
  if (!bridge_.executor().HasJob(job_id)) {
    CountRecoverRejected(method, "unregistered");
    return RefuseStream<::SwitchRankList>(
        method, StreamRefusal(absl::StrCat(NotRegistered(job_id), ", please wait agent register")));
  }
  auto channel = bridge_.sink().OpenNotifySwitch(job_id);
  RecoverySink& sink = bridge_.sink();
  RecordRpc(method, grpc::StatusCode::OK);
  return new ChannelStream<::SwitchRankList>(
      channel, [&sink, job_id, raw = channel.get()](bool) { sink.NotifySwitchDone(job_id, raw); });
}

ServerUnaryReactor* RecoverService::ReplySwitchNicResult(CallbackServerContext* ctx,
                                                         const ::SwitchResult* request,
                                                         ::Status* response) {
  const absl::string_view method = method::kRecoverReplySwitchNicResult;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  const bool result = request->result();
  return PostReport(ctx, method, job_id, response, recovery::SwitchNicResultReplied{result},
                    std::move(who));
}

ServerUnaryReactor* RecoverService::HealthCheck(CallbackServerContext* ctx,
                                                const ::ClientInfo* request, ::Status* response) {
  return Unary(ctx, method::kRecoverHealthCheck, [&] {
    if (absl::Status s = Bounded(method::kRecoverHealthCheck, *request); !s.ok()) {
      return Refuse(response, kCodeInvalidRequest, s);
    }
    if (absl::Status s = ActForJob(*ctx, method::kRecoverHealthCheck, request->jobid()); !s.ok()) {
      CountRecoverRejected(method::kRecoverHealthCheck, "not_permitted");
      return ToGrpcStatus(s);
    }
    response->set_code(0);
    // "HeathCheck" is the spelling real clients receive.
    response->set_info(absl::StrCat("jobId=", request->jobid(), ", receive HeathCheck"));
    return grpc::Status::OK;
  });
}

// ---- stress test (§13) ----

ServerUnaryReactor* RecoverService::StressTest(CallbackServerContext* ctx,
                                               const ::StressTestParam* request,
                                               ::Status* response) {
  const absl::string_view method = method::kRecoverStressTest;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  // An O&M operation on a job (§12/§13) pauses its training: an operator's call.
  auth::Principal who;
  if (absl::Status s = Permit(*ctx, method, auth::kPermStressTest, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  std::vector<int64_t> all_nodes(request->allnodesops().begin(), request->allnodesops().end());
  absl::StatusOr<recovery::StressParams> params = recovery::CheckStressTestRequest(
      StressParamOf(*request), all_nodes, bridge_.Topology(job_id));
  if (!params.ok()) {
    CountRecoverRejected(method, "invalid_param");
    LogInfo(kRecoverServiceLog, "StressTest refused",
            {{"job", job_id}, {"error", params.status()}});
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid,
                  std::string(params.status().message()));
  }
  return PostReport(ctx, method, job_id, response,
                    recovery::StressTestRequested{*std::move(params)}, std::move(who));
}

grpc::ServerWriteReactor<::StressTestResponse>* RecoverService::SubscribeStressTestResponse(
    CallbackServerContext* ctx, const ::StressTestRequest* request) {
  if (absl::Status s = Bounded(method::kRecoverSubscribeStressTestResponse, *request); !s.ok()) {
    return RefuseStream<::StressTestResponse>(method::kRecoverSubscribeStressTestResponse,
                                              ToGrpcStatus(s));
  }
  if (absl::Status s = OmResultAllowed(*ctx, method::kRecoverSubscribeStressTestResponse,
                                       auth::kPermStressTest, request->jobid());
      !s.ok()) {
    return RefuseStream<::StressTestResponse>(method::kRecoverSubscribeStressTestResponse,
                                              ToGrpcStatus(s));
  }
  return OmResultStream<::StressTestResponse>(method::kRecoverSubscribeStressTestResponse,
                                              request->jobid(), recovery::OmKind::kStressTest,
                                              "stress test", &RecoverySink::OpenStressOm);
}

grpc::ServerWriteReactor<::StressTestRankParams>* RecoverService::SubscribeNotifyExecStressTest(
    CallbackServerContext* ctx, const ::ClientInfo* request) {
  const absl::string_view method = method::kRecoverSubscribeNotifyExecStressTest;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return RefuseStream<::StressTestRankParams>(method, ToGrpcStatus(s));
  }
  const std::string job_id = request->jobid();
  if (absl::Status s = ActForJob(*ctx, method, job_id); !s.ok()) {
    CountRecoverRejected(method, "not_permitted");
    return RefuseStream<::StressTestRankParams>(method, ToGrpcStatus(s));
  }
  if (!bridge_.executor().HasJob(job_id)) {
    CountRecoverRejected(method, "unregistered");
    return RefuseStream<::StressTestRankParams>(
        method, StreamRefusal(absl::StrCat(NotRegistered(job_id), ", please wait agent register")));
  }
  auto channel = bridge_.sink().OpenNotifyStress(job_id);
  RecoverySink& sink = bridge_.sink();
  RecordRpc(method, grpc::StatusCode::OK);
  return new ChannelStream<::StressTestRankParams>(
      channel, [&sink, job_id, raw = channel.get()](bool) { sink.NotifyStressDone(job_id, raw); });
}

ServerUnaryReactor* RecoverService::ReplyStressTestResult(CallbackServerContext* ctx,
                                                          const ::StressTestResult* request,
                                                          ::Status* response) {
  const absl::string_view method = method::kRecoverReplyStressTestResult;
  ServerUnaryReactor* refused = nullptr;
  if (!Admit(ctx, method, &refused)) return refused;
  if (absl::Status s = Bounded(method, *request); !s.ok()) {
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid, std::string(s.message()));
  }
  const std::string job_id = request->jobid();
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method, job_id, &who); !s.ok()) {
    return Denied(ctx, method, s);
  }
  if (!bridge_.executor().HasJob(job_id)) {
    CountRecoverRejected(method, "unregistered");
    return Answer(ctx, method, response, recovery::kCodeUnRegistry, NotRegistered(job_id));
  }
  absl::StatusOr<recovery::StressResults> results = ParseStressResults(*request);
  if (!results.ok()) {
    CountRecoverRejected(method, "invalid_param");
    return Answer(ctx, method, response, recovery::kCodeOmParamInvalid,
                  std::string(results.status().message()));
  }
  return PostReport(ctx, method, job_id, response,
                    recovery::StressTestResultReplied{*std::move(results)}, std::move(who));
}

}  // namespace clusterd::server
