#pragma once

#include "job.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /job.Job/*: job summaries for platform agents (jobs-ranktable-diagnosis.md §3).
class JobService final : public ::job::Job::CallbackService, private GatedService {
 public:
  explicit JobService(UnaryGate& gate) : GatedService(gate) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ::job::ClientInfo* request,
                                     ::job::Status* response) override;
  grpc::ServerWriteReactor<::job::JobSummarySignal>* SubscribeJobSummarySignal(
      grpc::CallbackServerContext* ctx, const ::job::ClientInfo* request) override;
  grpc::ServerWriteReactor<::job::JobSummarySignalList>* SubscribeJobSummarySignalList(
      grpc::CallbackServerContext* ctx, const ::job::ClientInfo* request) override;
};

}  // namespace clusterd::server
