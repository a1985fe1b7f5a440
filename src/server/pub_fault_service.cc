#include "server/pub_fault_service.h"

#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "server/method_names.h"

namespace clusterd::server {

cluster::PublicFaultRequest PubFaultService::FromProto(const ::PublicFaultRequest& p) {
  cluster::PublicFaultRequest r;
  r.id = p.id();
  r.timestamp = p.timestamp();
  r.version = p.version();
  r.resource = p.resource();
  for (const ::Fault& f : p.faults()) {
    cluster::PublicFaultItem item;
    item.fault_id = f.faultid();
    item.fault_type = f.faulttype();
    item.fault_code = f.faultcode();
    item.fault_time = f.faulttime();
    item.assertion = f.assertion();
    for (const auto& [k, v] : f.faultlocation()) item.fault_location[k] = v;
    for (const ::PubFaultInfo& i : f.influence()) {
      cluster::PublicFaultInfluence inf;
      inf.node_name = i.nodename();
      inf.node_sn = i.nodesn();
      inf.device_ids.assign(i.deviceids().begin(), i.deviceids().end());
      item.influence.push_back(std::move(inf));
    }
    item.description = f.description();
    r.faults.push_back(std::move(item));
  }
  return r;
}

grpc::ServerUnaryReactor* PubFaultService::SendPublicFault(grpc::CallbackServerContext* ctx,
                                                           const ::PublicFaultRequest* request,
                                                           ::RespStatus* response) {
  return Unary(ctx, method::kPubFaultSend, [&] {
    if (centre_ == nullptr) return NotImplementedYet(method::kPubFaultSend);
    if (request == nullptr) {
      response->set_code(cluster::kPubFaultInvalid);
      response->set_info(std::string(cluster::kPubFaultNilInfo));
      return grpc::Status::OK;
    }
    // §9.1's invalid-parameter answer, before the rate limiter and the fault centre's checks
    // (which log the request's id).
    if (absl::Status s = CheckRequestBounds(method::kPubFaultSend, *request); !s.ok()) {
      response->set_code(cluster::kPubFaultInvalid);
      response->set_info(absl::StrCat("check public fault info failed, error: ", s.message()));
      return grpc::Status::OK;
    }
    // A sender is bound to the `resource` names (CCAE, fd, ...) the policy gives it.
    auth::Principal who;
    if (absl::Status s =
            Permit(*ctx, method::kPubFaultSend, auth::kPermPubFaultSend, request->resource(), &who);
        !s.ok()) {
      return ToGrpcStatus(s);
    }
    cluster::PublicFaultVerdict verdict = centre_->SendPublicFault(FromProto(*request));
    AuditCall(*ctx, method::kPubFaultSend, who,
              absl::StrCat(request->resource(), "/", request->id()),
              verdict.code == cluster::kPubFaultOk ? "ok" : "refused",
              absl::StrCat("code=", verdict.code));
    response->set_code(verdict.code);
    response->set_info(verdict.info);
    return grpc::Status::OK;
  });
}

}  // namespace clusterd::server
