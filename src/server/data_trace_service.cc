#include "server/data_trace_service.h"

#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "common/log.h"
#include "server/method_names.h"
#include "server/rpc_util.h"

namespace clusterd::server {
namespace {

model::ProfilingSwitch FromProto(const ::ProfilingSwitch& p) {
  return {p.communicationoperator(), p.step(), p.savecheckpoint(), p.fp(), p.dataloader()};
}

void ToProto(const model::ProfilingSwitch& s, ::ProfilingSwitch* p) {
  p->set_communicationoperator(s.communication_operator);
  p->set_step(s.step);
  p->set_savecheckpoint(s.save_checkpoint);
  p->set_fp(s.fp);
  p->set_dataloader(s.data_loader);
}

}  // namespace

DataTraceService::DataTraceService(UnaryGate& gate, cluster::DataTraceSwitches& switches)
    : GatedService(gate), switches_(switches), hub_("data_trace", kPublisherCapacity) {
  switches_.SetNotifier([this](const std::string& job_id, const model::ProfilingSwitch& value) {
    return Notify(job_id, value);
  });
}

absl::Status DataTraceService::Notify(const std::string& job_id,
                                      const model::ProfilingSwitch& value) {
  auto publisher = hub_.Find(job_id);
  if (publisher == nullptr) {
    return absl::NotFoundError(absl::StrCat("publisher for job ", job_id, " not found"));
  }
  ::DataStatusRes message;
  message.set_message(std::string(cluster::kUpdateProfilingSwitch));
  ToProto(value, message.mutable_profilingswitch());
  message.set_code(cluster::kDataTraceOk);
  if (!publisher->Push(std::move(message))) {
    return absl::ResourceExhaustedError(
        absl::StrCat("publisher for job ", job_id, " is full or closed"));
  }
  return absl::OkStatus();
}

void DataTraceService::CloseStreams() {
  hub_.CloseAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
}

grpc::ServerUnaryReactor* DataTraceService::ModifyTrainingDataTraceSwitch(
    grpc::CallbackServerContext* ctx, const ::DataTypeReq* request, ::DataTypeRes* response) {
  return BlockingUnary(ctx, method::kDataTraceModify, [this, ctx, request, response] {
    if (absl::Status s = CheckRequestBounds(method::kDataTraceModify, *request); !s.ok()) {
      return ToGrpcStatus(s);
    }
    // Switching a job's profiling is an operator's call, bound to the jobNsName it may change.
    auth::Principal who;
    if (absl::Status s = Permit(*ctx, method::kDataTraceModify, auth::kPermDataTraceWrite,
                                request->jobnsname(), &who);
        !s.ok()) {
      return ToGrpcStatus(s);
    }
    cluster::DataTraceResult r =
        switches_.Modify(request->jobnsname(), FromProto(request->profilingswitch()));
    AuditCall(*ctx, method::kDataTraceModify, who, request->jobnsname(),
              r.code == cluster::kDataTraceOk ? "ok" : "refused", absl::StrCat("code=", r.code));
    response->set_code(r.code);
    response->set_message(r.message);
    return r.rpc_error ? GoError(r.message, method::kDataTraceModify) : grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* DataTraceService::GetTrainingDataTraceSwitch(
    grpc::CallbackServerContext* ctx, const ::DataStatusReq* request, ::DataStatusRes* response) {
  return Unary(ctx, method::kDataTraceGet, [&] {
    if (absl::Status s = CheckRequestBounds(method::kDataTraceGet, *request); !s.ok()) {
      return ToGrpcStatus(s);
    }
    cluster::DataTraceResult r = switches_.Get(request->jobnsname());
    response->set_code(r.code);
    response->set_message(r.message);
    if (r.code == cluster::kDataTraceOk)
      ToProto(r.profiling_switch, response->mutable_profilingswitch());
    return r.rpc_error ? GoError(r.message, method::kDataTraceGet) : grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<::DataStatusRes>* DataTraceService::SubscribeDataTraceSwitch(
    grpc::CallbackServerContext* ctx, const ::ProfilingClientInfo* request) {
  if (absl::Status s = CheckRequestBounds(method::kDataTraceSubscribe, *request); !s.ok()) {
    return RefuseStream<::DataStatusRes>(method::kDataTraceSubscribe, ToGrpcStatus(s));
  }
  const std::string job_id = request->jobid();
  // A fresh subscription replaces the job's current one (§5.4): only the job's own pods.
  auth::Principal who;
  if (absl::Status s = ActForJob(*ctx, method::kDataTraceSubscribe, job_id, &who); !s.ok()) {
    return RefuseStream<::DataStatusRes>(method::kDataTraceSubscribe, ToGrpcStatus(s));
  }
  const bool known =
      hub_.Find(job_id) != nullptr ||
      (hub_.size() < kMaxPublishers && switches_.SubscriptionAllowed(job_id, request->role()));
  if (job_id.empty() || !known) {
    return RefuseStream<::DataStatusRes>(
        method::kDataTraceSubscribe,
        GoError(absl::StrCat("jobId=", job_id, " not registered, role=", request->role()),
                method::kDataTraceSubscribe));
  }
  RecordRpc(method::kDataTraceSubscribe, grpc::StatusCode::OK);
  auto publisher = hub_.Open(job_id);  // a fresh publisher replaces the old one (§5.4)
  AuditCall(*ctx, method::kDataTraceSubscribe, who, job_id, "ok");
  LogInfo("data-trace-service", "switch subscriber", {{"job", job_id}, {"role", request->role()}});
  return hub_.Subscribe(publisher,
                        [this, job_id, raw = publisher.get()] { hub_.Remove(job_id, raw); });
}

}  // namespace clusterd::server
