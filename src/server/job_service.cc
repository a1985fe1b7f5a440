#include "server/job_service.h"

#include "server/method_names.h"

namespace clusterd::server {

grpc::ServerUnaryReactor* JobService::Register(grpc::CallbackServerContext* ctx,
                                               const ::job::ClientInfo*, ::job::Status*) {
  return Unary(ctx, method::kJobRegister, [] { return NotImplementedYet(method::kJobRegister); });
}

grpc::ServerWriteReactor<::job::JobSummarySignal>* JobService::SubscribeJobSummarySignal(
    grpc::CallbackServerContext*, const ::job::ClientInfo*) {
  return RefuseStream<::job::JobSummarySignal>(
      method::kJobSubscribeJobSummarySignal,
      NotImplementedYet(method::kJobSubscribeJobSummarySignal));
}

grpc::ServerWriteReactor<::job::JobSummarySignalList>* JobService::SubscribeJobSummarySignalList(
    grpc::CallbackServerContext*, const ::job::ClientInfo*) {
  return RefuseStream<::job::JobSummarySignalList>(
      method::kJobSubscribeJobSummarySignalList,
      NotImplementedYet(method::kJobSubscribeJobSummarySignalList));
}

}  // namespace clusterd::server
