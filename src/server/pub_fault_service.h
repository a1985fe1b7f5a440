#pragma once

#include "cluster/fault_centre.h"
#include "cluster/public_fault_request.h"
#include "pubfault.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /PubFault/SendPublicFault: public faults from third-party senders (fault-pipeline.md §9). The
// request is converted and handed to the fault centre, which applies the per-sender rate limit,
// the validation and the cache semantics; the answer is its {code, info}: 0 accepted, 409
// invalid ("check public fault info failed, error: <reason>"), 410 rate limited.
class PubFaultService final : public ::PubFault::CallbackService, private GatedService {
 public:
  using GatedService::SetAuthorizer;
  using GatedService::SetHandlerPool;
  // `centre` may be null: every request is then answered UNIMPLEMENTED.
  PubFaultService(UnaryGate& gate, cluster::FaultCentre* centre)
      : GatedService(gate), centre_(centre) {}

  grpc::ServerUnaryReactor* SendPublicFault(grpc::CallbackServerContext* ctx,
                                            const ::PublicFaultRequest* request,
                                            ::RespStatus* response) override;

  static cluster::PublicFaultRequest FromProto(const ::PublicFaultRequest& request);

 private:
  cluster::FaultCentre* centre_;
};

}  // namespace clusterd::server
