#include "server/config_service.h"

#include "server/method_names.h"

namespace clusterd::server {

grpc::ServerUnaryReactor* ConfigService::Register(grpc::CallbackServerContext* ctx,
                                                  const ::config::ClientInfo*, ::config::Status*) {
  return Unary(ctx, method::kConfigRegister,
               [] { return NotImplementedYet(method::kConfigRegister); });
}

grpc::ServerWriteReactor<::config::RankTableStream>* ConfigService::SubscribeRankTable(
    grpc::CallbackServerContext*, const ::config::ClientInfo*) {
  return RefuseStream<::config::RankTableStream>(
      method::kConfigSubscribeRankTable, NotImplementedYet(method::kConfigSubscribeRankTable));
}

}  // namespace clusterd::server
