#include "server/pub_fault_service.h"

#include "server/method_names.h"

namespace clusterd::server {

grpc::ServerUnaryReactor* PubFaultService::SendPublicFault(grpc::CallbackServerContext* ctx,
                                                           const ::PublicFaultRequest*,
                                                           ::RespStatus*) {
  return Unary(ctx, method::kPubFaultSend, [] { return NotImplementedYet(method::kPubFaultSend); });
}

}  // namespace clusterd::server
