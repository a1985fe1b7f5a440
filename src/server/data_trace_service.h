#pragma once

#include "profiling.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /TrainingDataTrace/*: profiling switches per job (jobs-ranktable-diagnosis.md §5).
class DataTraceService final : public ::TrainingDataTrace::CallbackService, private GatedService {
 public:
  explicit DataTraceService(UnaryGate& gate) : GatedService(gate) {}

  grpc::ServerUnaryReactor* ModifyTrainingDataTraceSwitch(grpc::CallbackServerContext* ctx,
                                                          const ::DataTypeReq* request,
                                                          ::DataTypeRes* response) override;
  grpc::ServerUnaryReactor* GetTrainingDataTraceSwitch(grpc::CallbackServerContext* ctx,
                                                       const ::DataStatusReq* request,
                                                       ::DataStatusRes* response) override;
  grpc::ServerWriteReactor<::DataStatusRes>* SubscribeDataTraceSwitch(
      grpc::CallbackServerContext* ctx, const ::ProfilingClientInfo* request) override;
};

}  // namespace clusterd::server
