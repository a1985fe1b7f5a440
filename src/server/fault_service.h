#pragma once

#include "fault.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /fault.Fault/*: per-job and cluster-wide fault signals (jobs-ranktable-diagnosis.md §4).
class FaultService final : public ::fault::Fault::CallbackService, private GatedService {
 public:
  explicit FaultService(UnaryGate& gate) : GatedService(gate) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ::fault::ClientInfo* request,
                                     ::fault::Status* response) override;
  grpc::ServerWriteReactor<::fault::FaultMsgSignal>* SubscribeFaultMsgSignal(
      grpc::CallbackServerContext* ctx, const ::fault::ClientInfo* request) override;
  grpc::ServerUnaryReactor* GetFaultMsgSignal(grpc::CallbackServerContext* ctx,
                                              const ::fault::ClientInfo* request,
                                              ::fault::FaultQueryResult* response) override;
};

}  // namespace clusterd::server
