#include "server/grpc_caller.h"

namespace clusterd::server {

auth::Caller CallerOf(const grpc::ServerContextBase& ctx) {
  auth::Caller caller;
  caller.peer = ctx.peer();
  const auto& metadata = ctx.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    caller.authorization.assign(it->second.data(), it->second.size());
  }
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const grpc::string_ref& cn : auth->FindPropertyValues("x509_common_name")) {
      caller.cert_common_name.assign(cn.data(), cn.size());
      break;
    }
  }
  return caller;
}

}  // namespace clusterd::server
