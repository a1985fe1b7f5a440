#include "server/fault_service.h"

#include "server/method_names.h"

namespace clusterd::server {

grpc::ServerUnaryReactor* FaultService::Register(grpc::CallbackServerContext* ctx,
                                                 const ::fault::ClientInfo*, ::fault::Status*) {
  return Unary(ctx, method::kFaultRegister,
               [] { return NotImplementedYet(method::kFaultRegister); });
}

grpc::ServerWriteReactor<::fault::FaultMsgSignal>* FaultService::SubscribeFaultMsgSignal(
    grpc::CallbackServerContext*, const ::fault::ClientInfo*) {
  return RefuseStream<::fault::FaultMsgSignal>(
      method::kFaultSubscribeFaultMsgSignal,
      NotImplementedYet(method::kFaultSubscribeFaultMsgSignal));
}

grpc::ServerUnaryReactor* FaultService::GetFaultMsgSignal(grpc::CallbackServerContext* ctx,
                                                          const ::fault::ClientInfo*,
                                                          ::fault::FaultQueryResult*) {
  return Unary(ctx, method::kFaultGetFaultMsgSignal,
               [] { return NotImplementedYet(method::kFaultGetFaultMsgSignal); });
}

}  // namespace clusterd::server
