#pragma once

#include "pubfault.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /PubFault/SendPublicFault: public faults from third-party senders (fault-pipeline.md §9).
class PubFaultService final : public ::PubFault::CallbackService, private GatedService {
 public:
  explicit PubFaultService(UnaryGate& gate) : GatedService(gate) {}

  grpc::ServerUnaryReactor* SendPublicFault(grpc::CallbackServerContext* ctx,
                                            const ::PublicFaultRequest* request,
                                            ::RespStatus* response) override;
};

}  // namespace clusterd::server
