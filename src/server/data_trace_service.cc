#include "server/data_trace_service.h"

#include "server/method_names.h"

namespace clusterd::server {

grpc::ServerUnaryReactor* DataTraceService::ModifyTrainingDataTraceSwitch(
    grpc::CallbackServerContext* ctx, const ::DataTypeReq*, ::DataTypeRes*) {
  return Unary(ctx, method::kDataTraceModify,
               [] { return NotImplementedYet(method::kDataTraceModify); });
}

grpc::ServerUnaryReactor* DataTraceService::GetTrainingDataTraceSwitch(
    grpc::CallbackServerContext* ctx, const ::DataStatusReq*, ::DataStatusRes*) {
  return Unary(ctx, method::kDataTraceGet, [] { return NotImplementedYet(method::kDataTraceGet); });
}

grpc::ServerWriteReactor<::DataStatusRes>* DataTraceService::SubscribeDataTraceSwitch(
    grpc::CallbackServerContext*, const ::ProfilingClientInfo*) {
  return RefuseStream<::DataStatusRes>(method::kDataTraceSubscribe,
                                       NotImplementedYet(method::kDataTraceSubscribe));
}

}  // namespace clusterd::server
